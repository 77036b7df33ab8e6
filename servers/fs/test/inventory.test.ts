import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { inventoryProblems, surfaceSnapshot } from '@bulkhead/core/testing';
import { fsTools } from '@bulkhead/fs';
import { startFs, type FsHarness } from './helpers.js';

const toolsDir = fileURLToPath(new URL('../src/tools', import.meta.url));

describe('fs tool inventory', () => {
  it('has no inventory problems for a read-only server', () => {
    expect(inventoryProblems(fsTools, { toolsDir, readOnly: true })).toEqual([]);
  });

  it('reports a problem when a tool is not read-only (the check can fail)', () => {
    const writable = { ...fsTools[0]!, annotations: { ...fsTools[0]!.annotations, readOnlyHint: false } };
    expect(inventoryProblems([writable], { toolsDir, readOnly: true })).toEqual(['read_file: a read-only server exposes a tool without readOnlyHint']);
  });

  it('keeps its public surface stable (reviewed snapshot)', () => {
    expect(surfaceSnapshot(fsTools)).toMatchSnapshot();
  });
});

describe('tools/list over MCP', () => {
  let fs: FsHarness;
  beforeAll(async () => {
    fs = await startFs({ 'a.txt': 'hello\n' });
  });
  afterAll(async () => {
    await fs.close();
  });

  it('lists exactly the four read-only tools with all four annotations', async () => {
    const { tools } = await fs.client.listTools();
    expect(tools.map((tool) => tool.name)).toEqual(['read_file', 'grep', 'glob_files', 'list_files']);
    for (const tool of tools) {
      expect(tool.annotations).toEqual({
        title: tool.title,
        readOnlyHint: true,
        destructiveHint: false,
        idempotentHint: true,
        openWorldHint: false,
      });
      expect(tool.description!.length).toBeGreaterThan(20);
      expect(tool.inputSchema.type).toBe('object');
      expect(tool.inputSchema).not.toHaveProperty('anyOf');
      expect(tool.inputSchema).not.toHaveProperty('oneOf');
    }
    expect(tools.map((tool) => tool.title)).toEqual(['Read file', 'Search file contents', 'Find files by name', 'List a folder']);
  });

  it('publishes the input schemas with their required arguments', async () => {
    const { tools } = await fs.client.listTools();
    const required = Object.fromEntries(tools.map((tool) => [tool.name, tool.inputSchema.required ?? []]));
    expect(required).toEqual({ read_file: ['path'], grep: ['pattern'], glob_files: ['pattern'], list_files: [] });
    const strict = Object.fromEntries(tools.map((tool) => [tool.name, (tool.inputSchema as { additionalProperties?: unknown }).additionalProperties]));
    expect(strict).toEqual({ read_file: false, grep: false, glob_files: false, list_files: false });
  });
});
