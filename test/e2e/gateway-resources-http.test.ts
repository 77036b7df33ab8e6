// Resources through the gateway over Streamable HTTP, where several clients share it: each
// connection gets the updates of its own subscriptions only, a server is subscribed once per URI
// while any connection is and let go when the last one leaves or its session ends, and a token
// whose profile sees only fs sees no resource of the others and cannot read one by its URI.
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import type { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { ResourceUpdatedNotificationSchema } from '@modelcontextprotocol/sdk/types.js';
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startHttpServer, tempWorkspace, type HttpServerProcess, type TempWorkspace } from '@bulkhead/core/testing';
import { EVERYTHING, GATEWAY_CLI, text } from './helpers.js';

const RESOURCE_SERVER = fileURLToPath(new URL('../fixtures/resource-server.mjs', import.meta.url));
const FULL = 'full-access-token-0123456789';
const NARROW = 'fs-only-token-0123456789abc';

async function refusal(promise: Promise<unknown>): Promise<string> {
  try {
    await promise;
  } catch (error) {
    return (error as Error).message;
  }
  throw new Error('expected a refusal');
}

function updatesOf(client: Client): string[] {
  const updated: string[] = [];
  client.setNotificationHandler(ResourceUpdatedNotificationSchema, async (notification) => {
    updated.push(notification.params.uri);
  });
  return updated;
}

describe('resources over HTTP, shared by several clients', () => {
  let ws: TempWorkspace;
  let gateway: HttpServerProcess;
  let second: Client;
  let narrow: Client;
  const subscribedOnFixture = async () => text(await gateway.client.callTool({ name: 'call_tool', arguments: { name: 'fixture__subscriptions', arguments: {} } }));
  const touch = (uris: string[]) => gateway.client.callTool({ name: 'call_tool', arguments: { name: 'fixture__touch', arguments: { uris } } });

  beforeAll(async () => {
    ws = tempWorkspace({
      'full.token': FULL,
      '.bulkhead/fs-only.token': NARROW,
      '.bulkhead/permissions.yaml': 'allow:\n  - fixture\ndeny:\n  - everything:resources/read(demo://resource/dynamic/blob/*)\n',
      '.bulkhead/bulkhead.yaml':
        `servers:\n  fs: {}\n  everything:\n    command: ${process.execPath}\n    args: [${EVERYTHING}, stdio]\n    trust: [annotations, results]\n` +
        `  fixture:\n    command: ${process.execPath}\n    args: [${RESOURCE_SERVER}, '3']\n    trust: [results]\n` +
        'profiles:\n  fs_only:\n    namespaces: [fs]\ntokens:\n  - file: fs-only.token\n    profile: fs_only\n',
    });
    gateway = await startHttpServer({ script: GATEWAY_CLI, args: ['start', '--root', ws.root, '--token-file', ws.path('full.token')], headers: { authorization: `Bearer ${FULL}` } });
    [second, narrow] = await Promise.all([gateway.connectAnother(), gateway.connectAnother({ authorization: `Bearer ${NARROW}` })]);
  });
  afterAll(async () => {
    await Promise.all([second?.close(), narrow?.close()]);
    await gateway?.close();
    ws?.cleanup();
  });

  it('shows a profile that sees only fs no resource of the others, and refuses reading one by its URI', async () => {
    expect((await gateway.client.listResources()).resources.length).toBe(7 + 3 + 2);
    // The deny rule's glob matches the blob template's string: the template is not listed, and its URIs are refused.
    expect((await gateway.client.listResourceTemplates()).resourceTemplates.map((template) => template.uriTemplate)).toEqual(['demo://resource/dynamic/text/{resourceId}', 'fixture://item/{id}']);
    expect(await refusal(gateway.client.readResource({ uri: 'demo://resource/dynamic/blob/3' }))).toBe(
      `MCP error -32600: Permission denied: everything:resources/read is denied by ${ws.path('.bulkhead/permissions.yaml')} line 4 (\`everything:resources/read(demo://resource/dynamic/blob/*)\`). To allow it: remove or narrow that deny entry.`,
    );
    expect((await gateway.client.readResource({ uri: 'demo://resource/dynamic/text/3' })).contents[0]).toMatchObject({ text: expect.stringMatching(/^Resource 3: /) });
    expect(await narrow.listResources()).toEqual({ resources: [] });
    expect(await narrow.listResourceTemplates()).toEqual({ resourceTemplates: [] });
    expect(await refusal(narrow.readResource({ uri: 'demo://resource/static/document/features.md' }))).toBe(
      'MCP error -32602: Unknown resource demo://resource/static/document/features.md: no server of this gateway lists it or has a template it matches; resources/list and resources/templates/list show what there is',
    );
    expect(await refusal(narrow.readResource({ uri: 'bulkhead://everything/demo://resource/static/document/features.md' }))).toBe(
      'MCP error -32602: Unknown resource bulkhead://everything/demo://resource/static/document/features.md: this gateway has no server called everything (its servers: fs)',
    );
    expect(await refusal(narrow.subscribeResource({ uri: 'fixture://item/1' }))).toBe(
      'MCP error -32602: Unknown resource fixture://item/1: no server of this gateway lists it or has a template it matches; resources/list and resources/templates/list show what there is',
    );
    expect(await subscribedOnFixture()).toBe('[]');
    // The fs compartment offers no resources: a read by its bulkhead:// form goes to it, and it answers as it does to any client.
    expect(await refusal(narrow.readResource({ uri: 'bulkhead://fs/file:///etc/passwd' }))).toBe('MCP error -32601: Method not found');
    expect(await refusal(narrow.subscribeResource({ uri: 'bulkhead://fs/file:///etc/passwd' }))).toBe(
      'MCP error -32600: fs does not offer resource subscriptions (it did not declare resources.subscribe), so bulkhead://fs/file:///etc/passwd cannot be subscribed to',
    );
    const audit = readFileSync(ws.path('.bulkhead/audit/gateway.jsonl'), 'utf8').split('\n').filter(Boolean).map((line) => JSON.parse(line) as { tool: string; args: { uri?: string }; outcome: string });
    expect(audit.filter((line) => line.tool.startsWith('gateway:resources/')).map((line) => `${line.tool} ${line.args.uri} ${line.outcome}`)).toEqual([
      'gateway:resources/read demo://resource/static/document/features.md error',
      'gateway:resources/read bulkhead://everything/demo://resource/static/document/features.md error',
      'gateway:resources/subscribe fixture://item/1 error',
    ]);
  });

  it('sends each connection the updates of its own subscriptions, and lets go of a closed session', async () => {
    const firstUpdates = updatesOf(gateway.client);
    const secondUpdates = updatesOf(second);
    await gateway.client.subscribeResource({ uri: 'fixture://item/1' });
    await second.subscribeResource({ uri: 'fixture://item/2' });
    // Both on one URI: the server is subscribed to it once.
    await gateway.client.subscribeResource({ uri: 'fixture://item/3' });
    await second.subscribeResource({ uri: 'fixture://item/3' });
    expect(await subscribedOnFixture()).toBe('["fixture://item/1","fixture://item/2","fixture://item/3"]');
    await touch(['fixture://item/2', 'fixture://item/1', 'fixture://item/3']);
    await expect.poll(() => firstUpdates).toEqual(['fixture://item/1', 'fixture://item/3']);
    await expect.poll(() => secondUpdates).toEqual(['fixture://item/2', 'fixture://item/3']);
    // One of two subscribers leaves: the server stays subscribed for the other.
    await gateway.client.unsubscribeResource({ uri: 'fixture://item/3' });
    expect(await subscribedOnFixture()).toBe('["fixture://item/1","fixture://item/2","fixture://item/3"]');
    // The second session ends without unsubscribing: what only it held is let go.
    await (second.transport as StreamableHTTPClientTransport).terminateSession();
    await second.close();
    await expect.poll(subscribedOnFixture).toBe('["fixture://item/1"]');
    await touch(['fixture://item/3', 'fixture://item/1']);
    await expect.poll(() => firstUpdates).toEqual(['fixture://item/1', 'fixture://item/3', 'fixture://item/1']);
  });
});
