import { fileURLToPath } from 'node:url';
import { afterEach, describe, expect, it } from 'vitest';
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

  it('asks before every tool under the default autonomy, so a client without elicitation is refused', async () => {
    fsw = await startFsWrite({ 'a.txt': 'a\n' }, { permissions: '' });
    const result = await fsw.call('write_file', { path: 'a.txt', content: 'b\n' });
    expect(result.isError).toBe(true);
    expect(result.text).toContain('fs_write:write_file is medium risk and autonomy is supervised');
    expect(result.text).toContain('nothing was run');
  });

  it('leaves out a tool its policy disables', async () => {
    fsw = await startFsWrite({}, { policy: { tools: { delete_path: { enabled: false } } } });
    await expect(fsw.call('delete_path', { path: 'a.txt' })).rejects.toThrow(
      'MCP error -32602: Unknown tool delete_path. Available tools: write_file, edit_file, multi_edit, create_directory, move_path.',
    );
  });
});
