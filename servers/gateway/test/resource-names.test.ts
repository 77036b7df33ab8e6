// The naming rule of resources through the gateway, as pure functions over what servers list: a
// URI stays as it is while one server offers it, becomes bulkhead://<ns>/<uri> when two do, and
// bulkhead://<ns>/<uri> always reads from <ns>. And the template matcher that routes reads of
// template URIs, including templates made to make a regular expression backtrack.
import { describe, expect, it } from 'vitest';
import type { Resource, ResourceTemplate } from '@modelcontextprotocol/sdk/types.js';
import type { DownstreamState } from '../src/downstream/downstream.js';
import { exposedResourceUri, resolveResource, resolveResourceUri, splitGatewayUri, type ResourceOwner } from '../src/relay/resource-names.js';
import { matchesTemplate, MAX_MATCHED_URI_LENGTH } from '../src/relay/uri-template.js';

function owner(resources: string[], templates: string[] = [], state: DownstreamState = 'ready'): ResourceOwner {
  return {
    state,
    lists: {
      resources: resources.map((uri): Resource => ({ uri, name: uri })),
      resourceTemplates: templates.map((uriTemplate): ResourceTemplate => ({ uriTemplate, name: uriTemplate })),
    },
  };
}

describe('resolveResourceUri and exposedResourceUri', () => {
  const owners = new Map([
    ['everything', owner(['test://static/1', 'test://shared'], ['test://dynamic/{id}', 'file:///{+path}'])],
    ['everything2', owner(['test://static/2', 'test://shared'], ['test://dynamic/{id}'])],
    ['memory', owner(['memory://graph'], ['memory://entity/{name}'])],
  ]);

  it('keeps a URI one server offers and reads it from that server', () => {
    expect(resolveResourceUri(owners, 'test://static/1')).toEqual({ namespace: 'everything', uri: 'test://static/1' });
    expect(exposedResourceUri(owners, 'everything', 'test://static/1')).toBe('test://static/1');
    expect(exposedResourceUri(owners, 'memory', 'memory://entity/{name}')).toBe('memory://entity/{name}');
    expect(resolveResourceUri(owners, 'memory://entity/{name}')).toEqual({ namespace: 'memory', uri: 'memory://entity/{name}' });
  });

  it('names a URI or template string two servers offer bulkhead://<ns>/<uri>, unencoded, and refuses the bare one', () => {
    expect(exposedResourceUri(owners, 'everything', 'test://shared')).toBe('bulkhead://everything/test://shared');
    expect(exposedResourceUri(owners, 'everything2', 'test://shared')).toBe('bulkhead://everything2/test://shared');
    expect(exposedResourceUri(owners, 'everything2', 'test://dynamic/{id}')).toBe('bulkhead://everything2/test://dynamic/{id}');
    expect(resolveResourceUri(owners, 'test://shared')).toBeUndefined();
    expect(resolveResource(owners, 'test://shared')).toEqual({ kind: 'ambiguous', namespaces: ['everything', 'everything2'] });
    expect(resolveResource(owners, 'test://dynamic/7')).toEqual({ kind: 'ambiguous', namespaces: ['everything', 'everything2'] });
  });

  it('reads bulkhead://<ns>/<uri> from <ns> whatever the lists say, and whatever its state', () => {
    expect(resolveResourceUri(owners, 'bulkhead://everything2/test://shared')).toEqual({ namespace: 'everything2', uri: 'test://shared' });
    expect(resolveResourceUri(owners, 'bulkhead://memory/not-listed-anywhere')).toEqual({ namespace: 'memory', uri: 'not-listed-anywhere' });
    const down = new Map([['everything', owner(['test://static/1'], [], 'restarting')]]);
    expect(resolveResourceUri(down, 'bulkhead://everything/test://static/1')).toEqual({ namespace: 'everything', uri: 'test://static/1' });
    // A server that is not up offers nothing by its bare URIs.
    expect(resolveResource(down, 'test://static/1')).toEqual({ kind: 'none' });
  });

  it('takes everything after the first slash as the URI: no decoding, no dot segments', () => {
    expect(resolveResourceUri(owners, 'bulkhead://everything/../everything2/test://static/2')).toEqual({ namespace: 'everything', uri: '../everything2/test://static/2' });
    expect(resolveResourceUri(owners, 'bulkhead://everything/bulkhead://everything2/test://static/2')).toEqual({ namespace: 'everything', uri: 'bulkhead://everything2/test://static/2' });
    expect(resolveResource(owners, 'bulkhead://everything%2F..%2Feverything2/test://static/2')).toEqual({ kind: 'unknown_namespace', namespace: 'everything%2F..%2Feverything2' });
    expect(resolveResource(owners, 'bulkhead://EVERYTHING2/test://static/2')).toEqual({ kind: 'unknown_namespace', namespace: 'EVERYTHING2' });
    expect(splitGatewayUri('bulkhead:///test://static/2')).toEqual({ namespace: '', uri: 'test://static/2' });
    expect(resolveResource(owners, 'bulkhead:///test://static/2')).toEqual({ kind: 'unknown_namespace', namespace: '' });
  });

  it('says which part is missing or unknown', () => {
    expect(resolveResource(owners, 'bulkhead://everything')).toEqual({ kind: 'no_uri', namespace: 'everything' });
    expect(resolveResource(owners, 'bulkhead://everything/')).toEqual({ kind: 'no_uri', namespace: 'everything' });
    expect(resolveResource(owners, 'bulkhead://nope/x')).toEqual({ kind: 'unknown_namespace', namespace: 'nope' });
    expect(resolveResource(owners, 'test://nowhere')).toEqual({ kind: 'none' });
  });

  it('prefers a listed URI to a template that matches it, and shows a server\'s own bulkhead:// URIs, in any spelling, under its namespace', () => {
    const mixed = new Map([
      ['a', owner(['shop://item/42'])],
      ['b', owner([], ['shop://item/{id}'])],
      ['c', owner(['bulkhead://elsewhere/thing'])],
    ]);
    expect(resolveResourceUri(mixed, 'shop://item/42')).toEqual({ namespace: 'a', uri: 'shop://item/42' });
    expect(resolveResourceUri(mixed, 'shop://item/43')).toEqual({ namespace: 'b', uri: 'shop://item/43' });
    expect(exposedResourceUri(mixed, 'b', 'shop://item/42')).toBe('bulkhead://b/shop://item/42');
    // The gateway's scheme names a server by its namespace alone: a server cannot pose as another one (or as a server that is not there).
    expect(resolveResource(mixed, 'bulkhead://elsewhere/thing')).toEqual({ kind: 'unknown_namespace', namespace: 'elsewhere' });
    expect(exposedResourceUri(mixed, 'c', 'bulkhead://elsewhere/thing')).toBe('bulkhead://c/bulkhead://elsewhere/thing');
    expect(resolveResourceUri(mixed, 'bulkhead://c/bulkhead://elsewhere/thing')).toEqual({ namespace: 'c', uri: 'bulkhead://elsewhere/thing' });
    for (const forged of ['BULKHEAD://a/shop://item/42', 'bulkhead://x@a/shop://item/42', 'bulkhead://a:1/shop://item/42']) expect(exposedResourceUri(mixed, 'c', forged)).toBe(`bulkhead://c/${forged}`);
    expect(resolveResourceUri(mixed, 'BULKHEAD://a/shop://item/42')).toEqual({ namespace: 'a', uri: 'shop://item/42' });
  });
});

describe('matchesTemplate', () => {
  it('matches the level 1 and reserved, path, label and query forms', () => {
    expect(matchesTemplate('demo://resource/dynamic/text/{resourceId}', 'demo://resource/dynamic/text/12')).toBe(true);
    expect(matchesTemplate('demo://resource/dynamic/text/{resourceId}', 'demo://resource/dynamic/text/1/2')).toBe(false);
    expect(matchesTemplate('demo://resource/dynamic/text/{resourceId}', 'demo://resource/dynamic/text/')).toBe(false);
    expect(matchesTemplate('file://{+path}', 'file:///home/user/a b.txt')).toBe(true);
    expect(matchesTemplate('repo://{owner}{/name}', 'repo://acme/tool')).toBe(true);
    expect(matchesTemplate('repo://{owner}{/name}', 'repo://acme/tool/extra')).toBe(false);
    expect(matchesTemplate('tree://root{/path*}', 'tree://root/a/b/c')).toBe(true);
    expect(matchesTemplate('doc://{name}{.ext}', 'doc://readme.md')).toBe(true);
    expect(matchesTemplate('search://q{?term,page}', 'search://q?term=x&page=2')).toBe(true);
    expect(matchesTemplate('page://{name}{#section}', 'page://intro#usage')).toBe(true);
    expect(matchesTemplate('a://{x}/b', 'a://1/c')).toBe(false);
    expect(matchesTemplate('plain://no/variables', 'plain://no/variables')).toBe(true);
  });

  it('matches nothing for expressions it does not understand or an unclosed brace', () => {
    expect(matchesTemplate('odd://{;params}', 'odd://;params=1')).toBe(false);
    expect(matchesTemplate('odd://{x', 'odd://{x')).toBe(false);
    expect(matchesTemplate('odd://{ spaced }', 'odd://1')).toBe(false);
  });

  it('answers at once for a template built to backtrack and for an over-long URI', () => {
    const hostile = `x://${'{+a}x'.repeat(30)}y`;
    // A backtracking matcher would not finish this within the test's timeout (nor the universe's).
    expect(matchesTemplate(hostile, `x://${'x'.repeat(MAX_MATCHED_URI_LENGTH - 10)}`)).toBe(false);
    expect(matchesTemplate(hostile, `x://${'x'.repeat(29)}y`)).toBe(false);
    expect(matchesTemplate(hostile, `x://${'ax'.repeat(30)}y`)).toBe(true);
    expect(matchesTemplate('x://{+a}', `x://${'a'.repeat(MAX_MATCHED_URI_LENGTH)}`)).toBe(false);
  });
});
