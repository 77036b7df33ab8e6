import { mayBeOption, type Word } from './types.js';

/** What in a command's arguments stops it from only reading. */
export interface OptionRules {
  /** Whole words that are dangerous wherever they stand (find's -exec, -delete…). */
  readonly forbiddenWords?: readonly string[];
  readonly forbiddenLong?: readonly string[];
  /** Short option letters, also found inside clusters such as -uo. */
  readonly forbiddenShort?: string;
  /** Short option letters that take a value: the rest of the cluster, or the next word. */
  readonly shortWithValue?: string;
  /** Short option letters whose optional value can only be the rest of the cluster (date -Iseconds; -I --set=… is two options). */
  readonly shortWithAttachedValue?: string;
  /** GNU getopt_long and git accept unambiguous prefixes: --out means --output. */
  readonly abbreviated?: boolean;
  /** Real options that happen to be prefixes of forbidden ones (git diff --text). */
  readonly harmless?: readonly string[];
  /** Past this many operands the command writes or sets something (uniq IN OUT, date MMDDhhmm). */
  readonly maxOperands?: number;
  readonly operandsWhy?: string;
}

export interface OptionScan {
  /** Operands, in order (option values excluded). */
  readonly operands: readonly Word[];
  /** Why the arguments are not read-only, when they are not. */
  readonly problem?: string;
}

/** Walks the arguments like the command's own option parser would, as far as safety needs. */
export function scanOptions(args: readonly Word[], rules: OptionRules, argumentsFromInput: boolean): OptionScan {
  const hasForbidden = rules.forbiddenWords !== undefined || rules.forbiddenLong !== undefined || rules.forbiddenShort !== undefined;
  const operands: Word[] = [];
  if (argumentsFromInput && (hasForbidden || rules.maxOperands !== undefined)) {
    return { operands, problem: 'its input adds arguments, which may be options' };
  }
  let optionsEnded = false;
  for (let index = 0; index < args.length; index++) {
    const word = args[index] as Word;
    if (word.kind !== 'static') {
      if (hasForbidden && (rules.forbiddenWords !== undefined || !optionsEnded) && mayBeOption(word)) {
        return { operands, problem: `\`${word.text}\` may expand to an option` };
      }
      // A glob, brace expansion, unquoted $x or "$@" counts as any number of operands: `uniq *` with two files writes the second.
      if (rules.maxOperands !== undefined && (word.kind === 'glob' || word.several)) {
        return { operands, problem: `\`${word.text}\` may expand to several operands` };
      }
      operands.push(word);
      continue;
    }
    const text = word.text;
    if (rules.forbiddenWords?.includes(text)) return { operands, problem: text };
    if (optionsEnded || !text.startsWith('-') || text === '-') {
      operands.push(word);
      continue;
    }
    if (text === '--') {
      optionsEnded = true;
      continue;
    }
    if (text.startsWith('--')) {
      const name = text.split('=', 1)[0] as string;
      if (isForbiddenLong(name, rules)) return { operands, problem: text };
      continue;
    }
    for (let at = 1; at < text.length; at++) {
      const letter = text[at] as string;
      if (rules.forbiddenShort?.includes(letter)) return { operands, problem: `-${letter}` };
      if (rules.shortWithAttachedValue?.includes(letter)) break;
      if (rules.shortWithValue?.includes(letter)) {
        if (at === text.length - 1) index++;
        break;
      }
    }
  }
  if (rules.maxOperands !== undefined && operands.length > rules.maxOperands) {
    return { operands, problem: rules.operandsWhy ?? `more than ${rules.maxOperands} operands` };
  }
  return { operands };
}

function isForbiddenLong(name: string, rules: OptionRules): boolean {
  return (rules.forbiddenLong ?? []).some(
    (forbidden) => forbidden === name || (rules.abbreviated === true && name.length > 2 && forbidden.startsWith(name) && !rules.harmless?.includes(name)),
  );
}
