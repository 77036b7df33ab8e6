import { mkdirSync, writeFileSync } from 'node:fs';
import { afterEach, describe, expect, it } from 'vitest';
import { startStdioServer, tempWorkspace, type ServerProcess, type TempWorkspace } from '@bulkhead/core/testing';
import { GIT_CLI, startAttackServer, type AttackServer } from './attack-kit.js';
import { commit, initRepo } from './helpers.js';

/**
 * Issue 15, item 12: a 10 MB argument reached spawn (`spawn E2BIG`). Every string and array
 * argument of every git tool has a bound in its schema, refused with a message before git runs;
 * deep or huge structures are refused by the core before any schema.
 */

const HUGE = 'a'.repeat(10 * 1024 * 1024);

/** Every string argument of every tool, with the other arguments it needs. */
const STRING_ARGUMENTS: [tool: string, argument: string, others: Record<string, unknown>][] = [
  ['git_status', 'repo', {}],
  ['git_log', 'repo', {}],
  ['git_log', 'rev', {}],
  ['git_log', 'path', {}],
  ['git_log', 'since', {}],
  ['git_log', 'until', {}],
  ['git_log', 'author', {}],
  ['git_log', 'grep', {}],
  ['git_diff', 'repo', {}],
  ['git_diff', 'from', {}],
  ['git_diff', 'to', { from: 'HEAD' }],
  ['git_diff', 'path', {}],
  ['git_show', 'repo', { rev: 'HEAD' }],
  ['git_show', 'rev', {}],
  ['git_show_file', 'repo', { rev: 'HEAD', path: 'a.txt' }],
  ['git_show_file', 'rev', { path: 'a.txt' }],
  ['git_show_file', 'path', { rev: 'HEAD' }],
  ['git_blame', 'repo', { path: 'a.txt' }],
  ['git_blame', 'path', {}],
  ['git_blame', 'rev', { path: 'a.txt' }],
  ['git_refs', 'repo', { kind: 'all' }],
  ['commit_changeset', 'repo', { branch: 'main', expected_head: 'HEAD', message: 'm', files: [{ path: 'b.txt', content: 'b\n' }] }],
  ['commit_changeset', 'branch', { expected_head: 'HEAD', message: 'm', files: [{ path: 'b.txt', content: 'b\n' }] }],
  ['commit_changeset', 'message', { branch: 'main', expected_head: 'HEAD', files: [{ path: 'b.txt', content: 'b\n' }] }],
  ['commit_changeset', 'expected_head', { branch: 'main', message: 'm', files: [{ path: 'b.txt', content: 'b\n' }] }],
  ['commit_changeset', 'author', { branch: 'main', expected_head: 'HEAD', message: 'm', files: [{ path: 'b.txt', content: 'b\n' }] }],
];

let h: AttackServer | undefined;
let process_: ServerProcess | undefined;
let ws: TempWorkspace | undefined;
afterEach(async () => {
  await h?.close();
  await process_?.close();
  ws?.cleanup();
  h = undefined;
  process_ = undefined;
  ws = undefined;
});

describe('a 10 MB argument to every git tool', () => {
  it.each(STRING_ARGUMENTS)('%s %s: refused with the bound, before git runs', async (tool, argument, others) => {
    h = await startAttackServer({ policy: { allow_write: true } });
    const repo = initRepo(h.ws.path('repo'));
    commit(repo, 'one', { 'a.txt': 'a\n' });
    // Refused by the validation step of the chain, which comes before the tool: no git runs.
    const result = await h.call(tool, { repo: 'repo', ...others, [argument]: HUGE });
    expect(result.isError).toBe(true);
    expect(result.text).toMatch(new RegExp(`^Invalid arguments for git:${tool}: \`${argument}\`: Too big: expected string to have <=\\d+ characters$`));
    expect(result.text).not.toContain('E2BIG');
  });

  it('commit_changeset: a 10 MB file path, 10,001 files, files nested 100,000 deep, a 20 MB request', async () => {
    h = await startAttackServer({ policy: { allow_write: true } });
    const repo = initRepo(h.ws.path('repo'));
    commit(repo, 'one', { 'a.txt': 'a\n' });
    const base = { repo: 'repo', branch: 'main', expected_head: 'HEAD', message: 'm' };
    expect((await h.call('commit_changeset', { ...base, files: [{ path: HUGE, content: 'x' }] })).text).toMatch(/^Invalid arguments for git:commit_changeset: `files\.0\.path`: Too big: expected string to have <=4096 characters/);
    expect((await h.call('commit_changeset', { ...base, files: Array.from({ length: 10_001 }, (_, i) => ({ path: `f${i}`, content: '' })) })).text).toMatch(/^Invalid arguments for git:commit_changeset: `files`: Too big: expected array to have <=10000 items/);
    let deep: unknown = { path: 'x', content: 'y' };
    for (let i = 0; i < 100_000; i++) deep = [deep];
    expect((await h.call('commit_changeset', { ...base, files: deep })).text).toBe('Invalid arguments for git:commit_changeset: `files.0.0.0.0.0.…` nests deeper than 64 levels of arrays and objects; send a flatter value');
    expect((await h.call('commit_changeset', { ...base, files: [{ path: 'b.txt', content: 'x'.repeat(20 * 1024 * 1024) }] })).text).toBe(
      "Invalid arguments for git:commit_changeset: the arguments are larger than this server's request limit (16777216 bytes); send less per call",
    );
  });

  it('over stdio (a real server process), a 10 MB path is refused with the bound, not spawn E2BIG', async () => {
    ws = tempWorkspace({}, 'bulkhead-git-bounds-');
    const repo = initRepo(ws.path('repo'));
    commit(repo, 'one', { 'a.txt': 'a\n' });
    mkdirSync(ws.path('.bulkhead'));
    writeFileSync(ws.path('.bulkhead/permissions.yaml'), 'allow:\n  - git\n');
    writeFileSync(ws.path('.bulkhead/audit_policy.yaml'), 'enabled: false\n');
    process_ = await startStdioServer({ script: GIT_CLI, args: ['--root', ws.root] });
    for (const tool of ['git_log', 'git_blame', 'git_show_file', 'git_diff']) {
      const reply = (await process_.client.callTool({ name: tool, arguments: { repo: 'repo', rev: 'HEAD', path: HUGE } })) as { isError?: boolean; content: { text: string }[] };
      expect(reply.isError).toBe(true);
      expect(reply.content[0]!.text).toMatch(new RegExp(`^Invalid arguments for git:${tool}: \`path\`: Too big: expected string to have <=4096 characters`));
    }
  });
});
