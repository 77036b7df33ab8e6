import type { Node } from 'web-tree-sitter';
import type { Word } from './types.js';

/** Called for each $(…), `…`, <(…) or $((…)) met inside a word: the walker reads what it runs. */
export type SubstitutionVisitor = (node: Node) => void;

export const SUBSTITUTIONS: ReadonlySet<string> = new Set(['command_substitution', 'process_substitution', 'arithmetic_expansion']);

/** Collects the parts of one word, remembering whether bash changes it when it runs. */
class WordBuilder {
  text = '';
  staticPrefix: string | undefined;
  glob = false;
  expansion = false;
  several = false;
  private braceAt = -1;

  literal(text: string): void {
    this.text += text;
  }

  /** Unquoted word text: backslashes escape, `*?[` glob, a leading `~` and `{a,b}` expand. */
  unquoted(source: string): void {
    for (let index = 0; index < source.length; index++) {
      const char = source[index] as string;
      if (char === '\\') {
        index++;
        if (index < source.length && source[index] !== '\n') this.text += source[index];
        continue;
      }
      if (char === '*' || char === '?' || char === '[') this.markGlob();
      else if (char === '~' && this.text === '' && this.staticPrefix === undefined) this.dynamic(false);
      else if (char === '{' && this.braceAt < 0) this.braceAt = this.text.length;
      this.text += char;
    }
  }

  dynamic(several: boolean): void {
    this.staticPrefix ??= this.text;
    this.expansion = true;
    this.several ||= several;
  }

  private markGlob(): void {
    this.staticPrefix ??= this.text;
    this.glob = true;
  }

  finish(source: string): Word {
    const braces = this.braceAt >= 0 && (this.text.includes(',', this.braceAt) || this.text.includes('..', this.braceAt));
    if (braces) {
      this.staticPrefix = this.text.slice(0, Math.min(this.braceAt, this.staticPrefix?.length ?? this.braceAt));
      this.dynamic(true);
    }
    if (this.expansion) return { kind: 'expansion', text: source, staticPrefix: this.staticPrefix ?? '', several: this.several };
    if (this.glob) return { kind: 'glob', text: this.text, staticPrefix: this.staticPrefix ?? '' };
    return { kind: 'static', text: this.text };
  }
}

/** The word a node stands for after quote removal, or what is known of it before it runs. */
export function readWord(node: Node, onSubstitution: SubstitutionVisitor): Word {
  const builder = new WordBuilder();
  addPart(node, builder, false, onSubstitution);
  return builder.finish(node.text);
}

function addPart(node: Node, builder: WordBuilder, quoted: boolean, onSubstitution: SubstitutionVisitor): void {
  switch (node.type) {
    case 'word':
      if (quoted) builder.literal(node.text);
      else builder.unquoted(node.text);
      return;
    case 'number':
      builder.literal(node.text);
      return;
    case 'raw_string':
      builder.literal(node.text.slice(1, -1));
      return;
    case 'string':
      addDoubleQuoted(node, builder, onSubstitution);
      return;
    case 'concatenation':
      for (let index = 0; index < node.childCount; index++) {
        const child = node.child(index);
        if (child === null || !child.isNamed) builder.dynamic(true);
        else addPart(child, builder, quoted, onSubstitution);
      }
      return;
    default:
      if (SUBSTITUTIONS.has(node.type)) onSubstitution(node);
      else visitSubstitutionsWithin(node, onSubstitution);
      // $x, ${x}, $(…), $((…)), $'…', $"…", {1..3}: known at run time; unquoted, they may split into several words,
      // and "$@", "${a[@]}", "${!prefix@}" are several words even quoted.
      builder.dynamic((!quoted && node.type !== 'ansi_c_string' && node.type !== 'translated_string') || expandsToSeveral(node));
  }
}

/** `$@`, `${@…}`, `${a[@]…}`, `${!prefix@}`: one word per element, quoted or not. */
function expandsToSeveral(node: Node): boolean {
  if (node.type !== 'simple_expansion' && node.type !== 'expansion') return false;
  return /^\$\{?@|\[@\]|^\$\{!\w*@\}$/.test(node.text);
}

/** Inside "…" only \$ \` \" \\ and \newline are escapes; the rest is literal. */
function addDoubleQuoted(node: Node, builder: WordBuilder, onSubstitution: SubstitutionVisitor): void {
  let covered = 2;
  for (let index = 0; index < node.childCount; index++) {
    const child = node.child(index);
    if (child === null || child.type === '"') continue;
    covered += child.text.length;
    if (child.type === 'string_content') builder.literal(unescapeDoubleQuoted(child.text));
    else addPart(child, builder, true, onSubstitution);
  }
  // Text the grammar left out of every child (a lone `$`) is not understood: known only at run time.
  if (covered !== node.text.length) builder.dynamic(false);
}

function unescapeDoubleQuoted(text: string): string {
  if (!text.includes('\\')) return text;
  let result = '';
  for (let index = 0; index < text.length; index++) {
    const char = text[index] as string;
    const next = text[index + 1];
    if (char === '\\' && next !== undefined && '$`"\\\n'.includes(next)) {
      if (next !== '\n') result += next;
      index++;
    } else result += char;
  }
  return result;
}

/** ${x:-$(cmd)} and $(( $(cmd) )) hide substitutions one level down. */
export function visitSubstitutionsWithin(node: Node, onSubstitution: SubstitutionVisitor): void {
  for (let index = 0; index < node.childCount; index++) {
    const child = node.child(index);
    if (child === null) continue;
    if (SUBSTITUTIONS.has(child.type)) onSubstitution(child);
    else if (child.childCount > 0) visitSubstitutionsWithin(child, onSubstitution);
  }
}
