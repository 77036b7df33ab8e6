// Differential test of the classifier against the real programs (issue 15, Shell 3): many variants
// of every low-tier rule (option combinations, glob and "$@" operands, wrapper nestings, sed scripts
// from a grammar-based generator, read-only git in a hostile repository) are classified, and every
// variant classified low runs in a throwaway bubblewrap sandbox with canaries for writes (the working
// folder and /tmp must not change), exec (a canary program every trap names, on PATH and in the
// repository's configuration) and network (a listener on 127.0.0.1 that must see no connection).
// A variant that touches a canary must not be low.
//
// BULKHEAD_DIFFERENTIAL_VARIANTS sets the number of generated variants (default 1500),
// BULKHEAD_DIFFERENTIAL_SEED the generator's seed, BULKHEAD_CLASSIFIER_MODULE another build of
// classify.ts to judge (how the findings before the fix were listed).
import { spawn, spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { chmodSync, cpSync, existsSync, lstatSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, readlinkSync, realpathSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { CommandClassifier } from '../src/classify/classify.js';
import { commandEnvironment } from '../src/lib/environment.js';

const VARIANTS = Number(process.env['BULKHEAD_DIFFERENTIAL_VARIANTS'] ?? 1500);
const SEED = Number(process.env['BULKHEAD_DIFFERENTIAL_SEED'] ?? 15);
const MODULE = process.env['BULKHEAD_CLASSIFIER_MODULE'] ?? '../src/classify/classify.js';
const hasBwrap = spawnSync('bwrap', ['--ro-bind', '/', '/', 'true']).status === 0;

/** mulberry32: the same variants for the same seed. */
function random(seed: number): () => number {
  let state = seed >>> 0;
  return () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

const quote = (text: string) => `'${text.replaceAll("'", "'\\''")}'`;

class Generator {
  private readonly next: () => number;

  constructor(seed: number, private readonly port: number) {
    this.next = random(seed);
  }

  pick<T>(items: readonly T[]): T {
    return items[Math.floor(this.next() * items.length)] as T;
  }

  chance(p: number): boolean {
    return this.next() < p;
  }

  some<T>(items: readonly T[], max: number): T[] {
    const count = Math.floor(this.next() * (max + 1));
    return Array.from({ length: count }, () => this.pick(items));
  }

  // ---- sed scripts from GNU sed 4.9's grammar ----

  private sedAddress(): string {
    const one = () => this.pick(['1', '2', '$', '/o/', '/l/I', '\\,w,', '/x/M', '0~2', '1~3']);
    switch (this.pick(['none', 'none', 'one', 'range', 'plus', 'neg'])) {
      case 'none':
        return '';
      case 'one':
        return one();
      case 'range':
        return `${one()},${this.pick(['$', '/d/', '3'])}`;
      case 'plus':
        return `${one()},${this.pick(['+1', '~2'])}`;
      default:
        return `${one()}${this.pick(['!', ' !', '! '])}`;
    }
  }

  private sedRun(): string {
    return this.pick(['canary', 'touch pwned', 'canary arg']);
  }

  private sedCommand(depth: number): string {
    const label = this.pick(['x', 'a', 'end', 'l1']);
    const blank = this.pick([' ', '\t', '']);
    const kinds = [
      () => this.pick(['p', 'd', '=', 'l', 'l 5', 'q', 'q 3', 'Q', 'n', 'N', 'g', 'G', 'h', 'H', 'x', 'z', 'F', 'D', 'P']),
      () => `:${label}${this.pick(['', ` ${this.sedCommand(depth + 1)}`, `\t${this.sedRun()}`, ' e canary'])}`,
      () => `${this.pick(['b', 't', 'T'])}${this.pick(['', ' ', ''])}${this.pick(['', label])}${this.pick(['', ` e ${this.sedRun()}`, ' p'])}`,
      () => `v${this.pick(['', ' 4.2', ' 4.2 e canary'])}`,
      () => `${this.pick(['a', 'i', 'c'])}${this.pick([' ', '\\\n', '\\', ''])}text${this.pick(['', '\\\ne canary', '\ne canary', '\\\\\ne canary', '; e canary'])}`,
      () => {
        const delimiter = this.pick(['/', '|', ',', '#', 'x']);
        const flags = this.some(['g', 'p', '2', 'i', 'I', 'm', 'M', 'e', 'w out.txt', 'w /dev/stdout'], 2).join('');
        return `s${delimiter}${this.pick(['l', 'o', 'a\\/b', '[/]', `\\${delimiter}`])}${delimiter}${this.pick(['L', 'canary', '&&', '\\n'])}${delimiter}${flags}`;
      },
      () => `y/lo/LO/`,
      () => `e${this.pick(['', ` ${this.sedRun()}`])}`,
      () => `${this.pick(['w', 'W', 'r', 'R'])}${blank}${this.pick(['out.txt', 'f.txt', '/dev/stdout', 'g.txt'])}`,
      () => (depth > 1 ? 'p' : `{${this.sedCommand(depth + 1)}${this.pick([';', '\n'])}${this.sedCommand(depth + 1)}${this.pick([';', '\n', ''])}}`),
      () => `# comment${this.pick(['', ' e canary'])}`,
    ];
    return `${this.sedAddress()}${this.pick(kinds)()}`;
  }

  sedScript(): string {
    const count = 1 + Math.floor(this.next() * 3);
    const parts = Array.from({ length: count }, () => this.sedCommand(0));
    let script = parts[0] as string;
    for (const part of parts.slice(1)) script += this.pick([';', '\n', ' ; ', '\n\n']) + part;
    return script;
  }

  sed(): string {
    const options = this.some(['-n', '-E', '-r', '-s', '-z', '-u', '--posix', '--debug', '-l 5', '--sandbox', '--separate', '-b'], 2);
    const files = this.some(['f.txt', 'g.txt', '*.txt', '-'], 2);
    const script = this.sedScript();
    if (this.chance(0.3)) {
      // Several -e pieces: sed joins them with newlines.
      const pieces = script.split('\n');
      return ['sed', ...options, ...pieces.flatMap((piece) => ['-e', quote(piece)]), ...(files.length === 0 ? ['f.txt'] : files)].join(' ');
    }
    return ['sed', ...options, this.chance(0.15) ? `--expression=${quote(script)}` : quote(script), ...(files.length === 0 ? ['f.txt'] : files)].join(' ');
  }

  // ---- the read-only programs with their options and operands ----

  private operand(): string {
    return this.pick(['f.txt', 'g.txt', 'in.txt', '*', '*.txt', '"$@"', '{f,g}.txt', '-', '/dev/null', 'out.txt', 'a.bin', 'dir', '[fg].txt', '?.txt']);
  }

  program(): string {
    const network = `/inet/tcp/0/127.0.0.1/${this.port}`;
    const tables: Record<string, readonly string[]> = {
      uniq: ['-c', '-d', '-u', '-i', '-f 1', '-s 1', '-w 2', '-z', '--skip-fields=1', '-D'],
      xxd: ['-p', '-c 8', '-l 16', '-r', '-i', '-u', '-s 1', '-g 2', '-b', '-e', '-ps', '-pc', '-cols 4', '-len 2', '-R never'],
      sort: ['-u', '-r', '-n', '-k1', '-o out.txt', '--output=out.txt', '-m', '-c', '-T dir', '-mo out.txt', '-S 1M', '--compress-program=canary', '--compress=canary', '-t :'],
      tee: ['-a', '-i'],
      find: ['-name "*.txt"', '-type f', '-print', '-maxdepth 1', '-fprint out.txt', '-delete', '-exec canary {} ;', '-execdir canary {} +', '-ok canary {} ;', '-fls out.txt', '-fprintf out.txt %p', '-newer f.txt'],
      tree: ['-a', '-L 1', '-o out.txt', '-R', '-Lo 1'],
      file: ['-b', '-C', '-m magic', '-z', '-i', '--compile'],
      date: ['+%s', '-d tomorrow', '-s 2020-01-01', '--set=2020-01-01', '-u', '-Iseconds', '-r f.txt'],
      hostname: ['-f', 'newname', '-F f.txt'],
      printf: ['%s', '-v x %s', '-vx'],
      head: ['-n 1', '-c 3', '-q', '-v', '--lines=2'],
      tail: ['-n 1', '-c 3', '-q', '--lines=+2'],
      cat: ['-n', '-A', '-s', '-v', '-E'],
      wc: ['-l', '-c', '-w', '--files0-from=f.txt', '-L'],
      grep: ['-r', '-n', '-v', '-c', '-l', '-e o', '-f g.txt', '-E', '--include=*.txt', 'o'],
      cut: ['-c 1-2', '-d :', '-f 1', '-b 1'],
      tr: ['a b', '-d a', '-s a'],
      comm: ['-1', '-2', '-3', '--check-order'],
      join: ['-1 1', '-t :', '-a 1'],
      paste: ['-s', '-d :'],
      diff: ['-u', '-q', '-r', '--brief', '-N', '--to-file=g.txt'],
      cmp: ['-l', '-s', '-n 2'],
      md5sum: ['-c', '--tag', '-b'],
      base64: ['-d', '-w 0', '-i'],
      od: ['-c', '-x', '-A n'],
      nl: ['-b a', '-n ln'],
      column: ['-t', '-s :'],
      fold: ['-w 2', '-s'],
      tac: ['-s x', '-r'],
      jq: ['.', '-r .', '-n 1', '--rawfile x f.txt .', '-s .'],
      stat: ['-c %s', '-L', '--printf=%n'],
      du: ['-s', '-h', '-a', '--files0-from=f.txt'],
      ls: ['-la', '-R', '-d', '--color=never', '-1'],
      strings: ['-n 2', '-a'],
      seq: ['3', '1 3', '-s :'],
      readlink: ['-f', '-e'],
      realpath: ['-e', '-m'],
      echo: ['-n', '-e', 'x'],
      test: ['-f f.txt', '-d dir', '-v x', '-n x'],
    };
    const awkPrograms = ['{ print }', '{ print $1 }', 'BEGIN { print "x" }', `BEGIN { ARGV[1] = "${network}"; ARGC = 2 } { print }`, 'END { print NR }', '{ print > "out.txt" }', 'BEGIN { system("canary") }', '{ print | "canary" }', `BEGIN { "canary" | getline }`];
    if (this.chance(0.08)) {
      const operands = this.some(['f.txt', '*.txt', network, '"$@"'], 2);
      return `awk ${this.pick(['', '-F:', '-v n=1', '--'])} ${quote(this.pick(awkPrograms))} ${operands.join(' ')}`;
    }
    const name = this.pick(Object.keys(tables));
    const options = this.some(tables[name] as readonly string[], 3);
    const operands = this.some([0, 1, 2].map(() => this.operand()), 3);
    return [name, ...options, ...(this.chance(0.1) ? ['--'] : []), ...operands].join(' ');
  }

  // ---- wrappers around a variant ----

  wrap(inner: string): string {
    const wrappers = [
      (line: string) => `env ${line}`,
      (line: string) => `env -- ${line}`,
      (line: string) => `env -S ${quote(line)}`,
      (line: string) => `env -vS${quote(line)}`,
      (line: string) => `env --split-string=${quote(line)}`,
      (line: string) => `nice ${line}`,
      (line: string) => `nice -n 1 ${line}`,
      (line: string) => `timeout 5 ${line}`,
      (line: string) => `timeout -s KILL 5 ${line}`,
      (line: string) => `stdbuf -oL ${line}`,
      (line: string) => `command ${line}`,
      (line: string) => `time ${line}`,
      (line: string) => `echo f.txt | xargs ${line}`,
      (line: string) => `echo f.txt | xargs -I{} ${line} {}`,
      (line: string) => `echo f.txt | xargs -i ${line} {}`,
      (line: string) => `nohup ${line}`,
      (line: string) => `flock /tmp/lock ${line}`,
      (line: string) => `sh -c ${quote(line)}`,
    ];
    let line = inner;
    for (let depth = 0; depth < 1 + Math.floor(this.next() * 2); depth++) line = this.pick(wrappers)(line);
    return line;
  }

  // ---- read-only git in a hostile repository ----

  git(): string {
    const subcommand = this.pick([
      'status', 'log', 'diff', 'show', 'blame f.txt', 'annotate f.txt', 'shortlog HEAD', 'rev-parse HEAD', 'rev-list HEAD', 'ls-files', 'ls-tree HEAD',
      'cat-file -p HEAD:f.txt', 'cat-file --filters HEAD:f.txt', 'cat-file --textconv HEAD:f.txt', 'describe --always', 'describe --always --dirty', 'grep o',
      'grep o HEAD', 'show-ref', 'for-each-ref', 'name-rev HEAD', 'count-objects', 'whatchanged', 'diff-tree -p HEAD', 'diff-files', 'diff-index HEAD',
      'check-attr -a f.txt', 'check-ignore f.txt', 'branch -a', 'tag -l', 'stash list', 'reflog', 'worktree list', 'config --list', 'remote -v', 'version',
      'cat-file -p HEAD:m.txt', 'ls-tree -l HEAD', 'rev-parse HEAD', 'rev-parse HEAD~1', 'rev-parse --show-toplevel', 'rev-parse v1^{}', 'grep o -- .',
      'grep -e o HEAD', 'tag -l -n', 'branch -v', 'ls-files -s', 'rev-list --objects HEAD', 'describe --tags', 'show-ref --tags',
    ]);
    const options = this.some(['-p', '--stat', '--oneline', "'--format=%G?'", '--show-signature', '--textconv', '--ext-diff', '--no-ext-diff', '-O', '--no-textconv', '-n 1'], 2);
    const global = this.pick(['', '--no-pager', '-P', '-C .', '--no-optional-locks']);
    return `cd repo && git ${global} ${subcommand} ${options.join(' ')}`.replaceAll(/ +/g, ' ');
  }

  variant(): { kind: string; line: string } {
    const kind = this.pick(['sed', 'sed', 'sed', 'program', 'program', 'program', 'wrapped', 'wrapped', 'git', 'git']);
    if (kind === 'sed') return { kind, line: this.sed() };
    if (kind === 'program') return { kind, line: this.program() };
    if (kind === 'git') return { kind, line: this.git() };
    return { kind, line: this.wrap(this.chance(0.5) ? this.sed() : this.program()) };
  }
}

/** Every file under `dir`: path, type, content digest (git's opportunistically refreshed index left out). */
function digest(dir: string): string {
  const lines: string[] = [];
  const walk = (path: string, relative: string) => {
    for (const name of readdirSync(path).sort()) {
      const full = join(path, name);
      const rel = `${relative}/${name}`;
      if (rel === '/repo/.git/index') continue;
      const stat = lstatSync(full);
      if (stat.isSymbolicLink()) lines.push(`${rel} -> ${readlinkSync(full)}`);
      else if (stat.isDirectory()) {
        lines.push(`${rel}/ ${stat.mode.toString(8)}`);
        walk(full, rel);
      } else lines.push(`${rel} ${stat.mode.toString(8)} ${createHash('sha1').update(readFileSync(full)).digest('hex')}`);
    }
  };
  walk(dir, '');
  return lines.join('\n');
}

/** The canary program: notes that it ran, and passes its input on (a textconv or filter must still work). */
const canary = (execDir: string) => `#!/bin/sh
echo "$0 $*" >> ${execDir}/ran
# As a partial clone's ext:: transport it must not wait for input that never comes.
[ "$1" = ext ] && exit 1
cat
`;

/** The working folder every variant starts from: plain files, and a repository whose configuration runs the canary everywhere it can. */
function buildTemplate(base: string, program: string): string {
  const template = join(base, 'template');
  mkdirSync(join(template, 'dir'), { recursive: true });
  writeFileSync(join(template, 'f.txt'), 'hello\nworld\nlol\n');
  writeFileSync(join(template, 'g.txt'), 'one\ntwo\n');
  writeFileSync(join(template, 'in.txt'), 'a\na\nb\n');
  writeFileSync(join(template, 'a.bin'), Buffer.from([0, 1, 2, 3, 255]));
  writeFileSync(join(template, 'dir', 'x.txt'), 'x\n');
  const repo = join(template, 'repo');
  mkdirSync(repo);
  const git = (...args: string[]) => {
    const result = spawnSync('git', args, { cwd: repo, encoding: 'utf8', env: { PATH: process.env['PATH'] ?? '/usr/bin:/bin', HOME: base, GIT_CONFIG_NOSYSTEM: '1' } });
    if (result.status !== 0) throw new Error(`git ${args.join(' ')}: ${result.stderr}`);
    return result.stdout.trim();
  };
  git('init', '-q', '-b', 'main');
  git('config', 'user.email', 'a@example.com');
  git('config', 'user.name', 'a');
  writeFileSync(join(repo, 'f.txt'), 'one\n');
  writeFileSync(join(repo, '.gitattributes'), '*.txt diff=evil filter=evil\n');
  git('add', '.');
  git('commit', '-qm', 'one');
  writeFileSync(join(repo, 'f.txt'), 'two\n');
  writeFileSync(join(repo, 'm.txt'), 'missing\n');
  git('add', 'm.txt');
  git('commit', '-qam', 'two');
  const missingBlob = git('rev-parse', 'HEAD:m.txt');
  git('tag', '-a', '-m', 'tag', 'v1');
  const missingTag = git('rev-parse', 'v1');
  // A commit with a signature header: log and show under log.showSignature run gpg.program on it.
  const tree = git('rev-parse', 'HEAD^{tree}');
  const parent = git('rev-parse', 'HEAD');
  const body = `tree ${tree}\nparent ${parent}\nauthor a <a@example.com> 1 +0000\ncommitter a <a@example.com> 1 +0000\ngpgsig -----BEGIN PGP SIGNATURE-----\n \n iQEz\n -----END PGP SIGNATURE-----\n\nsigned\n`;
  writeFileSync(join(base, 'commit'), body);
  const signed = git('hash-object', '-t', 'commit', '-w', join(base, 'commit'));
  git('update-ref', 'refs/heads/main', signed);
  // Same size as the committed content and an old time: status and diff must hash it (clean filter).
  writeFileSync(join(repo, 'f.txt'), 'six\n');
  // A partial clone missing one blob and one tag object: reading either fetches it through the promisor remote's ext:: command.
  for (const object of [missingBlob, missingTag]) rmSync(join(repo, '.git', 'objects', object.slice(0, 2), object.slice(2)));
  for (const [key, value] of [
    ['diff.evil.textconv', program],
    ['diff.evil.command', program],
    ['filter.evil.clean', program],
    ['filter.evil.smudge', program],
    ['diff.external', program],
    ['core.fsmonitor', program],
    ['core.pager', program],
    ['gpg.program', program],
    ['log.showSignature', 'true'],
    ['alias.st', `!${program}`],
    ['core.repositoryformatversion', '1'],
    ['extensions.partialClone', 'origin'],
    ['remote.origin.url', `ext::${program} ext`],
    ['remote.origin.promisor', 'true'],
    ['protocol.ext.allow', 'always'],
    ['core.sshCommand', program],
  ] as const) {
    git('config', key, value);
  }
  return template;
}

interface Outcome {
  readonly kind: string;
  readonly line: string;
  readonly touched: readonly string[];
}

describe.skipIf(!hasBwrap)('differential: no variant classified low touches a canary', () => {
  let base: string;
  let template: string;
  let templateDigest: string;
  let classifier: CommandClassifier;
  let server: Server;
  let connections = 0;
  let port = 0;
  let dirty = true;
  let gitDigest = '';

  beforeAll(async () => {
    // Not below /tmp: the sandbox's /tmp is a canary folder of its own.
    base = realpathSync(mkdtempSync(join(existsSync('/var/tmp') ? '/var/tmp' : tmpdir(), 'bulkhead-differential-')));
    mkdirSync(join(base, 'canary-bin'));
    writeFileSync(join(base, 'canary-bin', 'canary'), canary(join(base, 'exec')));
    chmodSync(join(base, 'canary-bin', 'canary'), 0o755);
    template = buildTemplate(base, join(base, 'canary-bin', 'canary'));
    templateDigest = digest(template);
    gitDigest = digest(join(template, 'repo', '.git'));
    server = createServer((socket) => {
      connections++;
      socket.destroy();
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    port = (server.address() as { port: number }).port;
    const { CommandClassifier: Loaded } = (await import(MODULE)) as typeof import('../src/classify/classify.js');
    classifier = await Loaded.load({ roots: [join(base, 'work')], allowCommands: [], denyCommands: [] });
  });

  afterAll(async () => {
    await new Promise((resolve) => server.close(resolve));
    rmSync(base, { recursive: true, force: true });
  });

  /** Runs one line in a fresh copy of the template; returns the canaries it touched. */
  async function run(line: string): Promise<string[]> {
    const work = join(base, 'work');
    const tmp = join(base, 'tmp');
    const exec = join(base, 'exec');
    // A fresh copy only after a run that changed something: an untouched folder is the template still.
    if (dirty) {
      for (const folder of [work, tmp, exec]) rmSync(folder, { recursive: true, force: true });
      cpSync(template, work, { recursive: true, preserveTimestamps: true });
      mkdirSync(tmp);
      mkdirSync(exec);
      dirty = false;
    }
    const before = connections;
    const env = { ...commandEnvironment({ PATH: `${join(base, 'canary-bin')}:${process.env['PATH'] ?? '/usr/bin:/bin'}`, LANG: 'C' }, []), HOME: '/nonexistent' };
    // prettier-ignore
    const args = ['--ro-bind', '/', '/', '--dev', '/dev', '--proc', '/proc', '--bind', tmp, '/tmp', '--bind', work, work, '--bind', exec, exec,
      '--chdir', work, '--die-with-parent', '--', '/bin/bash', '-c', line];
    await new Promise<void>((resolve) => {
      const child = spawn('bwrap', args, { env, timeout: 5_000, stdio: ['ignore', 'ignore', 'ignore'] });
      child.on('close', () => resolve());
      child.on('error', () => resolve());
    });
    // The listener's connection events run on the event loop: let them arrive.
    await new Promise((resolve) => setTimeout(resolve, 2));
    const touched: string[] = [];
    if (digest(work) !== templateDigest) touched.push('write');
    if (readdirSync(tmp).length > 0) touched.push('write /tmp');
    if (readdirSync(exec).length > 0) touched.push('exec');
    if (connections !== before) touched.push('network');
    if (touched.length > 0 || digest(join(work, 'repo', '.git')) !== gitDigest) dirty = true;
    return touched;
  }

  // The traps issue 15 names, and one of each class: each really touches a canary, and none is low.
  it.each([
    ["sed ':x e canary' f.txt", 'exec'],
    ["sed ': x\te canary' f.txt", 'exec'],
    ["sed 'v 4.2 e canary' f.txt", 'exec'],
    ["sed -n 's/x/y/;p;1e canary' f.txt", 'exec'],
    ["sed -e 'a\\' -e 'x' -e '1e canary' f.txt", 'exec'],
    ["sed 's/.*/canary/e' f.txt", 'exec'],
    ["sed -n '1w out.txt' f.txt", 'write'],
    ["sed 's/o/0/w out.txt' f.txt", 'write'],
    ["env -S 'sed -n \"1e canary\" f.txt'", 'exec'],
    ["env --split-string='touch pwned'", 'write'],
    ['uniq [fg].txt', 'write'],
    ['uniq -c {f,g}.txt', 'write'],
    ['xxd [fg].txt', 'write'],
    ['xxd -pc f.txt g.txt', 'write'],
    ['xxd f.txt -p', 'write'],
    ['cd repo && git diff', 'exec'],
    ['cd repo && git status', 'exec'],
    ['cd repo && git log --oneline', 'exec'],
    ['cd repo && git show', 'exec'],
    ['cd repo && git blame f.txt', 'exec'],
    ['cd repo && git cat-file --filters HEAD:f.txt', 'exec'],
    ['cd repo && git describe --always --dirty', 'exec'],
    ['cd repo && git cat-file -p HEAD:m.txt', 'exec'],
    ['cd repo && git ls-tree -l HEAD', 'exec'],
    ['cd repo && git show-ref', 'exec'],
    ['cd repo && git grep o HEAD', 'exec'],
    ['cd repo && git tag -l -n', 'exec'],
    ["awk 'BEGIN { ARGV[1] = \"/inet/tcp/0/127.0.0.1/PORT\"; ARGC = 2 } { print }'", 'network'],
  ])('%j touches %s and is not low', async (line, canary) => {
    const command = line.replace('PORT', String(port));
    expect(classifier.classify(command, join(base, 'work')).tier).not.toBe('low');
    // mawk has no /inet files: the network trap is gawk's.
    if (canary === 'network' && spawnSync('gawk', ['--version']).status !== 0) return;
    expect(await run(command)).toContain(canary);
  });

  it(`${VARIANTS} generated variants: every one that touches a canary is not low`, { timeout: 300_000 }, async () => {
    // The sandbox and canaries work: each known trap is caught when it runs.
    expect(await run('touch new')).toEqual(['write']);
    expect(await run("sed -n 'e canary' f.txt")).toEqual(['exec']);
    expect(await run('cd repo && git diff')).toContain('exec');
    expect(await run(`exec 3<>/dev/tcp/127.0.0.1/${port}`)).toEqual(['network']);
    expect(await run('cat f.txt; ls; cd repo && git rev-parse HEAD')).toEqual([]);

    const generator = new Generator(SEED, port);
    const seen = new Set<string>();
    const counts: Record<string, { variants: number; low: number; touched: number }> = {};
    const wronglyLow: Outcome[] = [];
    for (let index = 0; index < VARIANTS; index++) {
      const { kind, line } = generator.variant();
      if (seen.has(line)) continue;
      seen.add(line);
      const count = (counts[kind] ??= { variants: 0, low: 0, touched: 0 });
      count.variants++;
      if (classifier.classify(line, join(base, 'work')).tier !== 'low') continue;
      count.low++;
      const started = Date.now();
      const touched = await run(line);
      if (process.env['BULKHEAD_DIFFERENTIAL_SLOW'] !== undefined && Date.now() - started > 300) console.log(`slow ${Date.now() - started} ms: ${line}`);
      if (touched.length === 0) continue;
      count.touched++;
      wronglyLow.push({ kind, line, touched });
    }
    console.log(`differential: ${seen.size} distinct variants (seed ${SEED}), by class: ${JSON.stringify(counts)}`);
    for (const outcome of wronglyLow) console.log(`wrongly low [${outcome.kind}] ${outcome.touched.join(',')}: ${JSON.stringify(outcome.line)}`);
    expect(wronglyLow).toEqual([]);
  });
});
