import { scanOptions, type OptionRules } from './options.js';
import { sedScriptDanger } from './sed.js';
import { high, type Verdict, type Word } from './types.js';

/** No option or operand of these writes, runs a program or changes state. */
const PLAIN: readonly string[] = [
  'ls', 'cat', 'head', 'tail', 'wc', 'grep', 'egrep', 'fgrep', 'pwd', 'echo', 'true', 'false', ':', 'which', 'type',
  'basename', 'dirname', 'realpath', 'readlink', 'stat', 'du', 'df', 'cut', 'tr', 'nl', 'rev', 'column', 'comm', 'join',
  'paste', 'fold', 'expand', 'unexpand', 'od', 'hexdump', 'md5sum', 'sha1sum', 'sha224sum', 'sha256sum', 'sha384sum',
  'sha512sum', 'b2sum', 'cksum', 'base64', 'base32', 'tac', 'strings', 'seq', 'test', '[', 'id', 'whoami', 'groups',
  'uname', 'nproc', 'uptime', 'printenv', 'locale', 'diff', 'cmp', 'sleep', 'jq', 'free', 'ps',
];

/** Read-only unless one of these options or operands turns up. */
const WITH_RULES: Readonly<Record<string, OptionRules>> = {
  find: { forbiddenWords: ['-exec', '-execdir', '-ok', '-okdir', '-delete', '-fprint', '-fprint0', '-fprintf', '-fls'] },
  rg: { forbiddenLong: ['--pre', '--hostname-bin'] },
  ag: { forbiddenLong: ['--pager'] },
  fd: { forbiddenShort: 'xX', forbiddenLong: ['--exec', '--exec-batch'], shortWithValue: 'dEeStcjo' },
  sort: { forbiddenShort: 'o', forbiddenLong: ['--output', '--compress-program'], shortWithValue: 'kSTt', abbreviated: true },
  // tree reads on through a cluster past a value letter (-Lo 1 out.txt is -L 1 -o out.txt): every letter of every option word counts.
  tree: { forbiddenShort: 'oR' },
  file: { forbiddenShort: 'C', forbiddenLong: ['--compile'], shortWithValue: 'eFmfP', abbreviated: true },
  uniq: { maxOperands: 1, shortWithValue: 'fsw', operandsWhy: 'a second operand is the file uniq writes' },
  xxd: { maxOperands: 1, shortWithValue: 'cglosn', operandsWhy: 'a second operand is the file xxd writes' },
  date: { forbiddenShort: 's', forbiddenLong: ['--set'], shortWithValue: 'dfr', shortWithAttachedValue: 'I', abbreviated: true },
  hostname: { forbiddenShort: 'Fb', forbiddenLong: ['--file', '--boot'], maxOperands: 0, operandsWhy: 'an operand sets the host name', abbreviated: true },
  printf: { forbiddenShort: 'v' },
};

const AWKS = new Set(['awk', 'gawk', 'mawk', 'nawk']);
/** Parts of an awk program that run commands, write files or load code (`>` also compares: counted anyway). */
const AWK_DANGERS = ['system', '|', '>', 'getline', '@'];

/** The verdict for a command on the read-only list, or undefined when it is not on it. */
export function readOnlyVerdict(name: string, args: readonly Word[], argumentsFromInput: boolean): Verdict | undefined {
  if (PLAIN.includes(name)) return { tier: 'low', readOnly: true, reason: `${name} only reads` };
  const rules = WITH_RULES[name];
  if (rules !== undefined) {
    const { problem, operands } = scanOptions(args, rules, argumentsFromInput);
    if (name === 'date' && problem === undefined && operands.some((word) => !word.text.startsWith('+'))) {
      return high('date with an operand other than +FORMAT sets the clock');
    }
    return problem === undefined ? { tier: 'low', readOnly: true, reason: `${name} only reads` } : high(`${name} ${problem}: not read-only`);
  }
  if (AWKS.has(name)) return awkVerdict(name, args, argumentsFromInput);
  return undefined;
}

/** awk is a whole language; only a visible program without commands, pipes or redirections reads. */
function awkVerdict(name: string, args: readonly Word[], argumentsFromInput: boolean): Verdict {
  let index = 0;
  for (; index < args.length; index++) {
    const word = args[index] as Word;
    if (word.kind !== 'static') return high(`${name}: \`${word.text}\` may be an option or the program`);
    if (word.text === '--') {
      index++;
      break;
    }
    if (!word.text.startsWith('-')) break;
    if (word.text === '-F' || word.text === '-v') index++;
    else if (!word.text.startsWith('-F') && !word.text.startsWith('-v')) return high(`${name} ${word.text}: options other than -F and -v may load or run code`);
  }
  const program = args[index];
  if (program === undefined || program.kind !== 'static') return high(`${name}: the program is not visible in the command`);
  const danger = AWK_DANGERS.find((part) => program.text.includes(part));
  if (danger !== undefined) return high(`${name} program contains \`${danger}\`: it may run commands or write files`);
  // gawk opens a file named /inet/tcp/… or /inet/udp/… as a network connection.
  if (argumentsFromInput) return high(`${name}: its input names files, which may be gawk's /inet network connections`);
  const network = args.slice(index + 1).find((word) => word.text.startsWith('/inet'));
  if (network !== undefined) return high(`${name} ${network.text}: gawk opens /inet files as network connections`);
  return { tier: 'low', readOnly: true, reason: `${name} program only reads` };
}

export interface SedCall {
  /** The files sed -i rewrites; undefined when sed only prints. */
  readonly inPlaceFiles?: readonly Word[];
  readonly problem?: string;
}

const SED_VALUE_SHORT = 'efl';
const SED_FLAGS = 'nErsuzb';
const SED_LONG = ['--quiet', '--silent', '--regexp-extended', '--posix', '--debug', '--sandbox', '--separate', '--unbuffered', '--null-data', '--follow-symlinks', '--line-length'];

/** sed reads unless -i, a script that runs or writes (e, w), or a script file nobody can see. */
export function sedCall(args: readonly Word[], argumentsFromInput: boolean): SedCall {
  if (argumentsFromInput) return { problem: 'its input adds arguments, which may be options such as -i' };
  const scripts: Word[] = [];
  const operands: Word[] = [];
  let inPlace = false;
  let optionsEnded = false;
  for (let index = 0; index < args.length; index++) {
    const word = args[index] as Word;
    if (word.kind !== 'static') {
      if (!optionsEnded && (word.staticPrefix === '' || word.staticPrefix.startsWith('-'))) return { problem: `\`${word.text}\` may expand to an option` };
      operands.push(word);
      continue;
    }
    const text = word.text;
    if (optionsEnded || !text.startsWith('-') || text === '-') operands.push(word);
    else if (text === '--') optionsEnded = true;
    else if (text.startsWith('--')) {
      const [name = '', value] = text.split('=', 2);
      if ('--in-place'.startsWith(name) && name.length > 2) inPlace = true;
      else if ('--expression'.startsWith(name) && name.length > 2) {
        const script = value === undefined ? args[++index] : { kind: 'static' as const, text: value };
        if (script !== undefined) scripts.push(script);
      } else if ('--file'.startsWith(name) && name.length > 2) return { problem: 'the script comes from a file (-f)' };
      else if (!SED_LONG.includes(name)) return { problem: `${text}: an option this check does not know` };
    } else {
      for (let at = 1; at < text.length; at++) {
        const letter = text[at] as string;
        if (letter === 'i') {
          inPlace = true;
          break;
        }
        if (letter === 'f') return { problem: 'the script comes from a file (-f)' };
        if (SED_VALUE_SHORT.includes(letter)) {
          const attached = text.slice(at + 1);
          const value = attached === '' ? args[++index] : { kind: 'static' as const, text: attached };
          if (letter === 'e' && value !== undefined) scripts.push(value);
          break;
        }
        if (!SED_FLAGS.includes(letter)) return { problem: `-${letter}: an option this check does not know` };
      }
    }
  }
  if (scripts.length === 0) {
    const first = operands.shift();
    if (first !== undefined) scripts.push(first);
  }
  for (const script of scripts) {
    if (script.kind !== 'static') return { problem: `the script \`${script.text}\` is only known when it runs` };
    const danger = sedScriptDanger(script.text);
    if (danger !== undefined) return { problem: danger };
  }
  return inPlace ? { inPlaceFiles: operands } : {};
}
