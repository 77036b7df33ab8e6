import { execFileSync } from 'node:child_process';
import { afterEach, describe, expect, it } from 'vitest';
import { startStdioServer, tempWorkspace, type ServerProcess, type TempWorkspace } from '@bulkhead/core/testing';
import { GATEWAY_CLI, GIT_CLI, text } from './helpers.js';

let ws: TempWorkspace;
let server: ServerProcess | undefined;

afterEach(async () => {
  await server?.close();
  server = undefined;
  ws?.cleanup();
});

const GIT_ENV = { PATH: process.env['PATH']!, HOME: '/nonexistent', GIT_CONFIG_GLOBAL: '/dev/null', GIT_CONFIG_NOSYSTEM: '1', GIT_AUTHOR_NAME: 'A', GIT_AUTHOR_EMAIL: 'a@x', GIT_COMMITTER_NAME: 'A', GIT_COMMITTER_EMAIL: 'a@x' };

/** A workspace that is itself a repository with one commit, plus the given control-plane files. */
function repository(files: Record<string, string> = {}): { ws: TempWorkspace; head: string } {
  const w = tempWorkspace({ 'a.txt': 'hello\n', ...files });
  const git = (...args: string[]) => execFileSync('git', ['-c', 'init.defaultBranch=main', ...args], { cwd: w.root, env: GIT_ENV, encoding: 'utf8' });
  git('init', '-q');
  git('add', 'a.txt');
  git('commit', '-q', '-m', 'first');
  return { ws: w, head: git('rev-parse', 'HEAD').trim() };
}

describe('bulkhead-git as a process', () => {
  it('serves the reading tools over stdio and leaves commit_changeset out by default', async () => {
    const made = repository();
    ws = made.ws;
    server = await startStdioServer({ script: GIT_CLI, args: ['--root', ws.root] });
    expect((await server.client.listTools()).tools.map((t) => t.name)).toEqual(['git_status', 'git_log', 'git_diff', 'git_show', 'git_show_file', 'git_blame', 'git_refs']);
    const log = await server.client.callTool({ name: 'git_log', arguments: {} });
    expect(log.structuredContent).toMatchObject({ commits: [{ hash: made.head, subject: 'first' }], next_skip: null });
    expect(text(await server.client.callTool({ name: 'git_show_file', arguments: { rev: 'HEAD', path: 'a.txt' } }))).toBe('     1\thello');
    expect(server.stderr()).toContain(`bulkhead-git: serving 7 tools over stdio (roots: ${ws.root})`);
  });

  it('registers commit_changeset with allow_write, and the gateway starts git from bulkhead.yaml', async () => {
    const made = repository({
      '.bulkhead/bulkhead.yaml': 'servers:\n  git: {}\n',
      '.bulkhead/git_policy.yaml': 'allow_write: true\n',
      '.bulkhead/permissions.yaml': 'allow:\n  - git\n',
    });
    ws = made.ws;
    server = await startStdioServer({ script: GATEWAY_CLI, args: ['start', '--root', ws.root] });
    const listed = await server.client.callTool({ name: 'list_tools', arguments: { namespace: 'git' } });
    expect(text(listed)).toContain('git__commit_changeset');
    const committed = await server.client.callTool({
      name: 'call_tool',
      arguments: { name: 'git:commit_changeset', arguments: { branch: 'main', expected_head: made.head, message: 'through the gateway', files: [{ path: 'b.txt', content: 'b\n' }] } },
    });
    expect(committed.isError).toBeFalsy();
    expect(text(committed)).toMatch(/^Committed [0-9a-f]{40} on main \(parent [0-9a-f]{40}\):\n {2}created b\.txt/);
    const log = await server.client.callTool({ name: 'call_tool', arguments: { name: 'git__git_log', arguments: { max_count: 1 } } });
    expect(text(log)).toContain('    through the gateway');
  });
});
