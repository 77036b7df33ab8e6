// A CLI that fails fast: every address, port, root and flag is checked before any child starts;
// a mistake exits 2 with one line and leaves no process and no file behind.
import { spawnSync, execFileSync } from 'node:child_process';
import { mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { FS_CLI, GATEWAY_CLI, GIT_CLI, LADDER_CLI, SHELL_CLI, WEB_CLI } from './helpers.js';

const FS_WRITE_CLI = new URL('../../servers/fs-write/dist/cli.js', import.meta.url).pathname;

let folder: string;
let file: string;
let busy: Server;
let busyPort: number;

beforeAll(async () => {
  folder = mkdtempSync(join(tmpdir(), 'bulkhead-fail-fast-'));
  file = join(folder, 'a-file.txt');
  writeFileSync(file, 'not a folder\n');
  busy = createServer();
  await new Promise<void>((resolve) => busy.listen(0, '127.0.0.1', resolve));
  busyPort = (busy.address() as { port: number }).port;
});

afterAll(async () => {
  await new Promise((resolve) => busy.close(resolve));
  rmSync(folder, { recursive: true, force: true });
});

/** Runs a CLI to its end (bounded), in the test folder. */
function runCli(script: string, args: string[]): { status: number | null; stdout: string; stderr: string } {
  const result = spawnSync(process.execPath, [script, ...args], { cwd: folder, encoding: 'utf8', timeout: 20_000, input: '' });
  return { status: result.status, stdout: result.stdout, stderr: result.stderr };
}

/** Processes whose command line names the test folder: a child that was started and left behind. */
function leftBehind(): string[] {
  return execFileSync('ps', ['-eo', 'args='], { encoding: 'utf8' })
    .split('\n')
    .filter((line) => line.includes(folder) && !line.startsWith('ps '));
}

const NO_AUTH_BEYOND_LOOPBACK = (host: string) =>
  `--no-auth is refused on ${host}: beyond loopback every client must present a bearer token (leave out --no-auth and one is made for you, or give --token-file)`;

describe('bulkhead start refuses a bad command line at once', () => {
  // Lazy: the folder exists only once the suite has started.
  const cases: [string, () => [string[], string]][] = [
    ['a host without a port', () => [['--http', 'nothost'], 'bulkhead: --http expects HOST:PORT (for example 127.0.0.1:8765), got "nothost" (see `bulkhead help start`)']],
    ['a port out of range', () => [['--http', '127.0.0.1:99999'], 'bulkhead: --http port 99999 is out of range (0-65535) (see `bulkhead help start`)']],
    ['a port that is not a number', () => [['--http', '127.0.0.1:abc'], 'bulkhead: --http expects HOST:PORT (for example 127.0.0.1:8765), got "127.0.0.1:abc" (see `bulkhead help start`)']],
    ['--http with no value', () => [['--http'], "bulkhead: Option '--http <value>' argument missing (see `bulkhead help start`)"]],
    ['an empty root', () => [['--root', ''], 'bulkhead: --root is empty (an unset variable in the client config?); give the folder to serve, for example --root /home/me/project (see `bulkhead help start`)']],
    ['a blank root', () => [['--root', '  '], 'bulkhead: --root is empty (an unset variable in the client config?); give the folder to serve, for example --root /home/me/project (see `bulkhead help start`)']],
    ['a missing root', () => [['--root', join(folder, 'missing')], `bulkhead: --root ${join(folder, 'missing')} does not exist; create it or give an existing folder (see \`bulkhead help start\`)`]],
    ['a root that is a file', () => [['--root', file], `bulkhead: --root ${file} is not a folder; give the folder that holds it (see \`bulkhead help start\`)`]],
    ['a second root that is missing', () => [['--root', folder, '--root', join(folder, 'gone')], `bulkhead: --root ${join(folder, 'gone')} does not exist; create it or give an existing folder (see \`bulkhead help start\`)`]],
    ['an empty control-plane folder', () => [['--root', folder, '--config', ''], 'bulkhead: --config is empty (an unset variable in the client config?); give the control-plane folder, or leave the flag out for <first root>/.bulkhead (see `bulkhead help start`)']],
    ['a control-plane folder that is a file', () => [['--root', folder, '--config', file], `bulkhead: --config ${file} is a file; the control-plane folder holds the policy files (see \`bulkhead help start\`)`]],
    ['an unknown flag', () => [['--root', folder, '--port', '80'], 'bulkhead: bulkhead start does not take --port (see `bulkhead help start`)']],
    ['a flag of another command', () => [['--root', folder, '--limit', '3'], 'bulkhead: bulkhead start does not take --limit (see `bulkhead help start`)']],
    ['a stray argument', () => [['--root', folder, 'extra'], 'bulkhead: start takes no arguments besides its flags (got extra) (see `bulkhead help start`)']],
    ['a token file that is missing', () => [['--root', folder, '--http', '127.0.0.1:0', '--token-file', join(folder, 'no-token')], `bulkhead: token file ${join(folder, 'no-token')} cannot be read: ENOENT: no such file or directory, open '${join(folder, 'no-token')}' (see \`bulkhead help start\`)`]],
    ['an unknown profile', () => [['--root', folder, '--profile', 'nope'], 'bulkhead: unknown profile nope; bulkhead.yaml defines none']],
    ...['0.0.0.0', '[::]', '192.0.2.1', '127.0.0.1.nip.io'].map(
      (host): [string, () => [string[], string]] => [
        `--no-auth on ${host}`,
        () => [['--root', folder, '--http', `${host}:0`, '--no-auth'], `bulkhead: ${NO_AUTH_BEYOND_LOOPBACK(host.replace(/^\[|\]$/g, ''))} (see \`bulkhead help start\`)`],
      ],
    ),
    ['--no-auth with --token-file', () => [['--root', folder, '--http', '127.0.0.1:0', '--no-auth', '--token-file', file], 'bulkhead: --no-auth and --token-file contradict each other; give one of them (see `bulkhead help start`)']],
  ];
  for (const [what, make] of cases) {
    it(`refuses ${what}`, () => {
      const [args, message] = make();
      const result = runCli(GATEWAY_CLI, ['start', ...args]);
      expect(result.stderr).toBe(`${message}\n`);
      expect(result.status).toBe(2);
      expect(result.stdout).toBe('');
      expect(leftBehind()).toEqual([]);
      expect(readdirSync(folder)).toEqual(['a-file.txt']);
    });
  }

  it('refuses a port already in use before any compartment starts, and forgets the token it made', () => {
    const result = runCli(GATEWAY_CLI, ['start', '--root', folder, '--http', `127.0.0.1:${busyPort}`]);
    expect(result.status).toBe(2);
    expect(result.stderr).toMatch(new RegExp(`^bulkhead gateway: .*EADDRINUSE.*127\\.0\\.0\\.1:${busyPort}`, 'm'));
    expect(result.stderr).not.toMatch(/is up|did not start/);
    expect(leftBehind()).toEqual([]);
    expect(readdirSync(folder)).toEqual(['a-file.txt']);
  });

  it('refuses a host that does not resolve, binds nothing and leaves no token behind', () => {
    const result = runCli(GATEWAY_CLI, ['start', '--root', folder, '--http', 'nothost.invalid:8080']);
    expect(result.status).toBe(2);
    expect(result.stderr).toBe('bulkhead gateway: getaddrinfo ENOTFOUND nothost.invalid\n');
    expect(leftBehind()).toEqual([]);
    expect(readdirSync(folder)).toEqual(['a-file.txt']);
  });
});

describe('every compartment refuses an empty, missing or non-folder root', () => {
  const servers = [
    ['bulkhead-fs', FS_CLI],
    ['bulkhead-fs-write', FS_WRITE_CLI],
    ['bulkhead-git', GIT_CLI],
    ['bulkhead-web', WEB_CLI],
    ['bulkhead-shell', SHELL_CLI],
    ['bulkhead-ladder', LADDER_CLI],
  ] as const;
  for (const [bin, script] of servers) {
    it(bin, () => {
      const empty = runCli(script, ['--root', '']);
      expect(empty.stderr).toBe(`${bin}: --root is empty (an unset variable in the client config?); give the folder to serve, for example --root /home/me/project (see ${bin} --help)\n`);
      expect(empty.status).toBe(2);
      const missing = runCli(script, ['--root', join(folder, 'nowhere')]);
      expect(missing.stderr).toBe(`${bin}: --root ${join(folder, 'nowhere')} does not exist; create it or give an existing folder (see ${bin} --help)\n`);
      expect(missing.status).toBe(2);
      const notFolder = runCli(script, ['--root', file]);
      expect(notFolder.stderr).toBe(`${bin}: --root ${file} is not a folder; give the folder that holds it (see ${bin} --help)\n`);
      const badFlag = runCli(script, ['--root', folder, '--verbose']);
      expect(badFlag.stderr).toBe(`${bin}: ${bin} does not take --verbose (see ${bin} --help)\n`);
      expect(badFlag.status).toBe(2);
      const openToAll = runCli(script, ['--root', folder, '--http', '0.0.0.0:0', '--no-auth']);
      expect(openToAll.stderr).toBe(`${bin}: ${NO_AUTH_BEYOND_LOOPBACK('0.0.0.0')} (see ${bin} --help)\n`);
      expect(openToAll.status).toBe(2);
      const busyPortRun = runCli(script, ['--root', folder, '--http', `127.0.0.1:${busyPort}`]);
      expect(busyPortRun.stderr).toMatch(new RegExp(`^${bin}: .*EADDRINUSE`, 'm'));
      expect(busyPortRun.status).toBe(2);
      expect(readdirSync(folder)).toEqual(['a-file.txt']);
    });
  }

  it('bulkhead serve passes the refusal and its exit code through', () => {
    const result = runCli(GATEWAY_CLI, ['serve', 'git', '--root', '']);
    expect(result.stderr).toBe('bulkhead-git: --root is empty (an unset variable in the client config?); give the folder to serve, for example --root /home/me/project (see bulkhead-git --help)\n');
    expect(result.status).toBe(2);
    const unknown = runCli(GATEWAY_CLI, ['serve', 'nosuch']);
    expect(unknown.stderr).toBe('bulkhead: nosuch is not an installed built-in compartment (built-ins: fs, fs_write, shell, web, git, ladder) (see `bulkhead help serve`)\n');
    expect(unknown.status).toBe(2);
  });
});

describe('help for every command', () => {
  const commands = ['start', 'serve', 'tools', 'search', 'approve', 'audit', 'config', 'trash', 'approvals', 'console', 'doctor', 'setup', 'help', 'version'];

  it('lists every command in the overview', () => {
    const overview = runCli(GATEWAY_CLI, ['help']);
    expect(overview.status).toBe(0);
    const listed = [...overview.stdout.matchAll(/^ {2}([a-z]+) /gm)].map((match) => match[1]);
    expect(listed).toEqual(commands);
    expect(runCli(GATEWAY_CLI, ['--help']).stdout).toBe(overview.stdout);
    const bare = runCli(GATEWAY_CLI, []);
    expect(bare.status).toBe(2);
    expect(bare.stderr).toBe(overview.stdout);
  });

  for (const command of commands.filter((name) => name !== 'serve')) {
    it(`bulkhead ${command} --help and bulkhead help ${command} say the same, with the command's usage`, () => {
      const viaFlag = runCli(GATEWAY_CLI, [command, '--help']);
      const viaHelp = runCli(GATEWAY_CLI, ['help', command]);
      expect(viaFlag.status).toBe(0);
      expect(viaFlag.stdout).toMatch(new RegExp(`^usage: bulkhead ${command}`));
      expect(viaHelp.stdout).toBe(viaFlag.stdout);
      expect(readdirSync(folder)).toEqual(['a-file.txt']);
    });
  }

  it('serve <namespace> --help is the compartment\'s own help', () => {
    const viaServe = runCli(GATEWAY_CLI, ['serve', 'fs', '--help']);
    expect(viaServe.status).toBe(0);
    expect(viaServe.stdout).toMatch(/^usage: bulkhead-fs \[--root DIR\]/);
    expect(runCli(GATEWAY_CLI, ['help', 'serve', 'fs']).stdout).toBe(viaServe.stdout);
    expect(runCli(GATEWAY_CLI, ['serve', '--help']).stdout).toMatch(/^usage: bulkhead serve <namespace>/);
  });

  it('an unknown command exits 2 with one line', () => {
    const result = runCli(GATEWAY_CLI, ['strat']);
    expect(result.stderr).toBe('bulkhead: unknown command strat (see `bulkhead help`)\n');
    expect(result.status).toBe(2);
    expect(runCli(GATEWAY_CLI, ['help', 'strat']).stderr).toBe('bulkhead: unknown command strat (see `bulkhead help help`)\n');
  });
});
