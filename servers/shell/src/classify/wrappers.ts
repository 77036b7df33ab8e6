import type { ParsedCommand, Word } from './types.js';

/** Commands that run the command in their arguments, and the options they take before it. */
export interface WrapperSpec {
  readonly flags?: readonly string[];
  /** Options taking a value: the next word, `--long=value`, or attached to a short one (-n1). */
  readonly valueOptions?: readonly string[];
  /** Operands before the command (timeout's duration). */
  readonly operands?: number;
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
    flags: ['-0', '--null', '-r', '--no-run-if-empty', '-t', '--verbose', '-x', '--exit'],
    valueOptions: ['-a', '--arg-file', '-d', '--delimiter', '-E', '-I', '-L', '--max-lines', '-n', '--max-args', '-P', '--max-procs', '-s', '--max-chars'],
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
    if (values.includes(text)) index++;
    else if (!(values.includes(text.split('=', 1)[0] as string) && text.startsWith('--')) && !(values.includes(text.slice(0, 2)) && !text.startsWith('--'))) {
      return { problem: `${name} ${text}: an option this check does not know` };
    }
  }
  return { inner: args.slice(index) };
}

/** `xargs -I{} {} -rf x`: each word holding the -I placeholder is known only when xargs runs it. */
export function withXargsPlaceholder(args: readonly Word[], inner: readonly Word[]): readonly Word[] {
  let placeholder: string | undefined;
  for (let index = 0; index < args.length - inner.length; index++) {
    const word = args[index] as Word;
    if (word.kind !== 'static' || !word.text.startsWith('-I')) continue;
    placeholder = word.text === '-I' ? args[index + 1]?.text : word.text.slice(2);
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
]);

/** Programs that run code they read: fed by a here-string or heredoc, the code is the input. */
export const INTERPRETERS = new Set([
  'bash', 'sh', 'dash', 'zsh', 'ksh', 'mksh', 'fish', 'python', 'python2', 'python3', 'node', 'nodejs', 'deno', 'bun',
  'perl', 'ruby', 'php', 'lua', 'tclsh', 'Rscript', 'pwsh', 'osascript',
]);
/** Shells whose -c option runs a command line. */
export const SHELLS = new Set(['bash', 'sh', 'dash', 'zsh', 'ksh', 'mksh', 'fish']);
/** Commands whose later arguments are a command run by them (for deny rules). */
export const LAUNCHERS = new Set(['builtin', 'sudo', 'doas', 'pkexec', 'run0', 'nohup', 'setsid', 'strace', 'ltrace', 'chroot', 'unshare', 'ionice', 'chrt', 'taskset', 'flock']);

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
