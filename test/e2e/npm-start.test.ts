// `npm start` as a user runs it from a clone: the gateway over the folder npm was started in, on
// Streamable HTTP, with every default compartment; and a signal to npm stops every process.
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterEach, describe, expect, it } from 'vitest';
import { connectHttp, printedToken } from '@bulkhead/core/testing';
import { alive, descendants, text } from './helpers.js';

const REPO = fileURLToPath(new URL('../..', import.meta.url));

let folder: string;
let npm: ChildProcess | undefined;

/** npm and everything it started, noted while they run, so that none outlives a failed test. */
let tree: number[] = [];

afterEach(() => {
  for (const pid of tree.filter(alive)) process.kill(pid, 'SIGKILL');
  tree = [];
  npm = undefined;
  rmSync(folder, { recursive: true, force: true });
});

async function npmStart(): Promise<{ url: string; headers: Record<string, string>; output: () => string }> {
  folder = mkdtempSync(join(tmpdir(), 'bulkhead-npm-start-'));
  writeFileSync(join(folder, 'hello.txt'), 'hello\n');
  npm = spawn('npm', ['--prefix', REPO, 'start'], { cwd: folder, env: { ...process.env, PORT: '0' }, stdio: ['ignore', 'pipe', 'pipe'], detached: true });
  let output = '';
  npm.stdout!.on('data', (chunk: Buffer) => (output += chunk.toString()));
  npm.stderr!.on('data', (chunk: Buffer) => (output += chunk.toString()));
  const url = await new Promise<string>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`npm start printed no URL in 60 s:\n${output}`)), 60_000);
    const poll = setInterval(() => {
      const match = /listening on (http:\/\/\S+)/.exec(output);
      if (match && output.includes('Ctrl-C stops it.')) {
        clearInterval(poll);
        clearTimeout(timer);
        tree = [npm!.pid!, ...descendants(npm!.pid!)];
        resolve(match[1]!);
      }
    }, 100);
  });
  // As a user does: the token from the banner's client snippets.
  return { url, headers: { authorization: `Bearer ${printedToken(output)}` }, output: () => output };
}

describe('npm start', () => {
  it('serves the folder npm was started in with every default compartment', async () => {
    const { url, headers, output } = await npmStart();
    expect(output()).toContain(`roots: ${folder}\n`);
    expect(output()).toContain(`bearer token: made now and kept in ${join(folder, '.bulkhead', 'keys', 'bulkhead.http.token')} (mode 0600;`);
    const refused = await fetch(url, { method: 'POST', headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream' }, body: '{}' });
    expect(refused.status).toBe(401);
    const client = await connectHttp(url, headers);
    try {
      expect(text(await client.callTool({ name: 'fs__read_file', arguments: { path: 'hello.txt' } }))).toBe('     1\thello');
      const everything = text(await client.callTool({ name: 'list_tools', arguments: {} }));
      expect(everything).toMatch(/namespaces: fs, fs_write, git, ladder, web\]$/);
    } finally {
      await client.close();
    }
  });

  // As they arrive in life: kill(1) and process managers signal npm's pid; Ctrl-C and a closing
  // terminal signal the whole foreground process group.
  const deliveries = [
    ['SIGTERM', 'npm alone'],
    ['SIGKILL', 'npm alone'],
    ['SIGTERM', 'the process group'],
    ['SIGINT', 'the process group'],
    ['SIGHUP', 'the process group'],
  ] as const;
  for (const [signal, to] of deliveries) {
    it(`stops the gateway and every compartment on ${signal} to ${to}`, async () => {
      const { url, headers } = await npmStart();
      const client = await connectHttp(url, headers);
      await client.callTool({ name: 'list_tools', arguments: {} });
      await client.close();
      const processes = descendants(npm!.pid!);
      // npm, its shell, the gateway and its compartments.
      expect(processes.length).toBeGreaterThanOrEqual(6);
      process.kill(to === 'npm alone' ? npm!.pid! : -npm!.pid!, signal);
      await expect.poll(() => [npm!.pid!, ...processes].filter(alive), { timeout: 15_000, interval: 200 }).toEqual([]);
    });
  }
});
