import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
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

  it('writes the pins of first sight when a tool is called, not when tools are listed, searched or looked up', () => {
    ws = tempWorkspace();
    const pins = join(ws.root, 'pins.json');
    const catalog = new Catalog(new PinStore(ws.root), ['live']);
    catalog.update('live', [tool('echo')], false);
    expect(catalog.entries()).toHaveLength(1);
    expect(catalog.search('echo', 5, () => true)).toHaveLength(1);
    expect(existsSync(pins)).toBe(false);
    expect(catalog.get('live__echo')?.qualified).toBe('live:echo');
    expect(catalog.get('live__nothing')).toBeUndefined();
    expect(existsSync(pins)).toBe(false);
    catalog.commitPins();
    expect(Object.keys((JSON.parse(readFileSync(pins, 'utf8')) as { tools: object }).tools)).toEqual(['live:echo']);
  });
});
