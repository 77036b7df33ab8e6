import { fileURLToPath } from 'node:url';
import { afterEach, describe, expect, it } from 'vitest';
import { inventoryProblems, surfaceSnapshot } from '@bulkhead/core/testing';
import { webTools } from '@bulkhead/web';
import { startWeb, type WebHarness } from './helpers.js';

const toolsDir = fileURLToPath(new URL('../src/tools', import.meta.url));

describe('web tool inventory', () => {
  it('has no inventory problems; every tool is read-only', () => {
    expect(inventoryProblems(webTools, { toolsDir, readOnly: true })).toEqual([]);
  });

  it('keeps its public surface stable (reviewed snapshot)', () => {
    expect(surfaceSnapshot(webTools)).toMatchSnapshot();
  });
});

describe('tools/list over MCP', () => {
  let h: WebHarness;
  afterEach(async () => {
    await h.close();
  });

  it('lists web_fetch and web_search, risk medium, open world', async () => {
    h = await startWeb();
    const { tools } = await h.client.listTools();
    expect(tools.map((tool) => tool.name)).toEqual(['web_fetch', 'web_search']);
    for (const tool of tools) {
      expect(tool.annotations).toMatchObject({ readOnlyHint: true, destructiveHint: false, idempotentHint: true, openWorldHint: true });
      expect(tool._meta).toMatchObject({ 'bulkhead/risk': 'medium' });
    }
  });

  it('lists nothing when the server is disabled', async () => {
    h = await startWeb({ policy: { enabled: false } });
    expect((await h.client.listTools()).tools).toEqual([]);
  });
});
