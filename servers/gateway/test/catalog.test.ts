import { afterEach, describe, expect, it } from 'vitest';
import type { Tool } from '@modelcontextprotocol/sdk/types.js';
import { tempWorkspace, type TempWorkspace } from '@bulkhead/core/testing';
import { Catalog } from '../src/catalog.js';
import { PinStore } from '../src/pins.js';

let ws: TempWorkspace;
afterEach(() => ws?.cleanup());

const tool = (name: string): Tool => ({ name, description: `The ${name} tool.`, inputSchema: { type: 'object' } });

describe('Catalog', () => {
  it('lists tools in the configured order of their servers, whichever server answered first', () => {
    ws = tempWorkspace();
    const catalog = new Catalog(new PinStore(ws.root), ['fs', 'live']);
    catalog.update('live', [tool('echo')], false);
    catalog.update('fs', [tool('read_file'), tool('grep')], true);
    expect(catalog.entries().map((entry) => entry.wire)).toEqual(['fs__read_file', 'fs__grep', 'live__echo']);
  });
});
