import { describe, expect, it } from 'vitest';
import { unifiedDiff } from '../src/diff.js';

const numbered = (count: number) => Array.from({ length: count }, (_, i) => `l${i + 1}`);
const text = (lines: readonly string[]) => `${lines.join('\n')}\n`;

describe('unifiedDiff', () => {
  it('merges changes whose context touches and splits those far apart', () => {
    const before = numbered(40);
    const after = before.map((line) => ({ l5: 'L5', l10: 'L10', l30: 'L30' })[line] ?? line);
    expect(unifiedDiff('f', text(before), text(after), 100).text.split('\n')).toEqual([
      '--- a/f',
      '+++ b/f',
      '@@ -2,12 +2,12 @@',
      ' l2', ' l3', ' l4', '-l5', '+L5', ' l6', ' l7', ' l8', ' l9', '-l10', '+L10', ' l11', ' l12', ' l13',
      '@@ -27,7 +27,7 @@',
      ' l27', ' l28', ' l29', '-l30', '+L30', ' l31', ' l32', ' l33',
    ]);
  });

  it('numbers pure deletions and insertions the way patch expects', () => {
    const before = numbered(10);
    const deleted = before.filter((line) => line !== 'l1' && line !== 'l2');
    expect(unifiedDiff('f', text(before), text(deleted), 100).text.split('\n').slice(2, 3)).toEqual(['@@ -1,5 +1,3 @@']);
    expect(unifiedDiff('f', '', 'one\n', 100).text.split('\n').slice(2)).toEqual(['@@ -0,0 +1 @@', '+one']);
    expect(unifiedDiff('f', 'one\n', '', 100).text.split('\n').slice(2)).toEqual(['@@ -1 +0,0 @@', '-one']);
  });

  it('counts every changed line even when the shown diff is cut', () => {
    const diff = unifiedDiff('f', text(numbered(100)), text(numbered(100).map((l) => `${l}!`)), 12);
    expect([diff.added, diff.removed]).toEqual([100, 100]);
    expect(diff.text.split('\n')).toHaveLength(13);
    expect(diff.text.split('\n').at(-1)).toBe('… 191 more diff lines not shown (+100 −100 lines in all)');
  });

  it('is empty past the headers when nothing changed', () => {
    expect(unifiedDiff('f', 'same\n', 'same\n', 10)).toEqual({ text: '--- a/f\n+++ b/f', added: 0, removed: 0 });
  });

  it('labels both sides as told (bulkhead setup shows the config file by its path)', () => {
    const labels = { before: '/home/me/.cursor/mcp.json', after: '/home/me/.cursor/mcp.json' };
    expect(unifiedDiff('x', 'a\nb\nc\n', 'A\nb\nC\n', 100, labels).text).toBe('--- /home/me/.cursor/mcp.json\n+++ /home/me/.cursor/mcp.json\n@@ -1,3 +1,3 @@\n-a\n+A\n b\n-c\n+C');
    expect(unifiedDiff('x', undefined, '{\n}\n', 100, labels).text).toBe('--- /dev/null\n+++ /home/me/.cursor/mcp.json\n@@ -0,0 +1,2 @@\n+{\n+}');
  });
});
