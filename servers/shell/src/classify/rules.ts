import { basename } from 'node:path';
import type { Node, Parser } from 'web-tree-sitter';
import { mayBeOption, type ParsedCommand, type Word } from './types.js';
import { readWord } from './words.js';

/**
 * A policy command pattern (allow_commands, deny_commands), read with the bash grammar like a
 * command: `npm test`, `git push *`, `rm -rf *`. Each word matches one argument, `*` inside a
 * word matches any characters, and a final lone `*` matches any further arguments (or none).
 */
export interface CommandRule {
  readonly text: string;
  readonly words: readonly RegExp[];
  readonly anyFurther: boolean;
  /** For deny rules: the rule's options, one letter or long option each, spelled as `spelling` gives them. */
  readonly options: readonly string[];
  /** For deny rules: the words after the name that are not options, matched in order. */
  readonly operands: readonly RegExp[];
  readonly spelling: OptionSpelling;
}

/** One spelling for options that mean the same to a command: `rm -R`, `rm --recursive` and `rm -r`. */
type OptionSpelling = Readonly<Record<string, string>>;

const RM_SPELLING: OptionSpelling = { '-R': '-r', '--recursive': '-r', '--force': '-f' };
const SPELLINGS: Readonly<Record<string, OptionSpelling>> = {
  rm: RM_SPELLING,
  cp: RM_SPELLING,
  mv: { '--force': '-f' },
  git: { '--force': '-f' },
};

/** Reads a policy pattern with the bash grammar; throws when it is not one plain command. */
export function readRule(parser: Parser, text: string): CommandRule {
  const tree = parser.parse(text);
  try {
    const root = tree?.rootNode;
    const command = root?.namedChildCount === 1 ? root.namedChild(0) : null;
    if (root === undefined || root.hasError || command?.type !== 'command') throw new Error(`command rule "${text}" is not one plain command`);
    const words: Word[] = [];
    for (let index = 0; index < command.namedChildCount; index++) {
      const child = command.namedChild(index) as Node;
      const wordNode = child.type === 'command_name' ? child.namedChild(0) : child;
      if (wordNode === null || child.type === 'variable_assignment' || child.type.endsWith('redirect')) throw new Error(`command rule "${text}" is not one plain command`);
      words.push(readWord(wordNode, () => {
        throw new Error(`command rule "${text}" contains a substitution`);
      }));
    }
    return compileRule(text, words);
  } finally {
    tree?.delete();
  }
}

function compileRule(text: string, words: readonly Word[]): CommandRule {
  if (words.length === 0) throw new Error(`command rule "${text}" names no command`);
  const dynamic = words.find((word) => word.kind === 'expansion');
  if (dynamic !== undefined) throw new Error(`command rule "${text}": \`${dynamic.text}\` is an expansion; rules hold plain words and * globs`);
  const last = words[words.length - 1];
  const anyFurther = words.length > 1 && last?.text === '*';
  const significant = anyFurther ? words.slice(0, -1) : words;
  const spelling = SPELLINGS[words[0]?.text ?? ''] ?? {};
  const options: string[] = [];
  const operands: RegExp[] = [];
  for (const word of significant.slice(1)) {
    if (word.kind === 'static' && isOption(word.text)) options.push(...spelledOptions(word.text, spelling));
    else operands.push(globPattern(word.text));
  }
  return { text, words: significant.map((word) => globPattern(word.text)), anyFurther, options, operands, spelling };
}

function isOption(text: string): boolean {
  return text.startsWith('-') && text !== '-' && text !== '--';
}

/** `-rf` is `-r` and `-f`; `--recursive` is `-r` for rm; a GNU abbreviation (`--recur`) counts as the long option it starts. */
function spelledOptions(text: string, spelling: OptionSpelling): string[] {
  if (text.startsWith('--')) {
    const name = text.split('=', 1)[0] as string;
    const spelled = spelling[name] ?? Object.entries(spelling).find(([long]) => long.startsWith(name) && name.length > 3)?.[1];
    return spelled === undefined ? [text, name] : [spelled];
  }
  return [...text.slice(1)].map((letter) => spelling[`-${letter}`] ?? `-${letter}`);
}

function globPattern(glob: string): RegExp {
  const escaped = glob.split('*').map((part) => part.replace(/[.+?^${}()|[\]\\/-]/g, '\\$&'));
  return new RegExp(`^${escaped.join('.*')}$`, 's');
}

/** Allow rules match static commands only, word for word (more words only with a final `*`). */
export function allows(rule: CommandRule, command: ParsedCommand): boolean {
  const { words } = command;
  if (words.length < rule.words.length) return false;
  if ((words.length > rule.words.length || command.argumentsFromInput) && !rule.anyFurther) return false;
  return rule.words.every((pattern, index) => {
    const word = words[index] as Word;
    return word.kind === 'static' && pattern.test(word.text);
  });
}

/**
 * Deny rules match the command name, then options as a set (`rm -r -f x` and `rm -fr x` are
 * `rm -rf *`), then the rule's other words in order against a prefix of the command's other words.
 * Whatever is only known at run time matches conservatively (`possible`): `$CMD -rf /` and
 * `rm $ARGS` may be `rm -rf /`. The name also matches by its last path component (/bin/rm is rm).
 */
export function denyMatch(rule: CommandRule, command: ParsedCommand): 'certain' | 'possible' | undefined {
  const [name, ...args] = command.words;
  const namePattern = rule.words[0] as RegExp;
  if (name === undefined) return command.argumentsFromInput ? 'possible' : undefined;
  if (name.kind === 'glob' || (name.kind === 'expansion' && name.several)) return 'possible';
  let certain = name.kind === 'static';
  if (name.kind === 'static' && !namePattern.test(basename(name.text)) && !namePattern.test(name.text)) return undefined;
  const given = new Set<string>();
  const operands: Word[] = [];
  // xargs' input and words known only at run time may add any option.
  let optionsUnseen = command.argumentsFromInput;
  let optionsEnded = false;
  for (const word of args) {
    if (word.kind === 'static' && !optionsEnded && word.text === '--') optionsEnded = true;
    else if (word.kind === 'static' && !optionsEnded && isOption(word.text)) {
      for (const option of spelledOptions(word.text, rule.spelling)) given.add(option);
    } else {
      if (!optionsEnded && mayBeOption(word)) optionsUnseen = true;
      operands.push(word);
    }
  }
  for (const option of rule.options) {
    if (given.has(option) || [...given].some((abbreviation) => abbreviation.startsWith('--') && abbreviation.length > 3 && option.startsWith(abbreviation))) continue;
    if (!optionsUnseen) return undefined;
    certain = false;
  }
  for (let index = 0; index < rule.operands.length; index++) {
    const word = operands[index];
    if (word === undefined) return command.argumentsFromInput ? 'possible' : undefined;
    if (word.kind === 'glob' || (word.kind === 'expansion' && word.several)) return 'possible';
    if (word.kind === 'expansion') certain = false;
    else if (!(rule.operands[index] as RegExp).test(word.text)) return undefined;
  }
  return certain ? 'certain' : 'possible';
}

/** Project command patterns match static words as a prefix: `just` covers `just build`. */
export function matchesPrefix(rule: CommandRule, command: ParsedCommand): boolean {
  return rule.words.every((pattern, index) => {
    const word = command.words[index];
    return word?.kind === 'static' && pattern.test(word.text);
  });
}
