import { readFileSync, statSync } from 'node:fs';
import { afterEach, describe, expect, it } from 'vitest';
import { ToolError } from '@bulkhead/core';
import { eventually, taskHarness, type TaskHarness } from './task-helpers.js';

const FORTY_DIGITS = '0123456789'.repeat(4);

describe('task output', () => {
  let harness: TaskHarness;
  afterEach(async () => harness.close());

  it('pages through the log while the task runs', async () => {
    harness = taskHarness();
    const { id } = harness.run(`printf '%s' ${FORTY_DIGITS}; sleep 30`);
    await eventually(() => harness.manager.output(id).size === 40);

    const first = harness.manager.output(id, 0, 16);
    expect(first).toMatchObject({ text: FORTY_DIGITS.slice(0, 16), offset: 0, nextOffset: 16, size: 40 });
    expect(first.task.state).toBe('running');
    const last = harness.manager.output(id, 32, 16);
    // Running: the end of the log so far is not the end of the output, so there is a next offset.
    expect(last).toMatchObject({ text: FORTY_DIGITS.slice(32), nextOffset: 40 });
    expect(harness.manager.output(id, 40)).toMatchObject({ text: '', nextOffset: 40 });
  });

  it('pages through the whole log after the task exits, ending with a null next offset', async () => {
    harness = taskHarness();
    const { id } = harness.run(`for i in $(seq 1 200); do echo "line $i"; done`);
    await harness.manager.wait(id, 10_000);

    let text = '';
    let offset: number | null = 0;
    let pages = 0;
    while (offset !== null) {
      const page = harness.manager.output(id, offset, 100);
      text += page.text;
      offset = page.nextOffset;
      pages++;
    }
    expect(text).toBe(Array.from({ length: 200 }, (_, i) => `line ${i + 1}\n`).join(''));
    expect(pages).toBeGreaterThan(10);
    expect(harness.manager.output(id).task).toMatchObject({ state: 'exited', exitCode: 0 });
  });

  it('cuts pages on character boundaries', async () => {
    harness = taskHarness();
    const { id } = harness.run(`printf 'é%.0s' $(seq 1 20)`);
    await harness.manager.wait(id, 10_000);

    expect(harness.manager.output(id, 0, 17)).toMatchObject({ text: 'é'.repeat(8), nextOffset: 16 });
    // An offset inside a character starts at the next whole one.
    expect(harness.manager.output(id, 1, 16)).toMatchObject({ text: 'é'.repeat(7), offset: 2, nextOffset: 16 });
  });

  it('keeps the first maxLogBytes of a 50 MB flood and ends the log with a marker', async () => {
    harness = taskHarness({ maxLogBytes: 1024 * 1024 });
    const flood = 50 * 1024 * 1024;
    const { id } = harness.run(`head -c ${flood} /dev/zero | tr '\\0' a`);
    const { task } = await harness.manager.wait(id, 30_000);

    const marker = `\n…(${flood - 1024 * 1024} bytes dropped: the log reached its cap of ${1024 * 1024} bytes)…\n`;
    expect(task).toMatchObject({ state: 'exited', exitCode: 0, droppedBytes: flood - 1024 * 1024 });
    expect(statSync(task.logFile).size).toBe(1024 * 1024 + Buffer.byteLength(marker));
    expect(task.logBytes).toBe(statSync(task.logFile).size);
    const tail = harness.manager.output(id, 1024 * 1024 - 4);
    expect(tail.text).toBe(`aaaa${marker}`);
    expect(tail.nextOffset).toBeNull();
  });

  it('cuts the log at its cap on a character boundary', async () => {
    harness = taskHarness({ maxLogBytes: 101 });
    const { id } = harness.run(`printf 'é%.0s' $(seq 1 100)`);
    const { task } = await harness.manager.wait(id, 10_000);

    const log = readFileSync(task.logFile, 'utf8');
    expect(log).toBe(`${'é'.repeat(50)}\n…(100 bytes dropped: the log reached its cap of 101 bytes)…\n`);
  });

  it('refuses pages it cannot serve with errors that say what to send', async () => {
    harness = taskHarness();
    const { id } = harness.run('echo hi');
    await harness.manager.wait(id, 10_000);

    expect(() => harness.manager.output(id, 0, 0)).toThrow(/limit must be a whole number from 16/);
    expect(() => harness.manager.output(id, -1)).toThrow(/offset must be a whole number/);
    expect(() => harness.manager.output(id, 4)).toThrow(/offset 4 is past the end of the log \(3 bytes\)/);
    expect(() => harness.manager.output(id, 0.5)).toThrow(ToolError);
  });
});
