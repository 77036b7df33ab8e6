import { basename } from 'node:path';
import type { Node, Parser } from 'web-tree-sitter';
import type { ParsedCommand, Word } from './types.js';
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
}

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
  const patterns = (anyFurther ? words.slice(0, -1) : words).map((word) => globPattern(word.text));
  return { text, words: patterns, anyFurther };
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
 * Deny rules match a prefix of the command. Whatever is only known at run time matches
 * conservatively (`possible`): `$CMD -rf /` and `rm $ARGS` may be `rm -rf /`. The name also
 * matches by its last path component (/bin/rm is rm).
 */
export function denyMatch(rule: CommandRule, command: ParsedCommand): 'certain' | 'possible' | undefined {
  const { words } = command;
  let certain = true;
  for (let index = 0; index < rule.words.length; index++) {
    const word = words[index];
    const pattern = rule.words[index] as RegExp;
    if (word === undefined) return command.argumentsFromInput ? 'possible' : undefined;
    if (word.kind === 'glob' || (word.kind === 'expansion' && word.several)) return 'possible';
    if (word.kind === 'expansion') {
      certain = false;
      continue;
    }
    const text = index === 0 ? basename(word.text) : word.text;
    if (!pattern.test(text) && !pattern.test(word.text)) return undefined;
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
