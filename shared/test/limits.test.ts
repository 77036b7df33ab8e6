import { describe, expect, it } from 'vitest';
import { formatBytes, paginate, pageFooter, truncateHeadTail, truncateKeepHead, truncateKeepTail, truncateLine } from '@bulkhead/core';

describe('truncateHeadTail', () => {
  it('returns short text unchanged', () => {
    expect(truncateHeadTail('short', 100)).toEqual({ text: 'short', truncatedBytes: 0 });
  });

  it('keeps the start and the end with the exact marker between them', () => {
    const text = `${'a'.repeat(500)}${'m'.repeat(1000)}${'z'.repeat(500)}`;
    const { text: out, truncatedBytes } = truncateHeadTail(text, 248);
    expect(out.startsWith('a'.repeat(100))).toBe(true);
    expect(out.endsWith('z'.repeat(100))).toBe(true);
    expect(out).toContain(`…(${truncatedBytes} bytes truncated)…`);
    expect(truncatedBytes).toBe(2000 - 200);
    expect(Buffer.byteLength(out)).toBeLessThanOrEqual(248 + 40);
  });

  it('never splits a multi-byte character', () => {
    const text = '€'.repeat(1000);
    const { text: out } = truncateHeadTail(text, 301);
    expect(out).not.toContain('\uFFFD');
    const [head, tail] = out.split(/\n…\(\d+ bytes truncated\)…\n/);
    expect(head).toMatch(/^€+$/);
    expect(tail).toMatch(/^€+$/);
  });

  it('is off when the cap is 0', () => {
    expect(truncateHeadTail('x'.repeat(10_000), 0).truncatedBytes).toBe(0);
  });
});

describe('truncateKeepTail and truncateKeepHead', () => {
  it('keeps the end with a from-head marker', () => {
    const out = truncateKeepTail(`${'a'.repeat(1000)}END`, 100);
    expect(out.text).toMatch(/^…\(\d+ bytes truncated from head\)…\n/);
    expect(out.text.endsWith('END')).toBe(true);
    expect(out.truncatedBytes).toBe(1003 - 52);
  });

  it('keeps the start with a from-tail marker', () => {
    const out = truncateKeepHead(`START${'a'.repeat(1000)}`, 100);
    expect(out.text.startsWith('START')).toBe(true);
    expect(out.text).toMatch(/\n…\(\d+ bytes truncated from tail\)…$/);
  });
});

describe('truncateLine, formatBytes and paging', () => {
  it('cuts long lines and says how much', () => {
    expect(truncateLine('abcdef', 4)).toBe('abcd… [line truncated: 2 more characters]');
    expect(truncateLine('abc', 4)).toBe('abc');
  });

  it('formats sizes', () => {
    expect(formatBytes(512)).toBe('512 B');
    expect(formatBytes(1536)).toBe('1.5 KiB');
    expect(formatBytes(5 * 1024 ** 3)).toBe('5.0 GiB');
  });

  it('paginates and tells where the next page starts', () => {
    const page = paginate([1, 2, 3, 4, 5], 1, 2);
    expect(page).toEqual({ items: [2, 3], offset: 1, total: 5, nextOffset: 3 });
    expect(pageFooter(page, 2, 'items')).toBe('[showing items 2-3 of 5; 2 more; next: offset=3]');
    expect(paginate([1, 2], 0, 5).nextOffset).toBeUndefined();
    expect(pageFooter(paginate([1, 2], 0, 5), 2, 'items')).toBe('');
  });
});
