import { describe, expect, it } from 'vitest';
import { OutputCap } from '../src/run/output-cap.js';

function capped(maxBytes: number, keepHead: boolean, chunks: readonly string[]): OutputCap {
  const cap = new OutputCap(maxBytes, keepHead);
  for (const chunk of chunks) cap.write(Buffer.from(chunk));
  return cap;
}

describe('OutputCap', () => {
  it('keeps everything when maxBytes is 0', () => {
    const cap = capped(0, false, ['a'.repeat(100_000), 'b']);
    expect(cap.text()).toBe(`${'a'.repeat(100_000)}b`);
    expect(cap.droppedBytes).toBe(0);
  });

  it('keeps output that fits as it is', () => {
    expect(capped(10, false, ['0123', '456789']).text()).toBe('0123456789');
    expect(capped(10, true, ['0123', '456789']).text()).toBe('0123456789');
  });

  it('keeps only the end, saying how much of the head went', () => {
    const cap = capped(4, false, ['0123', '4567', '89']);
    expect(cap.text()).toBe('…(6 bytes truncated from head)…\n6789');
    expect(cap.droppedBytes).toBe(6);
    expect(cap.writtenBytes).toBe(10);
  });

  it('keeps the start and the end of read-only output, saying how much of the middle went', () => {
    const cap = capped(6, true, ['abc', 'defghij', 'klm']);
    expect(cap.text()).toBe('abc\n…(7 bytes truncated from middle)…\nklm');
    expect(cap.droppedBytes).toBe(7);
  });

  it('keeps the right tail across many small writes that wrap the ring', () => {
    const chunks = Array.from({ length: 1000 }, (_, index) => `${index},`);
    const whole = chunks.join('');
    const cap = capped(37, false, chunks);
    expect(cap.text()).toBe(`…(${whole.length - 37} bytes truncated from head)…\n${whole.slice(-37)}`);
  });

  it('keeps the right tail when one write is larger than the cap', () => {
    const cap = capped(5, true, ['12', 'abcdefghijklmnopqrstuvwxyz']);
    expect(cap.text()).toBe('12\n…(23 bytes truncated from middle)…\nxyz');
  });

  it('never shows half a character at either cut', () => {
    // 'é' is 2 bytes, '€' 3, '😀' 4: every cap size lands inside one of them somewhere.
    const text = 'é€😀'.repeat(50);
    for (const keepHead of [false, true]) {
      for (let maxBytes = 1; maxBytes < 40; maxBytes += 1) {
        const cap = capped(maxBytes, keepHead, [text]);
        const kept = cap.text();
        expect(kept).not.toContain('\uFFFD');
        const keptBytes = Buffer.byteLength(kept.replace(/\n?…\(\d+ bytes truncated from (head|middle)\)…\n/, ''));
        expect(keptBytes + cap.droppedBytes).toBe(Buffer.byteLength(text));
        expect(keptBytes).toBeLessThanOrEqual(maxBytes);
      }
    }
  });
});
