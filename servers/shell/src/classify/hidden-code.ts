import type { Node } from 'web-tree-sitter';
import type { Word } from './types.js';

/** Arithmetic comparisons of [[ ]]: bash evaluates each operand, and a[$(cmd)] in it runs cmd. */
const ARITHMETIC_TESTS = new Set(['-eq', '-ne', '-lt', '-le', '-gt', '-ge']);
/** -v and -R take a variable name, whose subscript bash evaluates: -v 'a[$(cmd)]' runs cmd. */
const NAME_TESTS = new Set(['-v', '-R']);
const PLAIN_INTEGER = /^[0-9]+$/;
/** ${x@P} expands prompt escapes (\$(…) runs), @E backslash escapes, @A @K @a print code or attributes meant to be evaluated. */
const EVALUATING_TRANSFORMATION = /@[PEAKa]\}$/;
/** ${x:offset:length} evaluates offset and length as arithmetic (`${x:-…}`, `${x:=…}`, `${x:?…}`, `${x:+…}` do not). */
const SUBSTRING = /^\$\{(?:\w+|[@*#?$!-])(?:\[[^\]]*\])?:(?![-=?+])(.*)\}$/s;
const PLAIN_SUBSTRING = /^ *-? *[0-9]+ *(: *-? *[0-9]+ *)?$/;
/** Leaves whose text bash reads again: a substitution in it the grammar did not show still runs. */
const UNQUOTED_TEXT = ['word', 'regex', 'extglob_pattern'];
const QUOTED_TEXT = ['string_content', 'heredoc_content'];

/**
 * Places where bash runs code that the syntax tree does not show as a command: a substitution the
 * grammar read as plain text (${x:-`id`}), or a string bash evaluates as arithmetic or a variable
 * name, whose array subscript may hold $(…). Returns why, or undefined.
 */
export function hiddenCode(root: Node, line: string): string | undefined {
  if (/`|\$\(|[<>]\(/.test(line)) {
    for (const node of root.descendantsOfType(UNQUOTED_TEXT)) {
      if (node !== null && hidesSubstitution(node.text, true)) return `\`${node.text}\` holds a substitution the parser does not show`;
    }
    for (const node of root.descendantsOfType(QUOTED_TEXT)) {
      if (node !== null && hidesSubstitution(node.text, false)) return `\`${node.text}\` holds a substitution the parser does not show`;
    }
    // In "${x:-'…'}" the single quotes are plain characters: what is between them still runs.
    for (const node of root.descendantsOfType(['raw_string', 'ansi_c_string'])) {
      if (node !== null && withinDoubleQuotes(node) && hidesSubstitution(node.text, false)) return `\`${node.text}\` is not quoted inside "…": its substitution runs`;
    }
  }
  if (line.includes('$') || line.includes('_')) {
    for (const node of root.descendantsOfType(['expansion', 'special_variable_name', 'variable_name', 'subscript'])) {
      const why = node === null ? undefined : evaluatedExpansion(node);
      if (why !== undefined) return why;
    }
  }
  if (line.includes('[')) {
    for (const test of root.descendantsOfType('test_command')) {
      const why = test === null ? undefined : evaluatedTest(test);
      if (why !== undefined) return why;
    }
  }
  return undefined;
}

function evaluatedExpansion(node: Node): string | undefined {
  const text = node.text;
  if (node.type === 'special_variable_name' || node.type === 'variable_name') {
    // $_ is the last argument of the previous command: a string the line chose, fed to ${!_}, ${_@P} or (( _ )).
    return text === '_' ? '`$_` repeats an argument of the previous command, to be evaluated by what follows' : undefined;
  }
  if (node.type === 'subscript') {
    const index = node.childForFieldName('index')?.text ?? '';
    return PLAIN_INTEGER.test(index) || index === '@' || index === '*' ? undefined : `the array subscript \`${text}\` is evaluated as arithmetic`;
  }
  if (text.startsWith('${!')) return `\`${text}\` is an indirect expansion: bash evaluates the name it holds`;
  if (EVALUATING_TRANSFORMATION.test(text)) return `\`${text}\` makes bash evaluate the value`;
  const bounds = SUBSTRING.exec(text)?.[1];
  return bounds !== undefined && !PLAIN_SUBSTRING.test(bounds) ? `the substring bounds in \`${text}\` are evaluated as arithmetic` : undefined;
}

/** [[ ]] evaluates arithmetic operands; [[ ]] and [ ] evaluate the subscript of a name given to -v or -R. */
function evaluatedTest(test: Node): string | undefined {
  const double = test.child(0)?.type === '[[';
  for (const node of test.descendantsOfType(['unary_expression', 'binary_expression', 'word'])) {
    if (node === null) continue;
    // [ * ] may expand to `-v` and a name with a subscript; [[ ]] does not expand globs.
    if (node.type === 'word') {
      if (!double && isGlob(node.text)) return `the glob \`${node.text}\` may expand to -v and a variable name whose subscript [ evaluates`;
      continue;
    }
    const operator = node.childForFieldName('operator');
    if (operator?.type !== 'test_operator') continue;
    if (node.type === 'unary_expression' && NAME_TESTS.has(operator.text)) return `${operator.text} evaluates the subscript of the variable name it tests`;
    if (node.type === 'binary_expression' && double && ARITHMETIC_TESTS.has(operator.text)) {
      for (const side of ['left', 'right']) {
        const operand = node.childForFieldName(side);
        if (operand === null || !PLAIN_INTEGER.test(operand.text) || (operand.type !== 'number' && operand.type !== 'word')) {
          return `[[ ${operator.text} ]] evaluates \`${operand?.text ?? ''}\` as arithmetic: only plain integers are read here`;
        }
      }
    }
  }
  return undefined;
}

/** Whether the nearest enclosing string or substitution is a double-quoted string. */
function withinDoubleQuotes(node: Node): boolean {
  for (let parent = node.parent; parent !== null; parent = parent.parent) {
    if (parent.type === 'string') return true;
    if (parent.type === 'command_substitution' || parent.type === 'process_substitution') return false;
  }
  return false;
}

function isGlob(text: string): boolean {
  for (let index = 0; index < text.length; index++) {
    const char = text[index] as string;
    if (char === '\\') index++;
    else if ('*?['.includes(char)) return true;
  }
  return false;
}

/** A backquote or $( (and in unquoted text <( or >() that no backslash escapes. */
function hidesSubstitution(text: string, unquoted: boolean): boolean {
  for (let index = 0; index < text.length; index++) {
    const char = text[index];
    if (char === '\\') index++;
    else if (char === '`') return true;
    else if (text[index + 1] === '(' && (char === '$' || (unquoted && (char === '<' || char === '>')))) return true;
  }
  return false;
}

/** test and [ with -v or -R evaluate a subscript of the name; a glob may expand to `-v` and such a name. */
export function testEvaluation(args: readonly Word[]): string | undefined {
  for (const word of args) {
    if (word.kind === 'static' && NAME_TESTS.has(word.text)) return `test ${word.text} evaluates the subscript of the variable name it tests`;
    if (word.kind === 'glob') return `the glob \`${word.text}\` may expand to -v and a variable name whose subscript test evaluates`;
  }
  return undefined;
}
