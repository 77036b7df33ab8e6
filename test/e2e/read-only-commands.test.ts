import { spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readdirSync, realpathSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { startStdioServer } from '@bulkhead/core/testing';
import { GATEWAY_CLI, text } from './helpers.js';

const made: string[] = [];

afterEach(() => {
  for (const folder of made.splice(0)) rmSync(folder, { recursive: true, force: true });
});

function emptyFolder(prefix: string): string {
  const folder = realpathSync(mkdtempSync(join(tmpdir(), prefix)));
  made.push(folder);
  return folder;
}

/** Runs the built CLI in a fresh empty folder (its default root) with a fresh empty HOME. */
function runInEmptyFolder(args: readonly string[]) {
  const folder = emptyFolder('bulkhead-read-only-');
  const home = emptyFolder('bulkhead-home-');
  const result = spawnSync(process.execPath, [GATEWAY_CLI, ...args], { cwd: folder, env: { PATH: process.env['PATH']!, HOME: home }, encoding: 'utf8', timeout: 60_000 });
  return { ...result, folder, home };
}

describe('read-only commands in an empty folder', () => {
  it('bulkhead tools lists the tools and leaves the folder empty', () => {
    const run = runInEmptyFolder(['tools']);
    expect(run.status).toBe(0);
    expect(run.stdout).toContain('  fs__read_file — ');
    expect(run.stdout).toContain('  ladder__lane_list — ');
    expect(readdirSync(run.folder)).toEqual([]);
    expect(readdirSync(run.home)).toEqual([]);
  });

  it('bulkhead search finds tools and leaves the folder empty', () => {
    const run = runInEmptyFolder(['search', 'read a text file']);
    expect(run.status).toBe(0);
    expect(run.stdout).toMatch(/^\d+\. fs__read_file \(score [\d.]+\)$/m);
    expect(readdirSync(run.folder)).toEqual([]);
    expect(readdirSync(run.home)).toEqual([]);
  });

  it('bulkhead doctor prints its checks and leaves the folder empty', () => {
    const run = runInEmptyFolder(['doctor']);
    expect(run.stdout).toMatch(/^ok {3}node: v\d+/m);
    expect(run.stdout).toMatch(/^(ok|warn) +git: /m);
    expect(run.stdout).toContain(`ok   configuration: no control-plane folder at ${join(run.folder, '.bulkhead')}: every default applies (bulkhead config init writes one to edit)\n`);
    expect(run.stdout).toContain('ok   server shell: no tools: shell_policy.yaml enables none\n');
    expect(run.stdout).toContain('ok   server fs: 4 tools\n');
    expect(run.stdout).toContain('ok   server ladder: 20 tools\n');
    expect(readdirSync(run.folder)).toEqual([]);
    expect(readdirSync(run.home)).toEqual([]);
  });

  it('bulkhead audit verify says there are no logs yet (exit 0) and leaves the folder empty', () => {
    const run = runInEmptyFolder(['audit', 'verify']);
    expect(run.status).toBe(0);
    expect(run.stdout).toBe(`no audit logs in ${join(run.folder, '.bulkhead', 'audit')} yet: no call has been audited\n`);
    expect(run.stderr).toBe('');
    expect(readdirSync(run.folder)).toEqual([]);
  });

  it('bulkhead start writes nothing until the first call but its console\'s secret and address, and then only what that call needs', async () => {
    const folder = emptyFolder('bulkhead-read-only-');
    const gateway = await startStdioServer({ script: GATEWAY_CLI, args: ['start'], cwd: folder, env: { HOME: emptyFolder('bulkhead-home-') } });
    try {
      expect((await gateway.client.listTools()).tools.map((tool) => tool.name)).toContain('fs__read_file');
      // The console is found through the control-plane folder (`bulkhead console`), so it is written there.
      expect(readdirSync(folder, { recursive: true }).sort()).toEqual(['.bulkhead', '.bulkhead/keys', '.bulkhead/keys/console.secret', '.bulkhead/keys/consoles', `.bulkhead/keys/consoles/${gateway.pid}.json`]);
      // A reading call of the ladder answers from an empty ladder without making its database.
      const lanes = await gateway.client.callTool({ name: 'call_tool', arguments: { name: 'ladder__lane_list', arguments: {} } });
      expect(lanes.isError).toBeFalsy();
      expect(text(lanes)).toContain('no lanes');
      expect(readdirSync(join(folder, '.bulkhead')).sort()).toEqual(['audit', 'keys', 'pins.json']);
      expect(existsSync(join(folder, '.bulkhead', 'ladder.db'))).toBe(false);
    } finally {
      await gateway.close();
    }
  });
});
