// Resources through the gateway, started as a user starts it (the built CLI over stdio, in an
// empty folder with the bulkhead.yaml a user writes), in front of the real server-everything from
// npm and a fixture server whose updates and subscriptions a test controls; compared with a
// direct SDK connection to server-everything. The naming rule with two server-everythings, the
// permission gate and the audit log on reads, the output limits, subscriptions across a restart,
// and URIs made to reach a server they do not name.
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { gunzipSync } from 'node:zlib';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { ResourceListChangedNotificationSchema, ResourceUpdatedNotificationSchema, type ReadResourceResult, type Resource, type ResourceTemplate } from '@modelcontextprotocol/sdk/types.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startStdioServer, tempWorkspace, type ServerProcess, type TempWorkspace } from '@bulkhead/core/testing';
import { descendants, EVERYTHING, GATEWAY_CLI, text } from './helpers.js';

const RESOURCE_SERVER = fileURLToPath(new URL('../fixtures/resource-server.mjs', import.meta.url));
const FIXTURE_ITEMS = 120;
const DENIED_DOC = 'demo://resource/static/document/features.md';

/** A server-everything entry of bulkhead.yaml, trusted with its results so they compare as sent (or, untrusted, labelled as data). */
function everythingEntry(namespace: string, trusted = true): string {
  return `  ${namespace}:\n    command: ${process.execPath}\n    args: [${EVERYTHING}, stdio]\n${trusted ? '    trust: [annotations, results]\n' : ''}`;
}

async function connectDirect(): Promise<Client> {
  const client = new Client({ name: 'direct', version: '1.0.0' });
  await client.connect(new StdioClientTransport({ command: process.execPath, args: [EVERYTHING, 'stdio'], stderr: 'ignore' }));
  return client;
}

/** Every page of a list, with how many pages it took. */
async function allPages<T>(page: (cursor: string | undefined) => Promise<{ items: T[]; nextCursor?: string | undefined }>): Promise<{ items: T[]; pages: number }> {
  const items: T[] = [];
  let cursor: string | undefined;
  let pages = 0;
  do {
    const listed = await page(cursor);
    pages++;
    items.push(...listed.items);
    cursor = listed.nextCursor;
  } while (cursor);
  return { items, pages };
}

const listResources = (client: Client) => allPages<Resource>((cursor) => client.listResources(cursor ? { cursor } : undefined).then((page) => ({ items: page.resources, nextCursor: page.nextCursor })));
const listTemplates = (client: Client) =>
  allPages<ResourceTemplate>((cursor) => client.listResourceTemplates(cursor ? { cursor } : undefined).then((page) => ({ items: page.resourceTemplates, nextCursor: page.nextCursor })));

/** The message of the JSON-RPC error a promise rejects with. */
async function refusal(promise: Promise<unknown>): Promise<string> {
  try {
    await promise;
  } catch (error) {
    return (error as Error).message;
  }
  throw new Error('expected a refusal');
}

/** A dynamic resource's text says when it was made; two reads differ only in that. */
function withoutTime(result: ReadResourceResult): ReadResourceResult {
  const timeless = (value: string) => value.replace(/created at [^"]+$/, 'created at <time>');
  return {
    ...result,
    contents: result.contents.map((content) =>
      'text' in content ? { ...content, text: timeless(content.text) } : { ...content, blob: Buffer.from(timeless(Buffer.from(content.blob, 'base64').toString('utf8'))).toString('base64') },
    ),
  };
}

interface AuditLine {
  tool: string;
  args: { uri?: string };
  decision: string;
  outcome: string;
  error?: string;
}

function auditLines(ws: TempWorkspace): AuditLine[] {
  return readFileSync(ws.path('.bulkhead/audit/gateway.jsonl'), 'utf8')
    .split('\n')
    .filter(Boolean)
    .map((line) => JSON.parse(line) as AuditLine);
}

/** Collects the client's notifications of one kind. */
function collect(client: Client) {
  const updated: string[] = [];
  let listChanged = 0;
  client.setNotificationHandler(ResourceUpdatedNotificationSchema, async (notification) => {
    updated.push(notification.params.uri);
  });
  client.setNotificationHandler(ResourceListChangedNotificationSchema, async () => {
    listChanged++;
  });
  return { updated, listChanged: () => listChanged };
}

describe('server-everything and a fixture server behind the gateway', () => {
  let ws: TempWorkspace;
  let gateway: ServerProcess;
  let direct: Client;
  let notices: ReturnType<typeof collect>;
  const call = (name: string, args: Record<string, unknown> = {}) => gateway.client.callTool({ name: 'call_tool', arguments: { name, arguments: args } });

  beforeAll(async () => {
    ws = tempWorkspace({
      '.bulkhead/bulkhead.yaml':
        `restart:\n  initial_delay_ms: 100\nservers:\n${everythingEntry('everything')}  fixture:\n    command: ${process.execPath}\n    args: [${RESOURCE_SERVER}, '${FIXTURE_ITEMS}']\n    trust: [results]\n`,
      '.bulkhead/permissions.yaml': `allow:\n  - fixture\n  - everything\ndeny:\n  - everything:resources/read(${DENIED_DOC})\n  - fixture:resources/subscribe(fixture://item/9)\nask:\n  - fixture:resources/read(fixture://item/13)\n`,
    });
    [gateway, direct] = await Promise.all([startStdioServer({ script: GATEWAY_CLI, args: ['start', '--root', ws.root], cwd: ws.root }), connectDirect()]);
    notices = collect(gateway.client);
  });
  afterAll(async () => {
    await Promise.all([gateway?.close(), direct?.close()]);
    ws?.cleanup();
  });

  it('advertises resources with subscriptions and list_changed', () => {
    expect(gateway.client.getServerCapabilities()?.resources).toEqual({ subscribe: true, listChanged: true });
  });

  it('lists every resource and template of server-everything as a direct connection does, then the fixture, in pages of 100', async () => {
    const [viaGateway, viaDirect, templates, directTemplates] = await Promise.all([listResources(gateway.client), listResources(direct), listTemplates(gateway.client), listTemplates(direct)]);
    expect(viaDirect.items.length).toBeGreaterThanOrEqual(7);
    // Discovery never grants permission: the one a deny rule names is not listed.
    const readable = viaDirect.items.filter((resource) => resource.uri !== DENIED_DOC);
    expect(readable.length).toBe(viaDirect.items.length - 1);
    expect(viaGateway.items.slice(0, readable.length)).toEqual(readable);
    expect(viaGateway.items.slice(readable.length).map((resource) => resource.uri)).toEqual([
      ...Array.from({ length: FIXTURE_ITEMS }, (_, index) => `fixture://item/${index + 1}`),
      'fixture://big/text',
      'fixture://big/blob',
    ]);
    expect(viaGateway.pages).toBe(2);
    expect(directTemplates.items.map((template) => template.uriTemplate)).toEqual(['demo://resource/dynamic/text/{resourceId}', 'demo://resource/dynamic/blob/{resourceId}']);
    expect(templates.items).toEqual([...directTemplates.items, { uriTemplate: 'fixture://item/{id}', name: 'an item by number' }]);
    expect(templates.pages).toBe(1);
  });

  it('refuses a cursor it did not make, and one of the other list', async () => {
    const invalid = 'MCP error -32602: Invalid cursor for resources/list: pass the nextCursor of the previous resources/list page as it is, or no cursor for the first page';
    expect(await refusal(gateway.client.listResources({ cursor: 'not-a-cursor' }))).toBe(invalid);
    expect(await refusal(gateway.client.listResources({ cursor: Buffer.from('{"list":"resources/list","offset":-1}').toString('base64url') }))).toBe(invalid);
    const templatesCursor = Buffer.from(JSON.stringify({ list: 'resources/templates/list', offset: 0 })).toString('base64url');
    expect(await refusal(gateway.client.listResources({ cursor: templatesCursor }))).toBe(invalid);
    const second = (await gateway.client.listResources()).nextCursor!;
    expect((await gateway.client.listResources({ cursor: second })).resources.length).toBe(6 + FIXTURE_ITEMS + 2 - 100);
  });

  it('reads every listed resource of server-everything as a direct connection does, text and template-made blob alike', async () => {
    const { items } = await listResources(direct);
    for (const resource of items.filter((item) => item.uri !== DENIED_DOC)) {
      expect(await gateway.client.readResource({ uri: resource.uri })).toEqual(await direct.readResource({ uri: resource.uri }));
    }
    for (const uri of ['demo://resource/dynamic/text/3', 'demo://resource/dynamic/blob/4']) {
      const [viaGateway, viaDirect] = await Promise.all([gateway.client.readResource({ uri }), direct.readResource({ uri })]);
      expect(withoutTime(viaGateway)).toEqual(withoutTime(viaDirect));
      expect(viaGateway.contents[0]!.uri).toBe(uri);
    }
    expect((await gateway.client.readResource({ uri: 'fixture://item/77' })).contents).toEqual([{ uri: 'fixture://item/77', mimeType: 'text/plain', text: 'the content of fixture://item/77' }]);
    // A template's URI outside any listing goes to the one server whose template it matches.
    expect((await gateway.client.readResource({ uri: 'fixture://item/5000' })).contents[0]).toMatchObject({ text: 'the content of fixture://item/5000' });
  });

  it('returns resource links from get-resource-links that read back through the gateway', async () => {
    const result = (await call('everything__get-resource-links', { count: 4 })) as { content: { type: string; uri?: string }[] };
    const links = result.content.filter((block) => block.type === 'resource_link');
    expect(links.map((link) => link.uri)).toEqual(['demo://resource/dynamic/blob/1', 'demo://resource/dynamic/text/2', 'demo://resource/dynamic/blob/3', 'demo://resource/dynamic/text/4']);
    for (const link of links) expect((await gateway.client.readResource({ uri: link.uri! })).contents[0]!.uri).toBe(link.uri);
  });

  it('refuses a read a deny rule names, and writes each read in the audit log', async () => {
    expect(await refusal(gateway.client.readResource({ uri: DENIED_DOC }))).toBe(
      `MCP error -32600: Permission denied: everything:resources/read is denied by ${ws.path('.bulkhead/permissions.yaml')} line 5 (\`everything:resources/read(${DENIED_DOC})\`). To allow it: remove or narrow that deny entry.`,
    );
    // ask has no confirmation prompt for a read: it is refused with what would allow it (an allow entry would not: ask wins over allow).
    expect(await refusal(gateway.client.readResource({ uri: 'fixture://item/13' }))).toBe(
      `MCP error -32600: Permission denied: fixture:resources/read must be confirmed: ${ws.path('.bulkhead/permissions.yaml')} line 8 lists it under ask (\`fixture:resources/read(fixture://item/13)\`), and resources/read has no confirmation prompt. To allow it: move it from ask to allow in ${ws.path('.bulkhead/permissions.yaml')}.`,
    );
    await gateway.client.readResource({ uri: 'demo://resource/static/document/startup.md' });
    const lines = auditLines(ws);
    expect(lines.filter((line) => line.tool === 'everything:resources/read' && line.args.uri === DENIED_DOC)).toEqual([
      expect.objectContaining({ decision: 'deny', outcome: 'denied', error: expect.stringContaining('is denied by') }),
    ]);
    expect(lines.filter((line) => line.tool === 'everything:resources/read' && line.args.uri === 'demo://resource/static/document/startup.md').at(-1)).toMatchObject({ decision: 'allow', outcome: 'ok' });
  });

  it('cuts text over the output limit with a marker and refuses a blob over it', async () => {
    const big = (await gateway.client.readResource({ uri: 'fixture://big/text' })).contents[0] as { text: string };
    expect(Buffer.byteLength(big.text)).toBeLessThanOrEqual(512 * 1024);
    expect(big.text).toMatch(/^0123456789abcdef[\s\S]*\n…\(\d+ bytes truncated\)…\n[\s\S]*\nthe end\n$/);
    expect(await refusal(gateway.client.readResource({ uri: 'fixture://big/blob' }))).toBe(
      "MCP error -32600: Resource fixture://big/blob holds 6.8 MiB of binary data, over the gateway's cap of 6.0 MiB for binary data in one reply; it was not passed on",
    );
    expect(auditLines(ws).filter((line) => line.tool === 'fixture:resources/read' && line.args.uri === 'fixture://big/blob').at(-1)).toMatchObject({ decision: 'allow', outcome: 'error' });
  });

  it('refuses URIs that name no server, no URI, or try to reach another server', async () => {
    expect(await refusal(gateway.client.readResource({ uri: 'bulkhead://nope/x' }))).toBe(
      'MCP error -32602: Unknown resource bulkhead://nope/x: this gateway has no server called nope (its servers: everything, fixture)',
    );
    expect(await refusal(gateway.client.readResource({ uri: 'bulkhead://everything' }))).toBe(
      "MCP error -32602: bulkhead://everything names no resource: write bulkhead://everything/<the resource's URI on everything>",
    );
    expect(await refusal(gateway.client.readResource({ uri: 'bulkhead://everything/' }))).toBe(
      "MCP error -32602: bulkhead://everything/ names no resource: write bulkhead://everything/<the resource's URI on everything>",
    );
    expect(await refusal(gateway.client.readResource({ uri: 'demo://nowhere' }))).toBe(
      'MCP error -32602: Unknown resource demo://nowhere: no server of this gateway lists it or has a template it matches; resources/list and resources/templates/list show what there is',
    );
    // The rest after the namespace goes to that server as it is: everything is asked for it, and cannot parse it (its own error, passed on).
    expect(await refusal(gateway.client.readResource({ uri: 'bulkhead://everything/../fixture/fixture://item/1' }))).toBe('MCP error -32603: Invalid URL');
    expect(await refusal(gateway.client.readResource({ uri: 'bulkhead://everything/demo://resource/../../fixture/fixture://item/1' }))).toBe(
      'MCP error -32602: MCP error -32602: Resource demo://resource/fixture/fixture://item/1 not found',
    );
    // Sent as written (everything resolved the dots itself, in its own URI space).
    expect(auditLines(ws).filter((line) => line.tool === 'everything:resources/read').at(-1)).toMatchObject({ args: { uri: 'demo://resource/../../fixture/fixture://item/1' }, outcome: 'error' });
    expect(await refusal(gateway.client.readResource({ uri: 'bulkhead://everything%2F..%2Ffixture/fixture://item/1' }))).toBe(
      'MCP error -32602: Unknown resource bulkhead://everything%2F..%2Ffixture/fixture://item/1: this gateway has no server called everything%2F..%2Ffixture (its servers: everything, fixture)',
    );
    const audited = auditLines(ws).filter((line) => line.tool === 'gateway:resources/read').map((line) => line.args.uri);
    expect(audited).toEqual(expect.arrayContaining(['bulkhead://nope/x', 'bulkhead://everything', 'demo://nowhere']));
    // The fixture was never asked: its only reads are the ones the tests above made.
    expect(auditLines(ws).filter((line) => line.tool === 'fixture:resources/read' && line.args.uri === 'fixture://item/1')).toEqual([]);
  });

  it('sends a fixture update only to a subscriber, stops after unsubscribe, and unsubscribes the server', async () => {
    await gateway.client.subscribeResource({ uri: 'fixture://item/1' });
    expect(text(await call('fixture__subscriptions'))).toBe('["fixture://item/1"]');
    // item/2 is sent first and nobody is subscribed to it: had it been passed on, it would have come before item/1.
    await call('fixture__touch', { uris: ['fixture://item/2', 'fixture://item/1'] });
    await expect.poll(() => notices.updated).toEqual(['fixture://item/1']);
    await gateway.client.unsubscribeResource({ uri: 'fixture://item/1' });
    expect(text(await call('fixture__subscriptions'))).toBe('[]');
    await gateway.client.subscribeResource({ uri: 'fixture://item/3' });
    await call('fixture__touch', { uris: ['fixture://item/1', 'fixture://item/3'] });
    await expect.poll(() => notices.updated).toEqual(['fixture://item/1', 'fixture://item/3']);
    await gateway.client.unsubscribeResource({ uri: 'fixture://item/3' });
    expect(await refusal(gateway.client.subscribeResource({ uri: 'fixture://item/9' }))).toBe(
      `MCP error -32600: Permission denied: fixture:resources/subscribe is denied by ${ws.path('.bulkhead/permissions.yaml')} line 6 (\`fixture:resources/subscribe(fixture://item/9)\`). To allow it: remove or narrow that deny entry.`,
    );
    expect(text(await call('fixture__subscriptions'))).toBe('[]');
    notices.updated.length = 0;
  });

  it('relays the updates server-everything sends for a subscribed resource, and none after unsubscribing', async () => {
    const uri = 'demo://resource/static/document/startup.md';
    const marker = 'demo://resource/static/document/structure.md';
    await gateway.client.subscribeResource({ uri });
    // It sends an update for each subscribed URI at once, then every 5 s while on.
    expect(text(await call('everything__toggle-subscriber-updates'))).toMatch(/^Started simulated resource updated notifications/);
    await expect.poll(() => notices.updated).toEqual([uri]);
    expect(text(await call('everything__toggle-subscriber-updates'))).toMatch(/^Stopped simulated resource updates/);
    await gateway.client.unsubscribeResource({ uri });
    await gateway.client.subscribeResource({ uri: marker });
    notices.updated.length = 0;
    // It walks its subscriptions in the order they were first made: had `uri` still been subscribed, its update would come first.
    await call('everything__toggle-subscriber-updates');
    await expect.poll(() => notices.updated).toContain(marker);
    await call('everything__toggle-subscriber-updates');
    expect(notices.updated.filter((updated) => updated === uri)).toEqual([]);
    await gateway.client.unsubscribeResource({ uri: marker });
    notices.updated.length = 0;
  });

  it('tells of a server going down and coming back, and subscribes it again', async () => {
    await gateway.client.subscribeResource({ uri: 'fixture://item/4' });
    const before = notices.listChanged();
    const fixture = descendants(gateway.pid!).find((pid) => readFileSync(`/proc/${pid}/cmdline`, 'utf8').includes('resource-server.mjs'))!;
    process.kill(fixture, 'SIGKILL');
    await expect.poll(() => notices.listChanged(), { timeout: 15_000 }).toBeGreaterThanOrEqual(before + 2);
    await expect.poll(async () => text(await call('fixture__subscriptions')), { timeout: 15_000 }).toBe('["fixture://item/4"]');
    await call('fixture__touch', { uris: ['fixture://item/4'] });
    await expect.poll(() => notices.updated).toEqual(['fixture://item/4']);
    expect((await listResources(gateway.client)).items.length).toBe(6 + FIXTURE_ITEMS + 2);
  });

  it('tells of a resource server-everything adds while up, and its link reads back', async () => {
    const before = notices.listChanged();
    const result = (await call('everything__gzip-file-as-resource', { name: 'hello.gz', data: 'data:text/plain;base64,aGVsbG8=', outputType: 'resourceLink' })) as { content: { type: string; uri?: string }[] };
    const link = result.content.find((block) => block.type === 'resource_link')!.uri!;
    // Either form reads from everything: bulkhead://everything/… when the result came before the server's list_changed was read.
    const forms = ['demo://resource/session/hello.gz', 'bulkhead://everything/demo://resource/session/hello.gz'];
    expect(forms).toContain(link);
    const content = (await gateway.client.readResource({ uri: link })).contents[0]!;
    expect(content.mimeType).toBe('application/gzip');
    expect(gunzipSync(Buffer.from((content as { blob: string }).blob, 'base64')).toString()).toBe('hello');
    expect(forms).toContain(content.uri);
    await expect.poll(() => notices.listChanged()).toBeGreaterThan(before);
    expect((await listResources(gateway.client)).items.map((resource) => resource.uri)).toContain('demo://resource/session/hello.gz');
  });
});

// everything2 is not trusted with its results: they come wrapped as untrusted data, and its links must stay links.
describe('two server-everythings behind one gateway', () => {
  let ws: TempWorkspace;
  let gateway: ServerProcess;

  beforeAll(async () => {
    ws = tempWorkspace({ '.bulkhead/bulkhead.yaml': `servers:\n${everythingEntry('everything')}${everythingEntry('everything2', false)}`, '.bulkhead/permissions.yaml': 'allow:\n  - everything\n  - everything2\n' });
    gateway = await startStdioServer({ script: GATEWAY_CLI, args: ['start', '--root', ws.root], cwd: ws.root });
  });
  afterAll(async () => {
    await gateway?.close();
    ws?.cleanup();
  });

  it('lists each one of both as bulkhead://<ns>/<uri>, templates too', async () => {
    const { items } = await listResources(gateway.client);
    const direct = await connectDirect();
    const { items: once } = await listResources(direct).finally(() => direct.close());
    expect(items).toEqual([
      ...once.map((resource) => ({ ...resource, uri: `bulkhead://everything/${resource.uri}` })),
      ...once.map((resource) => ({ ...resource, uri: `bulkhead://everything2/${resource.uri}` })),
    ]);
    expect((await listTemplates(gateway.client)).items.map((template) => template.uriTemplate)).toEqual([
      'bulkhead://everything/demo://resource/dynamic/text/{resourceId}',
      'bulkhead://everything/demo://resource/dynamic/blob/{resourceId}',
      'bulkhead://everything2/demo://resource/dynamic/text/{resourceId}',
      'bulkhead://everything2/demo://resource/dynamic/blob/{resourceId}',
    ]);
  });

  it('reads each from its own server and refuses the bare URI, naming both forms', async () => {
    const uri = 'demo://resource/static/document/structure.md';
    const second = await gateway.client.readResource({ uri: `bulkhead://everything2/${uri}` });
    expect(second.contents[0]!.uri).toBe(`bulkhead://everything2/${uri}`);
    expect(second.contents[0]).toMatchObject({ mimeType: 'text/markdown', text: expect.stringContaining('# Everything Server') });
    await gateway.client.readResource({ uri: `bulkhead://everything/demo://resource/dynamic/text/8` });
    const reads = auditLines(ws).filter((line) => line.tool.endsWith(':resources/read')).map((line) => `${line.tool} ${line.args.uri}`);
    expect(reads).toEqual([`everything2:resources/read ${uri}`, 'everything:resources/read demo://resource/dynamic/text/8']);
    expect(await refusal(gateway.client.readResource({ uri }))).toBe(
      `MCP error -32602: Resource ${uri} is offered by more than one server (everything, everything2); read it as bulkhead://everything/${uri} or bulkhead://everything2/${uri}`,
    );
    expect(await refusal(gateway.client.readResource({ uri: 'demo://resource/dynamic/text/8' }))).toBe(
      'MCP error -32602: Resource demo://resource/dynamic/text/8 is offered by more than one server (everything, everything2); read it as bulkhead://everything/demo://resource/dynamic/text/8 or bulkhead://everything2/demo://resource/dynamic/text/8',
    );
  });

  it('rewrites the resource links of the untrusted one so that they read from it, and they stay links', async () => {
    const result = (await gateway.client.callTool({ name: 'call_tool', arguments: { name: 'everything2__get-resource-links', arguments: { count: 2 } } })) as { content: { type: string; uri?: string; text?: string }[] };
    expect(result.content.map((block) => block.type)).toEqual(['text', 'resource_link', 'resource_link']);
    expect(result.content[0]!.text).toMatch(/^<untrusted[\s\S]*Here are 2 resource links[\s\S]*<\/untrusted/);
    const links = result.content.filter((block) => block.type === 'resource_link').map((block) => block.uri!);
    expect(links).toEqual(['bulkhead://everything2/demo://resource/dynamic/blob/1', 'bulkhead://everything2/demo://resource/dynamic/text/2']);
    for (const link of links) expect((await gateway.client.readResource({ uri: link })).contents[0]!.uri).toBe(link);
    expect(auditLines(ws).filter((line) => line.tool === 'everything2:resources/read').map((line) => line.args.uri).slice(-2)).toEqual(['demo://resource/dynamic/blob/1', 'demo://resource/dynamic/text/2']);
    const reference = (await gateway.client.callTool({ name: 'call_tool', arguments: { name: 'everything2__get-resource-reference', arguments: { resourceType: 'Text', resourceId: 5 } } })) as {
      content: { type: string; resource?: { uri: string; text?: string } }[];
    };
    const embedded = reference.content.find((block) => block.type === 'resource')!.resource!;
    expect(embedded).toMatchObject({ uri: 'bulkhead://everything2/demo://resource/dynamic/text/5', text: expect.stringMatching(/^<untrusted[\s\S]*Resource 5: /) });
    // Its errors are its words, labelled as data like its results; the contents of its resources are passed as they are.
    expect(await refusal(gateway.client.readResource({ uri: 'bulkhead://everything2/demo://nowhere' }))).toBe(
      'MCP error -32602: resources/read of demo://nowhere on everything2 failed with JSON-RPC error -32602:\n' +
        '<untrusted_external_content source="everything2 (third-party MCP server)">\nMCP error -32602: Resource demo://nowhere not found\n</untrusted_external_content>',
    );
  });
});
