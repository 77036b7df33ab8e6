// Hostile downstreams fail alone: a server that sends without end is cut at the gateway's limit,
// disconnected and restarted while the rest of the session goes on; a server that crashes is
// reported with its exit and its last stderr lines and given up on after its restart budget; and
// no process a downstream started outlives the gateway, however the gateway ends.
// Every test runs the built CLI the way a user starts it, with a real MCP client over stdio.
import { execFile, spawn, type ChildProcess } from 'node:child_process';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { afterEach, describe, expect, it } from 'vitest';
import { startStdioServer, tempWorkspace, type ServerProcess, type TempWorkspace } from '@bulkhead/core/testing';
import { childrenOf, descendants, GATEWAY_CLI, text } from './helpers.js';

const run = promisify(execFile);
const CRASHY = fileURLToPath(new URL('../fixtures/crashy-server.mjs', import.meta.url));
const HOSTILE = fileURLToPath(new URL('../fixtures/hostile-http.mjs', import.meta.url));
/** Generous: what the gateway may grow by while a server sends hundreds of MiB at it. */
const RSS_GROWTH_BOUND = 300 * 1024 * 1024;

let ws: TempWorkspace | undefined;
let gateway: ServerProcess | undefined;
const started: ChildProcess[] = [];
const leftovers: number[] = [];

afterEach(async () => {
  await gateway?.close().catch(() => undefined);
  gateway = undefined;
  for (const child of started.splice(0)) child.kill('SIGKILL');
  for (const pid of leftovers.splice(0)) signal(pid, 'SIGKILL');
  ws?.cleanup();
  ws = undefined;
});

function signal(pid: number, name: NodeJS.Signals): void {
  try {
    process.kill(pid, name);
  } catch {
    // gone
  }
}

/** A process that exists and is not a zombie (a container's init may be slow to reap). */
function running(pid: number): boolean {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    return stat.slice(stat.lastIndexOf(')') + 2)[0] !== 'Z';
  } catch {
    return false;
  }
}

/** Process group and session of a running process, from /proc. */
function groupAndSession(pid: number): [number, number] {
  const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  return [Number(fields[2]), Number(fields[3])];
}

function rssBytes(pid: number): number {
  const kb = /^VmRSS:\s+(\d+) kB$/m.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))?.[1];
  return Number(kb) * 1024;
}

async function until(condition: () => boolean | Promise<boolean>, what: string | (() => string), ms = 30_000): Promise<void> {
  const end = Date.now() + ms;
  while (!(await condition())) {
    if (Date.now() > end) throw new Error(`gave up waiting for ${typeof what === 'string' ? what : what()}; gateway stderr:\n${gateway?.stderr().slice(-3000) ?? ''}`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

function crashyEntry(namespace: string, ...args: string[]): string {
  return `  ${namespace}:\n    command: ${process.execPath}\n    args: ${JSON.stringify([CRASHY, ...args])}\n`;
}

function workspace(settings: string, servers: string): TempWorkspace {
  // Third-party tools ask by default; these tests are about what the servers send, not the gate.
  ws = tempWorkspace({
    'notes.txt': 'notes\n',
    'runs.txt': '',
    '.bulkhead/bulkhead.yaml': `${settings}servers:\n  fs: {}\n${servers}`,
    '.bulkhead/permissions.yaml': 'allow:\n  - hostile\n  - crashy\n',
  });
  return ws;
}

async function startGateway(workspace: TempWorkspace): Promise<ServerProcess> {
  gateway = await startStdioServer({ script: GATEWAY_CLI, args: ['start', '--root', workspace.root] });
  return gateway;
}

async function hostileServer(mode: string): Promise<string> {
  const child = spawn(process.execPath, [HOSTILE, mode], { stdio: ['ignore', 'pipe', 'inherit'] });
  started.push(child);
  return new Promise((resolve, reject) => {
    child.once('exit', (code) => reject(new Error(`hostile-http.mjs exited with code ${code}`)));
    child.stdout!.on('data', (chunk: Buffer) => {
      const url = /^listening (\S+)$/m.exec(chunk.toString())?.[1];
      if (url) resolve(url);
    });
  });
}

async function call(name: string, args: Record<string, unknown> = {}) {
  return gateway!.client.callTool({ name: 'call_tool', arguments: { name, arguments: args } });
}

/** The built-in compartment still answers in the same session. */
async function builtinStillWorks(): Promise<void> {
  expect(text(await gateway!.client.callTool({ name: 'fs__read_file', arguments: { path: 'notes.txt' } }))).toBe('     1\tnotes');
}

function stderrLines(prefix: string): string[] {
  return gateway!.stderr().split('\n').filter((line) => line.startsWith(prefix));
}

describe('HTTP downstreams that send without end', () => {
  const cases = [
    ['gzip-bomb', "sent a reply larger than 64 MiB after decompression, the gateway's limit"],
    ['endless-event', "sent an event larger than 64 MiB on its event stream, the gateway's limit for one message"],
  ] as const;
  for (const [mode, breach] of cases) {
    it(`cuts a ${mode} reply at the limit, restarts the server, and the session goes on`, async () => {
      const url = await hostileServer(mode);
      await startGateway(workspace('', `  hostile:\n    url: ${url}\n`));
      await until(() => gateway!.stderr().includes('bulkhead: hostile is up (2 tools)\n'), 'the hostile server to be up');
      const before = rssBytes(gateway!.pid!);
      const result = await call('hostile__misbehave');
      expect(result.isError).toBe(true);
      expect(text(result)).toContain(`hostile ${breach}, so it was disconnected while running misbehave; the call was not completed; restarting in 1 s (restart 1 of at most 8). Try again shortly.`);
      expect(stderrLines('bulkhead: hostile ')).toContain(`bulkhead: hostile ${breach}, so it was disconnected; restarting in 1 s (restart 1 of at most 8)`);
      expect(rssBytes(gateway!.pid!) - before).toBeLessThan(RSS_GROWTH_BOUND);
      await builtinStillWorks();
      await until(() => gateway!.stderr().includes('bulkhead: hostile is up (2 tools) again\n'), 'the hostile server to be back');
      expect(text(await call('hostile__ping'))).toContain('pong');
    });
  }

  it('counts a reply over the limit during the start as a failed start', async () => {
    const url = await hostileServer('bomb-at-start');
    workspace('', `  hostile:\n    url: ${url}\n`);
    const tools = await run(process.execPath, [GATEWAY_CLI, 'tools', '--root', ws!.root], { timeout: 60_000 });
    expect(tools.stderr).toMatch(
      /^bulkhead: hostile did not start: it sent a reply larger than 64 MiB after decompression, the gateway's limit \(restart 1 of at most 8, (next attempt in 1 s|trying again now)\)$/m,
    );
    expect(tools.stdout).toContain('fs__read_file');
    expect(tools.stdout).not.toContain('hostile__');
  });

  it('cuts a standalone GET stream that sends without end, and restarts the server', async () => {
    const url = await hostileServer('endless-get');
    await startGateway(workspace('', `  hostile:\n    url: ${url}\n`));
    await until(() => gateway!.stderr().includes('bulkhead: hostile is up (2 tools)\n'), 'the hostile server to be up');
    const before = rssBytes(gateway!.pid!);
    const line = "bulkhead: hostile sent more than 64 MiB on one event stream, the gateway's limit for a stream, so it was disconnected; restarting in 1 s (restart 1 of at most 8)";
    await until(() => stderrLines('bulkhead: hostile ').includes(line), 'the report of the cut stream', 60_000);
    expect(rssBytes(gateway!.pid!) - before).toBeLessThan(RSS_GROWTH_BOUND);
    await builtinStillWorks();
  });

  it('drops a server that does not begin its reply within call_timeout_ms, and restarts it', async () => {
    const url = await hostileServer('slow-first-byte');
    await startGateway(workspace('call_timeout_ms: 2000\n', `  hostile:\n    url: ${url}\n`));
    await until(() => gateway!.stderr().includes('bulkhead: hostile is up (2 tools)\n'), 'the hostile server to be up');
    const result = await call('hostile__misbehave');
    expect(result.isError).toBe(true);
    expect(text(result)).toMatch(/timed out/i);
    const line = 'bulkhead: hostile did not begin its reply within 2 s (call_timeout_ms in bulkhead.yaml), so it was disconnected; restarting in 1 s (restart 1 of at most 8)';
    await until(() => stderrLines('bulkhead: hostile ').includes(line), 'the report of the dropped server');
    await builtinStillWorks();
    await until(() => gateway!.stderr().includes('bulkhead: hostile is up (2 tools) again\n'), 'the hostile server to be back');
    expect(text(await call('hostile__ping'))).toContain('pong');
  });

  it('caps an HTTP server that pages tools/list without end', async () => {
    const url = await hostileServer('endless-cursor');
    workspace('', `  hostile:\n    url: ${url}\n`);
    const tools = await run(process.execPath, [GATEWAY_CLI, 'tools', '--root', ws!.root], { timeout: 60_000 });
    expect(tools.stderr).toBe('bulkhead: hostile: it kept paging tools/list past 100 pages; the tools of the first 100 are used\n');
    expect(tools.stdout.match(/hostile__page_\d+/g)).toHaveLength(100);
    expect(tools.stdout).toContain('fs__read_file');
  });

  it('caps the tools/list that a list_changed starts, as it caps the first one', async () => {
    const url = await hostileServer('rug-pull');
    await startGateway(workspace('', `  hostile:\n    url: ${url}\n`));
    await until(() => gateway!.stderr().includes('bulkhead: hostile is up (2 tools)\n'), 'the hostile server to be up');
    expect(text(await call('hostile__misbehave'))).toContain('pulled');
    const note = 'hostile: it kept paging tools/list past 100 pages; the tools of the first 100 are used';
    await until(async () => text(await gateway!.client.callTool({ name: 'tool_search', arguments: { query: 'tool of page' } })).includes(note), 'the capped list');
    const search = await gateway!.client.callTool({ name: 'tool_search', arguments: { query: 'select:hostile__page_99' } });
    expect(text(search)).toContain('hostile__page_99');
    expect(text(await gateway!.client.callTool({ name: 'tool_search', arguments: { query: 'select:hostile__page_100' } }))).not.toContain('hostile__page_100 ');
    await builtinStillWorks();
  });
});

describe('stdio downstreams that send without end', () => {
  it('stops a server that writes one endless line, and the session goes on', async () => {
    await startGateway(workspace('', crashyEntry('crashy', 'endless-line')));
    await until(() => gateway!.stderr().includes('bulkhead: crashy is up (2 tools)\n'), 'the server to be up');
    const before = rssBytes(gateway!.pid!);
    const result = await call('crashy__flood');
    expect(result.isError).toBe(true);
    const breach = "crashy sent a message larger than 64 MiB, the gateway's limit for one message, so it was stopped";
    expect(text(result)).toContain(`${breach} while running flood; the call was not completed; restarting in 1 s (restart 1 of at most 8). Try again shortly.`);
    expect(stderrLines('bulkhead: crashy ')).toContain(`bulkhead: ${breach}; restarting in 1 s (restart 1 of at most 8)`);
    expect(rssBytes(gateway!.pid!) - before).toBeLessThan(RSS_GROWTH_BOUND);
    await builtinStillWorks();
  });

  it('answers a flood of list_changed notifications with one read of the list at a time', async () => {
    const reads = workspace('', '').path('runs.txt');
    const yaml = ws!.path('.bulkhead/bulkhead.yaml');
    writeFileSync(yaml, `${readFileSync(yaml, 'utf8')}${crashyEntry('crashy', 'list-changed-flood', reads)}`);
    await startGateway(ws!);
    await until(() => gateway!.stderr().includes('bulkhead: crashy is up (2 tools)\n'), 'the server to be up');
    const count = () => readFileSync(reads, 'utf8').split('\n').filter(Boolean).length;
    const before = count();
    expect(text(await call('crashy__flood'))).toContain('flooded');
    // Settled when no read has started for a second.
    let last = -1;
    await until(async () => {
      const now = count();
      const settled = now === last && now > before;
      last = now;
      if (!settled) await new Promise((resolve) => setTimeout(resolve, 900));
      return settled;
    }, 'the reads to stop');
    // 2000 notifications: the read they started and one more for those that came during it.
    expect(count() - before).toBeGreaterThanOrEqual(1);
    expect(count() - before).toBeLessThanOrEqual(3);
    await builtinStillWorks();
  });

  it('keeps only the tail of a server that floods stderr, and serves its tools meanwhile', async () => {
    await startGateway(workspace('', crashyEntry('crashy', 'flood-stderr')));
    await until(() => gateway!.stderr().includes('bulkhead: crashy is up (2 tools)\n'), 'the server to be up');
    const before = rssBytes(gateway!.pid!);
    await new Promise((resolve) => setTimeout(resolve, 3000));
    expect(text(await call('crashy__ping'))).toContain('pong from');
    expect(rssBytes(gateway!.pid!) - before).toBeLessThan(RSS_GROWTH_BOUND);
    await builtinStillWorks();
    // The flood is kept for error messages, never relayed.
    expect(gateway!.stderr()).not.toContain('eeeeeeeeee');
  });
});

describe('crashes are visible', () => {
  it('reports a server that exits with its code and its last stderr lines, secrets redacted, and its return', async () => {
    await startGateway(workspace('', crashyEntry('crashy', 'crash-after', '1500', '7')));
    const line = 'bulkhead: crashy stopped (exited with code 7); its last stderr lines: crashy: starting to fail | crashy: using token [REDACTED] | crashy: giving up; restarting in 1 s (restart 1 of at most 8)';
    await until(() => stderrLines('bulkhead: crashy stopped').length > 0, 'the report of the crash');
    expect(stderrLines('bulkhead: crashy stopped')[0]).toBe(line);
    await until(() => gateway!.stderr().includes('bulkhead: crashy is up (2 tools) again\n'), 'the server to be back');
    expect(gateway!.stderr()).not.toContain('ghp_');
  });

  it('reports a killed server, fails calls with why, and gives up after its restart budget when every start fails (bulkhead.yaml restart)', async () => {
    // The default policy's backoff (1 + 2 + 4 + … + 30 s) would make this a two-minute test; its numbers are the supervisor's unit tests'.
    const workspaceDir = workspace('restart:\n  budget: 4\n  initial_delay_ms: 1000\n  max_delay_ms: 1000\n', '');
    // The fixture counts its runs in a file of the workspace.
    const bulkheadYaml = workspaceDir.path('.bulkhead/bulkhead.yaml');
    writeFileSync(bulkheadYaml, `${readFileSync(bulkheadYaml, 'utf8')}${crashyEntry('crashy', 'first-only', workspaceDir.path('runs.txt'))}`);
    await startGateway(workspaceDir);
    await until(() => gateway!.stderr().includes('bulkhead: crashy is up (2 tools)\n'), 'the server to be up');
    const server = childrenOf(gateway!.pid!).find((child) => child.command.includes(CRASHY))!;
    process.kill(server.pid, 'SIGKILL');
    await until(() => stderrLines('bulkhead: crashy stopped').length > 0, 'the report of the kill');
    const killed = 'crashy stopped (killed by SIGKILL); its last stderr lines: crashy: run 1 serving';
    expect(stderrLines('bulkhead: crashy stopped')).toEqual([`bulkhead: ${killed}; restarting in 1 s (restart 1 of at most 4)`]);
    const refused = await call('crashy__ping');
    expect(refused.isError).toBe(true);
    expect(text(refused)).toMatch(new RegExp(`${killed.replace(/[()|]/g, '\\$&')}; restarting (in 1 s|now) \\(restart 1 of at most 4\\); try the call again shortly`));
    await builtinStillWorks();
    // 1 s before each of the 4 restarts, then it is given up on.
    await until(() => gateway!.stderr().includes('bulkhead: crashy is down'), 'the give-up', 30_000);
    const reports = stderrLines('bulkhead: crashy ');
    const delays = [1, 1, 1];
    expect(reports).toEqual([
      'bulkhead: crashy is up (2 tools)',
      `bulkhead: ${killed}; restarting in 1 s (restart 1 of at most 4)`,
      ...delays.map((delay, i) => `bulkhead: crashy did not start: it exited with code 3 (stderr: crashy: run ${i + 2} refuses to start) (restart ${i + 2} of at most 4, next attempt in ${delay} s)`),
      'bulkhead: crashy is down and was given up on after 4 restarts (last error: it exited with code 3 (stderr: crashy: run 5 refuses to start))',
    ]);
    const given = await call('crashy__ping');
    expect(text(given)).toContain('crashy is down and was given up on after 4 restarts (last error: it exited with code 3 (stderr: crashy: run 5 refuses to start)); restart the gateway once it is fixed');
    await new Promise((resolve) => setTimeout(resolve, 2000));
    expect(readFileSync(workspaceDir.path('runs.txt'), 'utf8').trim().split('\n')).toHaveLength(5);
    await builtinStillWorks();
  }, 60_000);

  it("shows a failing server's last stderr lines, redacted, in bulkhead doctor", async () => {
    const script = 'echo "broken: token ghp_0123456789abcdefghijklmnopqrstuvwxyzAB" >&2; echo "broken: cannot open /nonexistent" >&2; exit 4';
    workspace('', `  broken:\n    command: /bin/sh\n    args: ["-c", ${JSON.stringify(script)}]\n`);
    const doctor = await run(process.execPath, [GATEWAY_CLI, 'doctor', '--root', ws!.root]).catch((error: { stdout: string; code: number }) => error);
    expect('code' in doctor ? doctor.code : 0).toBe(1);
    expect(doctor.stdout).toMatch(
      /^fail server broken: broken did not start: it exited with code 4 \(stderr: broken: token \[REDACTED\] \| broken: cannot open \/nonexistent\) \(restart [12] of at most 8, (next attempt in \d s|trying again now)\)$/m,
    );
    expect(doctor.stdout).not.toContain('ghp_');
  });
});

describe('no descendant outlives the gateway', () => {
  const endings = {
    'killed with SIGKILL': (pid: number) => process.kill(pid, 'SIGKILL'),
    'stopped with SIGTERM': (pid: number) => process.kill(pid, 'SIGTERM'),
    'left by its client (stdin closed)': () => void gateway!.close(),
  };
  for (const [how, end] of Object.entries(endings)) {
    it(`ends every process its servers started when it is ${how}`, async () => {
      const pidsFile = workspace('', '').path('pids.json');
      const wrapped = `sleep 300 & exec ${process.execPath} ${CRASHY} grandchildren ${pidsFile}`;
      const yaml = ws!.path('.bulkhead/bulkhead.yaml');
      writeFileSync(yaml, `${readFileSync(yaml, 'utf8')}  wrapped:\n    command: /bin/sh\n    args: ["-c", ${JSON.stringify(wrapped)}]\n`);
      await startGateway(ws!);
      await until(() => gateway!.stderr().includes('bulkhead: wrapped is up (2 tools)\n') && existsSync(pidsFile), 'the wrapped server to be up');
      const pids = JSON.parse(readFileSync(pidsFile, 'utf8')) as { server: number; sameGroup: number; ownGroup: number; ownSession: number };
      leftovers.push(...Object.values(pids));
      // The variants are what they claim: one left the server's group, one its session too.
      const [serverGroup, serverSession] = groupAndSession(pids.server);
      expect(groupAndSession(pids.ownGroup)).toEqual([pids.ownGroup, serverSession]);
      expect(groupAndSession(pids.ownSession)[1]).not.toBe(serverSession);
      expect(groupAndSession(pids.sameGroup)).toEqual([serverGroup, serverSession]);
      const shellSleep = childrenOf(pids.server).find((child) => child.command === 'sleep 300');
      expect(shellSleep).toBeDefined();
      const everything = [...new Set([...descendants(gateway!.pid!), ...Object.values(pids)])];
      leftovers.push(...everything);
      // The watchdog and every downstream (fs, wrapped) with their children.
      expect(everything.length).toBeGreaterThanOrEqual(7);
      end(gateway!.pid!);
      await until(() => everything.every((pid) => !running(pid)), () => `every descendant to end (still running: ${everything.filter(running).join(', ')})`, 15_000);
    });
  }

  it('replaces a watchdog that was killed, and the new one still ends everything when the gateway is killed', async () => {
    const pidsFile = workspace('', '').path('pids.json');
    const yaml = ws!.path('.bulkhead/bulkhead.yaml');
    writeFileSync(yaml, `${readFileSync(yaml, 'utf8')}${crashyEntry('wrapped', 'grandchildren', pidsFile)}`);
    await startGateway(ws!);
    await until(() => gateway!.stderr().includes('bulkhead: wrapped is up (2 tools)\n') && existsSync(pidsFile), 'the wrapped server to be up');
    const watchdogs = () => childrenOf(gateway!.pid!).filter((child) => child.command.endsWith('/downstream/watchdog.js'));
    expect(watchdogs()).toHaveLength(1);
    const first = watchdogs()[0]!.pid;
    process.kill(first, 'SIGKILL');
    await until(() => {
      // One look at the process table: the killed one may vanish between two.
      const now = watchdogs();
      return now.length === 1 && now[0]!.pid !== first;
    }, 'a new watchdog');
    const pids = JSON.parse(readFileSync(pidsFile, 'utf8')) as Record<string, number>;
    const everything = [...new Set([...descendants(gateway!.pid!), ...Object.values(pids)])];
    leftovers.push(...everything);
    process.kill(gateway!.pid!, 'SIGKILL');
    await until(() => everything.every((pid) => !running(pid)), () => `every descendant to end (still running: ${everything.filter(running).join(', ')})`, 15_000);
  });

  it("ends what a restarted server left in its session when that server dies, and the gateway goes on", async () => {
    const pidsFile = workspace('', '').path('pids.json');
    const yaml = ws!.path('.bulkhead/bulkhead.yaml');
    writeFileSync(yaml, `${readFileSync(yaml, 'utf8')}${crashyEntry('wrapped', 'grandchildren', pidsFile)}`);
    await startGateway(ws!);
    await until(() => gateway!.stderr().includes('bulkhead: wrapped is up (2 tools)\n') && existsSync(pidsFile), 'the wrapped server to be up');
    const pids = JSON.parse(readFileSync(pidsFile, 'utf8')) as { server: number; sameGroup: number; ownGroup: number; ownSession: number };
    leftovers.push(...Object.values(pids));
    process.kill(pids.server, 'SIGKILL');
    await until(() => !running(pids.sameGroup) && !running(pids.ownGroup), 'the group and the session to end', 15_000);
    await until(() => gateway!.stderr().includes('bulkhead: wrapped is up (2 tools) again\n'), 'the server to be back');
    await builtinStillWorks();
  });
});
