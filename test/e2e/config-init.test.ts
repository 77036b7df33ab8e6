import { execFileSync, spawnSync } from 'node:child_process';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { loadYamlFile } from '@bulkhead/core';
import { startStdioServer, tempWorkspace, type ServerProcess, type TempWorkspace } from '@bulkhead/core/testing';
import { policySchemas, repo } from '../../scripts/policy-schemas.mjs';
import { GATEWAY_CLI, text } from './helpers.js';

const workspaces: TempWorkspace[] = [];
let gateway: ServerProcess | undefined;

afterEach(async () => {
  await gateway?.close();
  gateway = undefined;
  for (const ws of workspaces.splice(0)) ws.cleanup();
});

function workspace(files: Record<string, string> = {}): TempWorkspace {
  const ws = tempWorkspace(files, 'bulkhead-config-init-');
  workspaces.push(ws);
  return ws;
}

const GIT_ENV = { PATH: process.env['PATH']!, HOME: '/nonexistent', GIT_CONFIG_GLOBAL: '/dev/null', GIT_CONFIG_NOSYSTEM: '1' };

function bulkhead(...args: string[]): string {
  return execFileSync(process.execPath, [GATEWAY_CLI, ...args], { encoding: 'utf8', env: { PATH: process.env['PATH']!, HOME: '/nonexistent' } });
}

/** What `bulkhead doctor` says of each downstream server: the compartments the gateway runs. */
function compartments(root: string): string[] {
  return bulkhead('doctor', '--root', root)
    .split('\n')
    .filter((line) => / server /.test(line));
}

const MODELINE = /^# yaml-language-server: \$schema=(https:\/\/raw\.githubusercontent\.com\/([^/]+\/[^/]+)\/main\/schemas\/([a-z_]+\.schema\.json))$/;

describe('bulkhead config init', () => {
  it('writes every policy file, each starting with its schema line and loading to what a folder without it gets', async () => {
    const ws = workspace();
    const written = bulkhead('config', 'init', '--root', ws.root);
    const { entries } = await policySchemas();
    const names = [...entries.map(([file]) => file), '.gitignore'];
    expect(written.split('\n').filter(Boolean).sort()).toEqual(names.map((name) => `wrote ${ws.path(`.bulkhead/${name}`)}`).sort());
    expect(readdirSync(ws.path('.bulkhead')).sort()).toEqual([...names].sort());

    const repository = (JSON.parse(readFileSync(join(repo, 'servers/gateway/package.json'), 'utf8')) as { repository?: { url?: string } }).repository?.url;
    for (const [file, schema] of entries) {
      const firstLine = readFileSync(ws.path(`.bulkhead/${file}`), 'utf8').split('\n')[0]!;
      const [, , ownerAndName, schemaFile] = MODELINE.exec(firstLine) ?? [];
      expect(schemaFile, file).toBe(file.replace(/\.yaml$/, '.schema.json'));
      // The URL names a schema the repository publishes, in the repository the packages name.
      expect(existsSync(join(repo, 'schemas', schemaFile!)), schemaFile).toBe(true);
      if (repository) expect(repository).toContain(`github.com/${ownerAndName}`);
      const loaded = loadYamlFile(ws.path('.bulkhead'), file, schema as unknown as Parameters<typeof loadYamlFile>[2]).value;
      expect(loaded, file).toEqual(schema.parse({}));
    }
  });

  it('gives the gateway the same compartments and tools as no control-plane folder at all', () => {
    const bare = workspace();
    const initialised = workspace();
    bulkhead('config', 'init', '--root', initialised.root);
    expect(bulkhead('tools', '--root', initialised.root)).toBe(bulkhead('tools', '--root', bare.root));
    const servers = compartments(initialised.root);
    expect(servers).toEqual(compartments(bare.root));
    expect(servers.map((line) => / server (\w+):/.exec(line)?.[1])).toEqual(['fs', 'fs_write', 'shell', 'web', 'git', 'ladder']);
  });

  it('keeps an existing file, and keeps what the servers write, and secrets, out of git', async () => {
    const ws = workspace({ 'a.txt': 'a\n', '.bulkhead/permissions.yaml': 'allow:\n  - fs_write\n  - ladder\n' });
    const written = bulkhead('config', 'init', '--root', ws.root);
    expect(written).toContain(`kept ${ws.path('.bulkhead/permissions.yaml')} (it exists)\n`);
    expect(readFileSync(ws.path('.bulkhead/permissions.yaml'), 'utf8')).toBe('allow:\n  - fs_write\n  - ladder\n');
    execFileSync('git', ['init', '-q'], { cwd: ws.root, env: GIT_ENV });

    // Real use makes the runtime state: audit logs, pins, the ladder's database, the trash.
    gateway = await startStdioServer({ script: GATEWAY_CLI, args: ['start', '--root', ws.root] });
    const call = async (name: string, args: Record<string, unknown>) => text(await gateway!.client.callTool({ name: 'call_tool', arguments: { name, arguments: args } }));
    expect(await call('fs__read_file', { path: 'a.txt' })).toContain('a');
    expect(await call('ladder__lane_propose', { title: 'Ship it' })).toContain('Ship it');
    expect(await call('fs_write__write_file', { path: 'b.txt', content: 'b\n' })).toContain('Created');
    expect(await call('fs_write__delete_path', { path: 'b.txt' })).toContain('trash');
    await gateway.close();
    gateway = undefined;
    const state = readdirSync(ws.path('.bulkhead'));
    expect(state).toEqual(expect.arrayContaining(['audit', 'pins.json', 'ladder.db', 'trash']));

    const untracked = execFileSync('git', ['status', '--porcelain', '--untracked-files=all', '--', '.bulkhead'], { cwd: ws.root, env: GIT_ENV, encoding: 'utf8' });
    const policies = readdirSync(ws.path('.bulkhead')).filter((name) => name.endsWith('.yaml') || name === '.gitignore');
    expect(untracked.split('\n').filter(Boolean).sort()).toEqual(policies.map((name) => `?? .bulkhead/${name}`).sort());

    // What exists only at times (while a server runs, or once enabled) is ignored as well.
    const ignored = (path: string) => spawnSync('git', ['check-ignore', '-q', path], { cwd: ws.root, env: GIT_ENV }).status === 0;
    for (const path of ['audit/gateway.jsonl', 'audit/ladder.jsonl.owner', 'trash/20260101-000000-abcd/entry', 'ladder.db', 'ladder.db-wal', 'ladder.db-shm', 'shell/tasks/1-abc/bash_1.log', 'keys/receipt.key', 'readonly.token', 'brave.key', 'pins.json']) {
      expect(ignored(`.bulkhead/${path}`), path).toBe(true);
    }
    for (const name of policies) expect(ignored(`.bulkhead/${name}`), name).toBe(false);
  });
});
