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
  date: { forbiddenShort: 's', forbiddenLong: ['--set'], shortWithValue: 'dfr', shortWithAttachedValue: 'I', abbreviated: true },
  hostname: { forbiddenShort: 'Fb', forbiddenLong: ['--file', '--boot'], maxOperands: 0, operandsWhy: 'an operand sets the host name', abbreviated: true },
  printf: { forbiddenShort: 'v' },
};

/** xxd's options that take the next word (xxd matches `-c` and `-cols` exactly; `-c8` is attached). */
const XXD_VALUE_WORDS = new Set(['-c', '-cols', '-g', '-groupsize', '-l', '-len', '-o', '-s', '-seek', '-n', '-name', '-R']);

/**
 * xxd [options] [infile [outfile]] writes its second operand. Its own parser reads each option
 * word whole (`-pc` is -p, no cluster) and stops at the first operand: `xxd in -p` writes a file named -p.
 */
function xxdVerdict(args: readonly Word[], argumentsFromInput: boolean): Verdict {
  if (argumentsFromInput) return high('xxd: its input adds arguments, and a second operand is the file xxd writes');
  let index = 0;
  for (; index < args.length; index++) {
    const word = args[index] as Word;
    if (word.kind !== 'static') return high(`xxd: \`${word.text}\` may expand to several words or an option, and a second operand is the file xxd writes`);
    if (word.text === '--') {
      index++;
      break;
    }
    if (!word.text.startsWith('-') || word.text === '-') break;
    if (XXD_VALUE_WORDS.has(word.text)) index++;
  }
  const operands = args.slice(index);
  if (operands.length > 1) return high('xxd: a second operand is the file xxd writes');
  if (operands.some((word) => word.kind !== 'static')) return high(`xxd: \`${operands[0]?.text ?? ''}\` may expand to several operands, and a second one is the file xxd writes`);
  return { tier: 'low', readOnly: true, reason: 'xxd only reads' };
}

const AWKS = new Set(['awk', 'gawk', 'mawk', 'nawk']);
/** Parts of an awk program that run commands, write files or load code (`>` also compares: counted anyway). */
const AWK_DANGERS = ['system', '|', '>', 'getline', '@'];
const AWK_NETWORK = ['/inet', 'ARGV', 'ARGC'];

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
  if (name === 'xxd') return xxdVerdict(args, argumentsFromInput);
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
  // gawk opens an input file named /inet/… as a connection, also one the program puts in ARGV.
  const network = AWK_NETWORK.find((part) => program.text.includes(part) || args.slice(0, index).some((word) => word.text.includes(part)));
  if (network !== undefined) return high(`${name} program or variable contains \`${network}\`: gawk may open it as a network connection`);
  if (danger !== undefined) return high(`${name} program contains \`${danger}\`: it may run commands or write files`);
  // gawk opens a file named /inet/tcp/… or /inet/udp/… as a network connection.
  if (argumentsFromInput) return high(`${name}: its input names files, which may be gawk's /inet network connections`);
  const file = args.slice(index + 1).find((word) => word.text.startsWith('/inet') || (word.kind === 'expansion' && '/inet'.startsWith(word.staticPrefix.slice(0, 5))));
  if (file !== undefined) return high(`${name} ${file.text}: gawk opens /inet files as network connections`);
  return { tier: 'low', readOnly: true, reason: `${name} program only reads` };
}

export interface SedCall {
  /** The files sed -i rewrites; undefined when sed only prints. */
  readonly inPlaceFiles?: readonly Word[];
  readonly problem?: string;
}

/** GNU sed's short options: -e SCRIPT, -f FILE, -l N take a value; -i[SUFFIX] an attached one. */
const SED_VALUE_SHORT = 'efl';
const SED_FLAGS = 'nErsuzb';
/** GNU sed 4.9's long options and whether each takes a value ('optional': only as --name=value). */
const SED_LONG: Readonly<Record<string, 'none' | 'required' | 'optional'>> = {
  '--quiet': 'none', '--silent': 'none', '--regexp-extended': 'none', '--posix': 'none', '--debug': 'none', '--sandbox': 'none',
  '--separate': 'none', '--unbuffered': 'none', '--null-data': 'none', '--zero-terminated': 'none', '--follow-symlinks': 'none',
  '--binary': 'none', '--line-length': 'required', '--expression': 'required', '--file': 'required', '--in-place': 'optional',
};

/** The long option `name` stands for (getopt_long takes an unambiguous prefix), or why not. */
function sedLongOption(name: string): string | { problem: string } {
  if (SED_LONG[name] !== undefined) return name;
  const matches = Object.keys(SED_LONG).filter((option) => option.startsWith(name));
  if (matches.length === 1 && name.length > 2) return matches[0] as string;
  return { problem: `${name}: an option this check does not know` };
}

/** sed reads unless -i, a script that runs, writes or reads a named file (e, w, W, r, R), or a script file nobody can see. */
export function sedCall(args: readonly Word[], argumentsFromInput: boolean): SedCall {
  if (argumentsFromInput) return { problem: 'its input adds arguments, which may be options such as -i' };
  const scripts: Word[] = [];
  const operands: Word[] = [];
  let inPlace = false;
  let optionsEnded = false;
  // GNU getopt permutes: an option after the script or a file still counts (sed p f -i).
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
      const equals = text.indexOf('=');
      const option = sedLongOption(equals < 0 ? text : text.slice(0, equals));
      if (typeof option !== 'string') return option;
      const attached = equals < 0 ? undefined : text.slice(equals + 1);
      if (attached !== undefined && SED_LONG[option] === 'none') return { problem: `${text}: ${option} takes no value` };
      const value = attached ?? (SED_LONG[option] === 'required' ? args[++index] : undefined);
      if (SED_LONG[option] === 'required' && value === undefined) return { problem: `${option} without its value` };
      if (option === '--in-place') inPlace = true;
      else if (option === '--file') return { problem: 'the script comes from a file (-f)' };
      else if (option === '--expression') scripts.push(typeof value === 'string' ? { kind: 'static', text: value } : (value as Word));
    } else {
      for (let at = 1; at < text.length; at++) {
        const letter = text[at] as string;
        if (letter === 'i') {
          // -i takes the rest of the cluster as the backup suffix: -in is suffix "n", not -n.
          inPlace = true;
          break;
        }
        if (letter === 'f') return { problem: 'the script comes from a file (-f)' };
        if (SED_VALUE_SHORT.includes(letter)) {
          const attached = text.slice(at + 1);
          const value = attached === '' ? args[++index] : { kind: 'static' as const, text: attached };
          if (value === undefined) return { problem: `-${letter} without its value` };
          if (letter === 'e') scripts.push(value);
          break;
        }
        if (!SED_FLAGS.includes(letter)) return { problem: `-${letter}: an option this check does not know` };
      }
    }
  }
  if (scripts.length === 0) {
    const first = operands.shift();
    if (first === undefined) return { problem: 'no script' };
    scripts.push(first);
  }
  const unknown = scripts.find((script) => script.kind !== 'static');
  if (unknown !== undefined) return { problem: `the script \`${unknown.text}\` is only known when it runs` };
  // sed joins its -e scripts with newlines: `-e 'a\\' -e 'text'` is one a command and its text.
  const danger = sedScriptDanger(scripts.map((script) => script.text).join('\n'));
  if (danger !== undefined) return { problem: danger };
  return inPlace ? { inPlaceFiles: operands } : {};
}
