import { mayBeOption, type ParsedCommand, type Word } from './types.js';

/** Commands that run the command in their arguments, and the options they take before it. */
export interface WrapperSpec {
  readonly flags?: readonly string[];
  /** Options taking a value: the next word, `--long=value`, or attached to a short one (-n1). */
  readonly valueOptions?: readonly string[];
  /** Operands before the command (timeout's duration). */
  readonly operands?: number;
  /** Options whose optional value can only be attached (`xargs -i{}`, `--replace=X`): never the next word. */
  readonly attachedValueOptions?: readonly string[];
}

export const WRAPPERS: Readonly<Record<string, WrapperSpec>> = {
  // command -p searches a PATH of its own: an option this check does not know, so high.
  command: {},
  exec: {},
  env: {},
  nice: { valueOptions: ['-n', '--adjustment'] },
  timeout: { flags: ['--preserve-status', '--foreground', '-v', '--verbose'], valueOptions: ['-s', '--signal', '-k', '--kill-after'], operands: 1 },
  time: { flags: ['-p'] },
  stdbuf: { valueOptions: ['-i', '-o', '-e', '--input', '--output', '--error'] },
  xargs: {
    flags: ['-0', '--null', '-r', '--no-run-if-empty', '-t', '--verbose', '-x', '--exit', '-p', '--interactive', '-o', '--open-tty'],
    valueOptions: ['-a', '--arg-file', '-d', '--delimiter', '-E', '-I', '-J', '-L', '--max-lines', '-n', '--max-args', '-P', '--max-procs', '-s', '--max-chars', '--process-slot-var'],
    // -i[R], -e[EOF], -l[N] and their long forms take a value only when it is attached.
    attachedValueOptions: ['-i', '--replace', '-e', '--eof', '-l'],
  },
};

export type Unwrapped = { readonly inner: readonly Word[] } | { readonly problem: string };

/** The command a wrapper runs, after its own options (empty when it names none). */
export function unwrap(name: string, spec: WrapperSpec, args: readonly Word[]): Unwrapped {
  let index = 0;
  let operands = spec.operands ?? 0;
  for (; index < args.length; index++) {
    const word = args[index] as Word;
    if (word.kind !== 'static') {
      if (word.staticPrefix === '' || word.staticPrefix.startsWith('-')) return { problem: `${name}: \`${word.text}\` may be an option or the command` };
      break;
    }
    const text = word.text;
    if (text === '--') {
      index++;
      break;
    }
    if (!text.startsWith('-') || text === '-') {
      if (operands === 0) break;
      operands--;
      continue;
    }
    const values = spec.valueOptions ?? [];
    if (spec.flags?.includes(text)) continue;
    const attached = spec.attachedValueOptions ?? [];
    if (attached.some((option) => text === option || (option.startsWith('--') ? text.startsWith(`${option}=`) : text.startsWith(option)))) continue;
    if (values.includes(text)) index++;
    else if (!(values.includes(text.split('=', 1)[0] as string) && text.startsWith('--')) && !(values.includes(text.slice(0, 2)) && !text.startsWith('--'))) {
      return { problem: `${name} ${text}: an option this check does not know` };
    }
  }
  return { inner: args.slice(index) };
}

/** `xargs -I{} {} -rf x` (also -J, -i, --replace): each word holding the placeholder is known only when xargs runs it. */
export function withXargsPlaceholder(args: readonly Word[], inner: readonly Word[]): readonly Word[] {
  let placeholder: string | undefined;
  for (let index = 0; index < args.length - inner.length; index++) {
    const word = args[index] as Word;
    if (word.kind !== 'static') continue;
    if (word.text.startsWith('-I') || word.text.startsWith('-J')) placeholder = word.text.length === 2 ? args[index + 1]?.text : word.text.slice(2);
    else if (word.text.startsWith('-i') || word.text === '--replace') placeholder = word.text.length > 2 ? word.text.slice(2) : '{}';
    else if (word.text.startsWith('--replace=')) placeholder = word.text.slice('--replace='.length) || '{}';
  }
  if (placeholder === undefined || placeholder === '') return inner;
  const marker = placeholder;
  return inner.map((word) => (word.text.includes(marker) ? { kind: 'expansion', text: word.text, staticPrefix: word.text.slice(0, word.text.indexOf(marker)), several: false } : word));
}

const reasons = (names: readonly string[], why: string): [string, string][] => names.map((name) => [name, `${name} ${why}`]);

/** Commands that stay high whatever their arguments, with the reason shown to the human. */
export const KNOWN_HIGH: ReadonlyMap<string, string> = new Map([
  ...reasons(['curl', 'wget', 'nc', 'ncat', 'netcat', 'socat', 'ssh', 'scp', 'sftp', 'rsync', 'ftp', 'telnet', 'aria2c', 'http', 'https', 'lftp', 'mosh', 'ping', 'dig', 'nslookup', 'host', 'traceroute'], 'reaches the network'),
  ...reasons(['sudo', 'doas', 'su', 'pkexec', 'run0'], 'runs a command as another user'),
  ...reasons(['nohup', 'setsid', 'disown'], 'detaches a command from the session'),
  ...reasons(['strace', 'ltrace', 'chroot', 'unshare', 'ionice', 'chrt', 'taskset', 'flock', 'watch'], 'runs the command in its arguments in a way this check does not follow'),
  ...reasons(['less', 'more', 'most', 'pg'], 'is a pager: interactive, and it can run commands (use cat, head or tail)'),
  ...reasons(['vi', 'vim', 'nvim', 'nano', 'emacs', 'ed', 'ex'], 'is an editor'),
  ...reasons(['npx', 'bunx', 'pipx'], 'downloads and runs packages'),
  ...reasons(['source', '.'], 'runs a script inside this shell'),
  ...reasons(['alias', 'hash', 'set', 'shopt', 'trap', 'read', 'mapfile', 'readarray', 'ulimit', 'umask', 'pushd', 'popd'], 'changes the state of the shell'),
  ...reasons(['coproc'], 'starts a coprocess in the background'),
  ...reasons(['builtin'], 'runs a shell builtin by name, past any function of that name'),
  ...reasons(['busybox', 'toybox'], 'runs the applet named in its arguments'),
  ...reasons(['script', 'parallel', 'runuser', 'sg', 'nsenter', 'systemd-run', 'firejail', 'unbuffer', 'numactl', 'prlimit', 'cgexec', 'faketime', 'torsocks', 'proxychains', 'proxychains4', 'dbus-run-session', 'xvfb-run', 'catchsegv', 'valgrind'], 'runs the command in its arguments in a way this check does not follow'),
]);

/** Programs that run code they read: fed by a here-string or heredoc, the code is the input. */
export const INTERPRETERS = new Set([
  'bash', 'sh', 'dash', 'zsh', 'ksh', 'mksh', 'fish', 'python', 'python2', 'python3', 'node', 'nodejs', 'deno', 'bun',
  'perl', 'ruby', 'php', 'lua', 'tclsh', 'Rscript', 'pwsh', 'osascript',
]);
/** Shells whose -c option runs a command line. */
export const SHELLS = new Set(['bash', 'sh', 'dash', 'zsh', 'ksh', 'mksh', 'fish']);
/** Commands whose later arguments are a command run by them (for deny rules). */
export const LAUNCHERS = new Set([
  'builtin', 'sudo', 'doas', 'pkexec', 'run0', 'nohup', 'setsid', 'strace', 'ltrace', 'chroot', 'unshare', 'ionice', 'chrt', 'taskset', 'flock',
  'busybox', 'toybox', 'script', 'parallel', 'runuser', 'sg', 'nsenter', 'systemd-run', 'firejail', 'unbuffer', 'numactl', 'prlimit', 'cgexec',
  'faketime', 'torsocks', 'proxychains', 'proxychains4', 'dbus-run-session', 'xvfb-run', 'catchsegv', 'valgrind', 'su',
]);

/** Commands whose arguments hold another command line or command. */
export const RUNS_OTHERS: ReadonlySet<string> = new Set([...SHELLS, ...LAUNCHERS, ...Object.keys(WRAPPERS), 'eval', 'su', 'watch', 'find', 'fd']);

/** sudo's arguments are tried as a command from each word on; past this many, the rest may be anything. */
const MAX_SUFFIXES = 16;

/** The command string of `bash -c STRING`, `bash -xc STRING`, `su -c STRING`. */
export function commandStringOf(args: readonly Word[]): Word[] {
  let sawC = false;
  for (const word of args) {
    if (word.kind !== 'static') return [word];
    if (word.text.startsWith('-') && !word.text.startsWith('--') && word.text.slice(1).includes('c')) sawC = true;
    else if (sawC && !word.text.startsWith('-')) return [word];
  }
  return [];
}

/** sudo -u root rm -rf /, env -i rm -rf /: every suffix that starts with a word other than an option may be the command. */
export function launchedCommands(args: readonly Word[]): ParsedCommand[] {
  const commands: ParsedCommand[] = [];
  for (let index = 0; index < args.length; index++) {
    const word = args[index] as Word;
    if (word.kind === 'static' && word.text.startsWith('-')) continue;
    if (commands.length === MAX_SUFFIXES) {
      commands.push({ words: [{ kind: 'expansion', text: word.text, staticPrefix: '', several: true }], argumentsFromInput: false });
      break;
    }
    commands.push({ words: args.slice(index), argumentsFromInput: false });
  }
  return commands;
}

const FIND_EXECS = new Set(['-exec', '-execdir', '-ok', '-okdir']);
const FD_EXECS = new Set(['-x', '--exec', '-X', '--exec-batch']);

/** find -exec CMD… ; and fd -x CMD…: {} stands for file names. */
export function executedBy(name: string, args: readonly Word[]): ParsedCommand[] {
  const starts = name === 'find' ? FIND_EXECS : FD_EXECS;
  const commands: ParsedCommand[] = [];
  for (let index = 0; index < args.length; index++) {
    const word = args[index] as Word;
    if (word.kind !== 'static' || !starts.has(word.text)) continue;
    const inner: Word[] = [];
    for (index++; index < args.length; index++) {
      const part = args[index] as Word;
      if (name === 'find' && part.kind === 'static' && (part.text === ';' || part.text === '+')) break;
      inner.push(part.kind === 'static' && part.text.includes('{}') ? { kind: 'expansion', text: part.text, staticPrefix: part.text.slice(0, part.text.indexOf('{}')), several: false } : part);
    }
    commands.push({ words: inner, argumentsFromInput: false });
  }
  return commands;
}

/** watch's options before the command (-n/--interval and -q/--equexit take a value). */
const WATCH_VALUES = new Set(['-n', '--interval', '-q', '--equexit']);

/** The command watch runs: its arguments after its options, joined into one line for sh -c. */
export function watchedCommand(args: readonly Word[]): readonly Word[] {
  let index = 0;
  for (; index < args.length; index++) {
    const word = args[index] as Word;
    if (word.kind !== 'static' || !word.text.startsWith('-')) break;
    if (word.text === '--') {
      index++;
      break;
    }
    if (WATCH_VALUES.has(word.text)) index++;
  }
  return args.slice(index);
}

/** What `env ARGS` runs, and what it changes on the way (for the reason shown). */
export type EnvCall = { readonly inner: readonly Word[]; readonly changes: readonly string[] } | { readonly problem: string };

type EnvValue = 'none' | 'required' | 'optional';
/** GNU env (coreutils 9) options; the letter given is the short form. */
const ENV_LONG: Readonly<Record<string, { readonly value: EnvValue; readonly change: boolean; readonly short?: string }>> = {
  '--ignore-environment': { value: 'none', change: true, short: 'i' },
  '--null': { value: 'none', change: false, short: '0' },
  '--unset': { value: 'required', change: true, short: 'u' },
  '--chdir': { value: 'required', change: true, short: 'C' },
  '--split-string': { value: 'required', change: false, short: 'S' },
  '--debug': { value: 'none', change: false, short: 'v' },
  '--argv0': { value: 'required', change: true, short: 'a' },
  '--block-signal': { value: 'optional', change: true },
  '--default-signal': { value: 'optional', change: true },
  '--ignore-signal': { value: 'optional', change: true },
  '--list-signal-handling': { value: 'none', change: false },
  '--help': { value: 'none', change: false },
  '--version': { value: 'none', change: false },
};
const ENV_SHORT = new Map(Object.entries(ENV_LONG).flatMap(([long, spec]) => (spec.short === undefined ? [] : [[spec.short, long] as const])));
/** env -S inside env -S inside…: past this many strings the line is not read. */
const MAX_SPLITS = 8;

/**
 * Reads env's arguments like GNU env: options (clusters, abbreviations, -S/--split-string whose
 * string is split into words that are read again as options and command), NAME=VALUE, then the command.
 */
export function envCall(args: readonly Word[]): EnvCall {
  let words = [...args];
  const changes: string[] = [];
  let splits = 0;
  let index = 0;
  let stopAfterOptions = false;
  const split = (at: number, string: Word, consumed: number): string | undefined => {
    if (string.kind !== 'static') return `the -S string \`${string.text}\` is only known when it runs`;
    if (++splits > MAX_SPLITS) return 'env -S nested too deeply';
    const parts = splitEnvString(string.text);
    if (typeof parts === 'string') return parts;
    words = [...words.slice(0, at), ...parts, ...words.slice(at + consumed)];
    return undefined;
  };
  options: while (index < words.length) {
    const word = words[index] as Word;
    if (word.kind !== 'static') {
      if (mayBeOption(word)) return { problem: `\`${word.text}\` may expand to an option` };
      break;
    }
    const text = word.text;
    if (text === '--') {
      index++;
      break;
    }
    if (text === '-') {
      changes.push('-');
      index++;
      break;
    }
    if (!text.startsWith('-')) break;
    if (text.startsWith('--')) {
      const equals = text.indexOf('=');
      const given = equals < 0 ? text : text.slice(0, equals);
      const matches = Object.keys(ENV_LONG).filter((option) => option === given || option.startsWith(given));
      const long = matches.includes(given) ? given : matches.length === 1 ? matches[0] : undefined;
      if (long === undefined || given.length < 3) return { problem: `${text}: an option this check does not know` };
      const spec = ENV_LONG[long] as (typeof ENV_LONG)[string];
      if (long === '--help' || long === '--version') stopAfterOptions = true;
      if (spec.change) changes.push(text);
      if (spec.value === 'none' && equals >= 0) return { problem: `${text}: ${long} takes no value` };
      if (spec.value !== 'required' || equals >= 0) {
        if (long === '--split-string') {
          const problem = split(index, { kind: 'static', text: text.slice(equals + 1) }, 1);
          if (problem !== undefined) return { problem };
          continue;
        }
        index++;
        continue;
      }
      const value = words[index + 1];
      if (value === undefined) return { problem: `${long} without its value` };
      if (long === '--split-string') {
        const problem = split(index, value, 2);
        if (problem !== undefined) return { problem };
        continue;
      }
      index += 2;
      continue;
    }
    for (let at = 1; at < text.length; at++) {
      const letter = text[at] as string;
      const long = ENV_SHORT.get(letter);
      if (long === undefined) return { problem: `-${letter}: an option this check does not know` };
      const spec = ENV_LONG[long] as (typeof ENV_LONG)[string];
      if (spec.change) changes.push(`-${letter}`);
      if (spec.value !== 'required') continue;
      const attached = text.slice(at + 1);
      const value: Word | undefined = attached === '' ? words[index + 1] : { kind: 'static', text: attached };
      if (value === undefined) return { problem: `-${letter} without its value` };
      const consumed = attached === '' ? 2 : 1;
      if (letter === 'S') {
        // The rest of the cluster before -S is already read: -iS 'cmd' keeps its -i.
        const problem = split(index, value, consumed);
        if (problem !== undefined) return { problem };
        continue options;
      }
      index += consumed;
      continue options;
    }
    index++;
  }
  if (stopAfterOptions) return { inner: [], changes };
  for (; index < words.length; index++) {
    const word = words[index] as Word;
    const known = word.kind === 'static' ? word.text : word.staticPrefix;
    const equals = known.indexOf('=');
    if (equals > 0) changes.push(word.text);
    else if (word.kind === 'static' || known !== '') break;
    else return { problem: `\`${word.text}\` may be an assignment or the command` };
  }
  return { inner: words.slice(index), changes };
}

const ENV_ESCAPES: Readonly<Record<string, string>> = { f: '\f', n: '\n', r: '\r', t: '\t', v: '\v', '\\': '\\', "'": "'", '"': '"', '#': '#', $: '$', ' ': ' ' };

/**
 * Splits an env -S string as GNU env does: blanks separate words, '…' and "…" quote, backslash
 * escapes (\_ is a separator outside quotes and a space inside "…", \c ends the string), ${NAME}
 * is replaced, and # at the start of a word begins a comment. Returns why when it cannot.
 */
export function splitEnvString(text: string): Word[] | string {
  const words: Word[] = [];
  let current = '';
  let inWord = false;
  let staticPrefix: string | undefined;
  const finish = () => {
    if (inWord) words.push(staticPrefix === undefined ? { kind: 'static', text: current } : { kind: 'expansion', text: current, staticPrefix, several: false });
    current = '';
    inWord = false;
    staticPrefix = undefined;
  };
  let quote: "'" | '"' | undefined;
  for (let index = 0; index < text.length; index++) {
    const char = text[index] as string;
    if (quote === "'") {
      if (char === "'") quote = undefined;
      else if (char === '\\' && (text[index + 1] === "'" || text[index + 1] === '\\')) current += text[++index];
      else current += char;
      continue;
    }
    if (char === '\\') {
      const next = text[++index];
      if (next === undefined) return 'env -S string ends with a backslash';
      if (next === 'c') {
        if (quote !== undefined) return 'env -S: \\c inside quotes';
        break;
      }
      if (next === '_') {
        if (quote === '"') current += ' ';
        else finish();
        continue;
      }
      const escaped = ENV_ESCAPES[next];
      if (escaped === undefined) return `env -S: the escape \\${next} is not one env reads`;
      current += escaped;
      inWord = true;
      continue;
    }
    if (char === '$') {
      const close = text.indexOf('}', index);
      if (text[index + 1] !== '{' || close < 0) return 'env -S: only ${NAME} is expanded';
      staticPrefix ??= current;
      current += text.slice(index, close + 1);
      inWord = true;
      index = close;
      continue;
    }
    if (quote === '"') {
      if (char === '"') quote = undefined;
      else current += char;
      continue;
    }
    if (' \t\n\v\f\r'.includes(char)) finish();
    else if (char === '#' && !inWord) break;
    else if (char === "'" || char === '"') {
      quote = char;
      inWord = true;
    } else {
      current += char;
      inWord = true;
    }
  }
  if (quote !== undefined) return 'env -S: an unterminated quote';
  finish();
  return words;
}
