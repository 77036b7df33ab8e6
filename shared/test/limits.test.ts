import { describe, expect, it } from 'vitest';
import { capToolResult, formatBytes, paginate, pageFooter, truncateHeadTail, truncateKeepHead, truncateKeepTail, truncateLine } from '@bulkhead/core';

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

describe('capToolResult', () => {
  const limits = { maxOutputBytes: 1000, maxBinaryBytes: 4000 };
  const base64 = (bytes: number) => Buffer.alloc(bytes, 1).toString('base64');

  it('passes a small result through unchanged', () => {
    const result = { content: [{ type: 'text' as const, text: 'hi' }], structuredContent: { a: 1 } };
    expect(capToolResult(result, limits)).toEqual(result);
  });

  it('makes text blocks and embedded text resources share one budget', () => {
    const capped = capToolResult(
      {
        content: [
          { type: 'text', text: 'a'.repeat(900) },
          { type: 'resource', resource: { uri: 'file:///x.txt', text: 'b'.repeat(5000) } },
        ],
      },
      limits,
    );
    expect((capped.content[0] as { text: string }).text).toBe('a'.repeat(900));
    const resourceText = (capped.content[1] as { resource: { text: string } }).resource.text;
    expect(Buffer.byteLength(resourceText)).toBeLessThanOrEqual(100);
    expect(resourceText).toMatch(/…\(\d+ bytes truncated\)…/);
  });

  it('replaces images and blobs past the binary budget by a line naming them', () => {
    const small = base64(1500);
    const capped = capToolResult(
      {
        content: [
          { type: 'image', mimeType: 'image/png', data: small },
          { type: 'image', mimeType: 'image/jpeg', data: base64(3000) },
          { type: 'resource', resource: { uri: 'file:///dump.bin', blob: base64(3000) } },
        ],
      },
      limits,
    );
    expect(capped.content[0]).toEqual({ type: 'image', mimeType: 'image/png', data: small });
    expect(capped.content[1]).toEqual({ type: 'text', text: "[image image/jpeg of 2.9 KiB omitted: over this result's cap of 2.9 KiB for images, audio and binary data]" });
    expect(capped.content[2]).toEqual({ type: 'text', text: "[resource file:///dump.bin of 2.9 KiB omitted: over this result's cap of 2.9 KiB for images, audio and binary data]" });
  });

  it('drops structured content past the text budget and says so in an error result', () => {
    const rows = Array.from({ length: 50 }, (_, i) => ({ i, pad: 'y'.repeat(40) }));
    const capped = capToolResult({ content: [{ type: 'text', text: 'rows follow' }], structuredContent: { rows } }, limits);
    expect(capped.structuredContent).toBeUndefined();
    expect(capped.isError).toBe(true);
    expect(capped.content).toEqual([
      { type: 'text', text: "[structured result of 2.8 KiB dropped: over this result's output cap of 1000 B; the text below is capped too. Ask for less (a narrower path, a smaller limit).]" },
      { type: 'text', text: 'rows follow' },
    ]);
  });

  it('keeps everything when both caps are off', () => {
    const result = { content: [{ type: 'text' as const, text: 'a'.repeat(5000) }, { type: 'image' as const, mimeType: 'image/png', data: base64(9000) }], structuredContent: { pad: 'z'.repeat(5000) } };
    expect(capToolResult(result, { maxOutputBytes: 0, maxBinaryBytes: 0 })).toEqual(result);
  });
});
