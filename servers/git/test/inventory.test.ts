import { fileURLToPath } from 'node:url';
import { afterEach, describe, expect, it } from 'vitest';
import { inventoryProblems, surfaceSnapshot } from '@bulkhead/core/testing';
import { gitReadTools, gitTools } from '@bulkhead/git';
import { startGit, type GitHarness } from './helpers.js';

const toolsDir = fileURLToPath(new URL('../src/tools', import.meta.url));
const READ_TOOLS = ['git_status', 'git_log', 'git_diff', 'git_show', 'git_show_file', 'git_blame', 'git_refs'];

describe('git tool inventory', () => {
  it('has no inventory problems; the reading tools are all read-only', () => {
    expect(inventoryProblems(gitReadTools, { toolsDir, readOnly: true })).toEqual([]);
    expect(inventoryProblems(gitTools, { toolsDir, readOnly: false })).toEqual([]);
    expect(inventoryProblems(gitTools, { toolsDir, readOnly: true })).toEqual(['commit_changeset: a read-only server exposes a tool without readOnlyHint']);
  });

  it('keeps its public surface stable (reviewed snapshot)', () => {
    expect(surfaceSnapshot(gitTools)).toMatchSnapshot();
  });
});

describe('tools/list over MCP', () => {
  let h: GitHarness;
  afterEach(async () => {
    await h.close();
  });

  it('lists the seven reading tools, risk low, and never commit_changeset by default', async () => {
    h = await startGit();
    const { tools } = await h.client.listTools();
    expect(tools.map((tool) => tool.name)).toEqual(READ_TOOLS);
    for (const tool of tools) {
      expect(tool.annotations).toMatchObject({ readOnlyHint: true, destructiveHint: false, idempotentHint: true, openWorldHint: false });
      expect(tool._meta).toMatchObject({ 'bulkhead/risk': 'low' });
      expect(tool.outputSchema?.type).toBe('object');
    }
    const call = await h.client.callTool({ name: 'commit_changeset', arguments: {} }).catch((error: Error) => error.message);
    expect(call).toContain('Unknown tool commit_changeset. Available tools: git_status, git_log');
  });

  it('registers commit_changeset (risk medium, not read-only) only with allow_write: true', async () => {
    h = await startGit({ policy: { allow_write: true } });
    const { tools } = await h.client.listTools();
    expect(tools.map((tool) => tool.name)).toEqual([...READ_TOOLS, 'commit_changeset']);
    const commit = tools.at(-1)!;
    expect(commit.annotations).toMatchObject({ readOnlyHint: false, destructiveHint: false, idempotentHint: false, openWorldHint: false });
    expect(commit._meta).toEqual({ 'bulkhead/risk': 'medium', 'bulkhead/subject': 'branch' });
    expect(commit.inputSchema.required).toEqual(['branch', 'files', 'message', 'expected_head']);
  });

  it('leaves out a tool switched off, and everything when the server is disabled', async () => {
    h = await startGit({ policy: { tools: { git_blame: { enabled: false } } } });
    expect((await h.client.listTools()).tools.map((tool) => tool.name)).not.toContain('git_blame');
    await h.close();
    h = await startGit({ policy: { enabled: false, allow_write: true } });
    expect((await h.client.listTools()).tools).toEqual([]);
  });
});
