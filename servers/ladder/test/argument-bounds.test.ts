import { afterEach, describe, expect, it } from 'vitest';
import type { LaneWithHistory } from '../src/store/work-queue.js';
import { ladderWorld, type LadderWorld } from './server-helpers.js';

/** Issue 15, item 12: the ask payload is free-form JSON, bounded by the core's depth and size check before any schema. */

let world: LadderWorld | undefined;
afterEach(async () => {
  await world?.close();
  world = undefined;
});

describe('ask_post payload bounds', () => {
  it('a 100,000-deep payload is refused with a message (it answered "Maximum call stack size exceeded"); a huge one by the request limit; a normal one is posted', async () => {
    world = await ladderWorld();
    const ada = await world.connect('ada');
    const lane = (await ada.call<{ lane: LaneWithHistory }>('lane_propose', { title: 'Ship widgets' })).structured.lane;
    let deep: unknown = 1;
    for (let i = 0; i < 100_000; i++) deep = { next: deep };
    const refusedDeep = await ada.call('ask_post', { lane_id: lane.id, kind: 'work', title: 't', payload: deep });
    expect(refusedDeep.isError).toBe(true);
    expect(refusedDeep.text).toBe('Invalid arguments for ladder:ask_post: `payload.next.next.next.next.next.…` nests deeper than 64 levels of arrays and objects; send a flatter value');
    let deepArray: unknown = 1;
    for (let i = 0; i < 100_000; i++) deepArray = [deepArray];
    expect((await ada.call('ask_post', { lane_id: lane.id, kind: 'work', title: 't', payload: { list: deepArray } })).text).toMatch(/^Invalid arguments for ladder:ask_post: `payload\.list\.0\.0\.0\.0\.…` nests deeper than 64 levels/);
    const huge = await ada.call('ask_post', { lane_id: lane.id, kind: 'work', title: 't', payload: { blob: 'x'.repeat(20 * 1024 * 1024) } });
    expect(huge.text).toMatch(/^Invalid arguments for ladder:ask_post: the arguments are larger than this server's request limit \(\d+ bytes\); send less per call$/);
    const wide = await ada.call('ask_post', { lane_id: lane.id, kind: 'work', title: 't', payload: Array.from({ length: 3_000_000 }, () => 0) });
    expect(wide.text).toMatch(/larger than this server's request limit/);
    const fine = await ada.call('ask_post', { lane_id: lane.id, kind: 'work', title: 't', payload: { a: [1, { b: 'c' }] } });
    expect(fine.isError).toBe(false);
  });
});
