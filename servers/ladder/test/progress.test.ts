import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
/** A progress notification's params as a client's onprogress gets them. */
type Progress = { progress: number; total?: number; message?: string };
import { auditPolicySchema, PermissionGate } from '@bulkhead/core';
import { connectInProcess, tempWorkspace, type TempWorkspace } from '@bulkhead/core/testing';
import { ladderPolicySchema } from '../src/policy.js';
import { createLadderServer } from '../src/server.js';
import { commit, git } from './ladder-helpers.js';

let ws: TempWorkspace | undefined;
let closeAll: (() => Promise<void>) | undefined;
afterEach(async () => {
  await closeAll?.();
  ws?.cleanup();
  closeAll = undefined;
  ws = undefined;
});

describe('progress of ladder_reindex', () => {
  it('says what it is doing: rebuilding the index, then measuring freshness', async () => {
    ws = tempWorkspace({}, 'bulkhead-ladder-progress-');
    const repoDir = ws.mkdir('repo');
    git(repoDir, ['init', '-q']);
    commit(repoDir, 'first', { 'README.md': '# widgets\n' });
    const controlDir = ws.path('.bulkhead');
    mkdirSync(controlDir, { recursive: true });
    writeFileSync(join(controlDir, 'permissions.yaml'), 'allow:\n  - ladder\n');
    const server = await createLadderServer({
      roots: [repoDir],
      controlDir,
      gate: { kind: 'self', permissions: PermissionGate.load(controlDir) },
      audit: auditPolicySchema.parse({ enabled: false }),
      policy: ladderPolicySchema.parse({ actor: 'ada' }),
    });
    const { client, close } = await connectInProcess(server);
    closeAll = async () => {
      await close();
      await server.close();
    };
    await client.callTool({ name: 'ladder_write_rung', arguments: { rungs: [{ path: 'README.md', kind: 'file', commit: 'HEAD', summary: 'The readme' }] } });
    const updates: Progress[] = [];
    const result = await client.callTool({ name: 'ladder_reindex', arguments: {} }, undefined, { onprogress: (update) => updates.push(update) });
    expect((result.structuredContent as { reindex: { indexed: number } }).reindex.indexed).toBe(1);
    expect(updates[0]).toEqual({ progress: 1, message: 'ladder_reindex: rebuilding the search index' });
    // The second word comes within the second the kit holds a report for, so a quick call may end before it is sent.
    expect(updates.slice(1)).toEqual(updates.length > 1 ? [{ progress: 2, message: 'ladder_reindex: 1 rung indexed; measuring their freshness at HEAD' }] : []);
  });
});
