import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { afterEach, describe, expect, it } from 'vitest';
import { ApprovalStore } from '@bulkhead/core';
import { inventoryProblems, surfaceSnapshot } from '@bulkhead/core/testing';
import { fsWriteTools } from '@bulkhead/fs-write';
import { startFsWrite, type FsWriteHarness } from './helpers.js';

const toolsDir = fileURLToPath(new URL('../src/tools', import.meta.url));

let fsw: FsWriteHarness | undefined;
afterEach(async () => {
  await fsw?.close();
  fsw = undefined;
});

describe('fs_write tool inventory', () => {
  it('has no inventory problems: one file per tool, every annotation stated', () => {
    expect(inventoryProblems(fsWriteTools, { toolsDir, readOnly: false })).toEqual([]);
  });

  it('keeps its public surface stable (reviewed snapshot)', () => {
    expect(surfaceSnapshot(fsWriteTools)).toMatchSnapshot();
  });

  it('asks before every tool under the default autonomy, so a call of a client without elicitation waits for a human', async () => {
    fsw = await startFsWrite({ 'a.txt': 'a\n' }, { permissions: 'approval_wait_ms: 0\n' });
    const result = await fsw.call('write_file', { path: 'a.txt', content: 'b\n' });
    expect(result.isError).toBe(true);
    expect(result.text).toMatch(/^fs_write:write_file is waiting for a human's approval \(approval [a-z2-9]{8}\); nothing was run yet\. /);
    expect(new ApprovalStore(fsw.controlDir).pending()[0]?.reason).toContain('fs_write:write_file is medium risk and autonomy is supervised');
    expect(readFileSync(fsw.ws.path('a.txt'), 'utf8')).toBe('a\n');
  });

  it('leaves out a tool its policy disables', async () => {
    fsw = await startFsWrite({}, { policy: { tools: { delete_path: { enabled: false } } } });
    await expect(fsw.call('delete_path', { path: 'a.txt' })).rejects.toThrow(
      'MCP error -32602: Unknown tool delete_path. Available tools: write_file, edit_file, multi_edit, create_directory, move_path.',
    );
  });
});
