import { describe, expect, it } from 'vitest';
import { htmlToMarkdown } from '../src/lib/markdown.js';

describe('htmlToMarkdown tables', () => {
  it('writes a table with a nested table as one pipe table of its own rows and cells', async () => {
    const paragraph = '<p>This paragraph is long enough for Readability to count it as article text, with a few commas, and more words.</p>';
    const html = `<!doctype html><title>Layout</title><body><article>${paragraph.repeat(3)}<table><caption>Parts</caption>
      <thead><tr><th>Name</th><th>Details</th></tr></thead>
      <tbody><tr><td>outer | one</td><td><table><tr><td>inner a</td><td>inner b</td><td>inner c</td></tr><tr><td>inner d</td></tr></table></td></tr></tbody>
    </table>${paragraph}</article></body>`;
    const page = await htmlToMarkdown(html, 'http://example.test/');
    expect(page.markdown).toContain('\n\n| Name | Details |\n| --- | --- |\n| outer \\| one | inner ainner binner cinner d |\n\n');
    expect(page.title).toBe('Layout');
  });
});
