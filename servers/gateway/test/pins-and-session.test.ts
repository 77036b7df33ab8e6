import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import type { Tool } from '@modelcontextprotocol/sdk/types.js';
import { tempWorkspace, type TempWorkspace } from '@bulkhead/core/testing';
import { definitionHash, PinStore } from '../src/pins.js';
import { LoadedTools } from '../src/session.js';

let ws: TempWorkspace;
afterEach(() => ws?.cleanup());

const tool = (description: string): Tool => ({ name: 'greet', description, inputSchema: { type: 'object', properties: { who: { type: 'string' } } } });

describe('PinStore', () => {
  it('pins on first sight, quarantines a changed definition, and approves it', () => {
    ws = tempWorkspace();
    const pins = new PinStore(ws.root);
    expect(pins.check([['x:greet', tool('Greets.')]])).toEqual(new Set());
    expect(pins.check([['x:greet', tool('Greets.')]])).toEqual(new Set());
    expect(pins.check([['x:greet', tool('Greets. Also exfiltrates.')]])).toEqual(new Set(['x:greet']));
    expect(pins.pending()).toEqual(['x:greet']);
    expect(new PinStore(ws.root).approve('x:greet')).toBe(true);
    expect(pins.check([['x:greet', tool('Greets. Also exfiltrates.')]])).toEqual(new Set());
    expect(pins.approve('x:greet')).toBe(false);
    const file = JSON.parse(readFileSync(join(ws.root, 'pins.json'), 'utf8')) as { tools: Record<string, { approved_at?: string }> };
    expect(file.tools['x:greet']!.approved_at).toBeTruthy();
  });

  it('keeps pins of first sight in memory until a tool is used, and writes a changed definition at once', () => {
    ws = tempWorkspace();
    const file = join(ws.root, 'control', 'pins.json');
    const pins = new PinStore(join(ws.root, 'control'));
    expect(pins.check([['x:greet', tool('Greets.')], ['x:wave', { ...tool('Waves.'), name: 'wave' }]])).toEqual(new Set());
    // Listing and searching (bulkhead tools, search, doctor) write nothing, not even the folder.
    expect(existsSync(join(ws.root, 'control'))).toBe(false);
    pins.commit();
    expect(Object.keys((JSON.parse(readFileSync(file, 'utf8')) as { tools: object }).tools).sort()).toEqual(['x:greet', 'x:wave']);

    const later = new PinStore(join(ws.root, 'control'));
    expect(later.check([['x:greet', tool('Greets. Also exfiltrates.')], ['x:new', { ...tool('New.'), name: 'new' }]])).toEqual(new Set(['x:greet']));
    // The pending definition is for a human to approve from another process, so it is on disk now, with the new pin beside it.
    const stored = JSON.parse(readFileSync(file, 'utf8')) as { tools: Record<string, { pending_sha256?: string }> };
    expect(stored.tools['x:greet']!.pending_sha256).toBe(definitionHash(tool('Greets. Also exfiltrates.')));
    expect(Object.keys(stored.tools).sort()).toEqual(['x:greet', 'x:new', 'x:wave']);
  });

  it('keeps an unwritten pin of first sight when another process changes the file', async () => {
    ws = tempWorkspace();
    const pins = new PinStore(ws.root);
    pins.check([['x:greet', tool('Greets.')]]);
    pins.check([['x:greet', tool('Greets. Also exfiltrates.')]]);
    pins.check([['x:wave', { ...tool('Waves.'), name: 'wave' }]]);
    expect(new PinStore(ws.root).approve('x:greet')).toBe(true);
    await new Promise((resolve) => setImmediate(resolve));
    expect(pins.pending()).toEqual([]);
    pins.commit();
    const stored = JSON.parse(readFileSync(join(ws.root, 'pins.json'), 'utf8')) as { tools: Record<string, { approved_at?: string }> };
    expect(Object.keys(stored.tools).sort()).toEqual(['x:greet', 'x:wave']);
    expect(stored.tools['x:greet']!.approved_at).toBeTruthy();
  });

  it('sees a change another process made to the file from the next tick on', async () => {
    ws = tempWorkspace();
    const pins = new PinStore(ws.root);
    pins.check([['x:greet', tool('Greets.')]]);
    pins.check([['x:greet', tool('Greets. Also exfiltrates.')]]);
    const before = pins.version;
    expect(new PinStore(ws.root).approve('x:greet')).toBe(true);
    // Calls read from one chunk of input share the tick's check; the next input is checked again.
    expect(pins.version).toBe(before);
    await new Promise((resolve) => setImmediate(resolve));
    expect(pins.version).not.toBe(before);
    expect(pins.pending()).toEqual([]);
  });

  it('treats a change of the input schema as a change of definition', () => {
    ws = tempWorkspace();
    const pins = new PinStore(ws.root);
    pins.check([['x:greet', tool('Greets.')]]);
    const widened: Tool = { ...tool('Greets.'), inputSchema: { type: 'object', properties: { who: { type: 'string' }, exec: { type: 'string' } } } };
    expect(pins.check([['x:greet', widened]])).toEqual(new Set(['x:greet']));
  });

  it('treats a change of annotations (and so of risk tier) as a change of definition', () => {
    ws = tempWorkspace();
    const pins = new PinStore(ws.root);
    pins.check([['x:greet', { ...tool('Greets.'), annotations: { readOnlyHint: false } }]]);
    expect(pins.check([['x:greet', { ...tool('Greets.'), annotations: { readOnlyHint: true } }]])).toEqual(new Set(['x:greet']));
  });

  it('approves only the definition the human reviewed', () => {
    ws = tempWorkspace();
    const pins = new PinStore(ws.root);
    pins.check([['x:greet', tool('Greets.')]]);
    pins.check([['x:greet', tool('Shown to the human.')]]);
    const reviewed = definitionHash(tool('Shown to the human.'));
    pins.check([['x:greet', tool('Changed again while the prompt was open.')]]);
    expect(pins.approve('x:greet', reviewed)).toBe(false);
    expect(pins.approve('x:greet', definitionHash(tool('Changed again while the prompt was open.')))).toBe(true);
  });

  it('forgets a pending change when the server reverts it', () => {
    ws = tempWorkspace();
    const pins = new PinStore(ws.root);
    pins.check([['x:greet', tool('Greets.')]]);
    pins.check([['x:greet', tool('Changed.')]]);
    expect(pins.check([['x:greet', tool('Greets.')]])).toEqual(new Set());
    expect(pins.pending()).toEqual([]);
  });
});

describe('LoadedTools', () => {
  it('evicts the least recently used past the limit', () => {
    const loaded = new LoadedTools(2);
    expect(loaded.load(['a', 'b'])).toEqual([]);
    loaded.touch('a');
    expect(loaded.load(['c'])).toEqual(['b']);
    expect(loaded.list().sort()).toEqual(['a', 'c']);
    expect(loaded.unload(['a', 'zzz'])).toEqual(['a']);
    expect(loaded.has('a')).toBe(false);
  });
});
