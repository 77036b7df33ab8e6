// The pure parts of the resources relay: the gateway's list pages and cursors, a read held to the
// output limits, and the links of a tool result rewritten to what reads back.
import { describe, expect, it } from 'vitest';
import type { CallToolResult, Resource } from '@modelcontextprotocol/sdk/types.js';
import { LIST_PAGE_SIZE, pageOf } from '../src/relay/list-pages.js';
import { boundResourceContents } from '../src/relay/resource-contents.js';
import { exposeResourceLinks } from '../src/relay/resource-links.js';
import type { ResourceOwner } from '../src/relay/resource-names.js';

const cursorOf = (list: string, offset: number) => Buffer.from(JSON.stringify({ list, offset })).toString('base64url');

describe('pageOf', () => {
  const items = Array.from({ length: LIST_PAGE_SIZE + 5 }, (_, index) => index);

  it('pages with its own cursor to the end', () => {
    const first = pageOf('resources/list', items, undefined);
    expect(first.items).toEqual(items.slice(0, LIST_PAGE_SIZE));
    expect(first.nextCursor).toBe(cursorOf('resources/list', LIST_PAGE_SIZE));
    expect(pageOf('resources/list', items, first.nextCursor)).toEqual({ items: items.slice(LIST_PAGE_SIZE) });
  });

  it('gives an empty last page past the end of a list that shrank, and refuses a cursor it did not make', () => {
    expect(pageOf('resources/list', [1, 2], cursorOf('resources/list', LIST_PAGE_SIZE))).toEqual({ items: [] });
    const refusal = 'Invalid cursor for resources/list: pass the nextCursor of the previous resources/list page as it is, or no cursor for the first page';
    for (const cursor of ['', 'abc', cursorOf('resources/templates/list', 0), cursorOf('resources/list', -1), Buffer.from('{"list":"resources/list","offset":1,"more":1}').toString('base64url'), Buffer.from('[]').toString('base64url')]) {
      expect(() => pageOf('resources/list', items, cursor)).toThrow(refusal);
    }
  });
});

describe('boundResourceContents', () => {
  it('shares the text cap between the contents of one reply and cuts with the marker', () => {
    const result = boundResourceContents({ contents: [{ uri: 'a://1', text: 'x'.repeat(600) }, { uri: 'a://2', text: 'y'.repeat(600) }, { uri: 'a://3', text: 'short' }] }, { maxOutputBytes: 1000 }, 'Resource a://1');
    const [first, second, third] = result.contents as { text: string }[];
    expect(first!.text).toBe('x'.repeat(600));
    expect(second!.text).toMatch(/^y+\n…\(\d+ bytes truncated\)…\ny+$/);
    expect(Buffer.byteLength(second!.text)).toBeLessThanOrEqual(400);
    // The budget is spent: what comes after keeps at most 96 bytes (room for the marker), and this one is shorter.
    expect(third!.text).toBe('short');
  });

  it('refuses binary contents over the binary cap in all, and passes those under it as they are', () => {
    const blob = 'A'.repeat(800);
    expect(boundResourceContents({ contents: [{ uri: 'b://1', blob }] }, { maxOutputBytes: 100, maxBinaryBytes: 1000 }, 'Resource b://1').contents).toEqual([{ uri: 'b://1', blob }]);
    expect(() => boundResourceContents({ contents: [{ uri: 'b://1', blob }, { uri: 'b://2', blob }] }, { maxOutputBytes: 100, maxBinaryBytes: 1000 }, 'Resource b://1')).toThrow(
      "Resource b://1 holds 1.2 KiB of binary data, over the gateway's cap of 750 B for binary data in one reply; it was not passed on",
    );
  });
});

describe('exposeResourceLinks', () => {
  const owner = (uris: string[]): ResourceOwner => ({ state: 'ready', lists: { resources: uris.map((uri): Resource => ({ uri, name: uri })), resourceTemplates: [] } });
  const owners = new Map([
    ['a', owner(['x://only-a', 'x://both'])],
    ['b', owner(['x://both'])],
  ]);

  it('keeps a link that reads back from its server, and names the others bulkhead://<ns>/<uri>', () => {
    const result: CallToolResult = {
      content: [
        { type: 'text', text: 'x://both stays in text' },
        { type: 'resource_link', uri: 'x://only-a', name: 'one' },
        { type: 'resource_link', uri: 'x://both', name: 'two' },
        { type: 'resource_link', uri: 'x://unlisted', name: 'new' },
        { type: 'resource', resource: { uri: 'x://both', text: 'embedded' } },
      ],
    };
    expect(exposeResourceLinks(result, 'a', owners).content).toEqual([
      { type: 'text', text: 'x://both stays in text' },
      { type: 'resource_link', uri: 'x://only-a', name: 'one' },
      { type: 'resource_link', uri: 'bulkhead://a/x://both', name: 'two' },
      { type: 'resource_link', uri: 'bulkhead://a/x://unlisted', name: 'new' },
      { type: 'resource', resource: { uri: 'bulkhead://a/x://both', text: 'embedded' } },
    ]);
    // A link of b to a URI only a lists would read from a: it names b.
    expect(exposeResourceLinks({ content: [{ type: 'resource_link', uri: 'x://only-a', name: 'one' }] }, 'b', owners).content).toEqual([{ type: 'resource_link', uri: 'bulkhead://b/x://only-a', name: 'one' }]);
  });
});
