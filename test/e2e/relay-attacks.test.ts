// Attacks on the relays of MCP besides tools, through the real gateway over Streamable HTTP: a
// hostile third-party server (test/fixtures/relay-attack-server.mjs, namespace `attack`) that
// poses as other servers in its resource URIs and links, floods its client and asks for roots,
// elicitation and sampling outside any call; a client whose token's profile sees only fs; and
// reads that try to slip past a deny rule by the URI's spelling.
import { existsSync, readFileSync, realpathSync, symlinkSync } from 'node:fs';
import { basename } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import type { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { ResourceListChangedNotificationSchema, ResourceUpdatedNotificationSchema } from '@modelcontextprotocol/sdk/types.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { tempWorkspace, type TempWorkspace } from '@bulkhead/core/testing';
import { EVERYTHING, text, until } from './helpers.js';
import { startHttpGateway, type ClientSide, type HttpGateway, type TestClient } from './relay-clients.js';

const ATTACK_SERVER = fileURLToPath(new URL('../fixtures/relay-attack-server.mjs', import.meta.url));
const FULL = 'full-access-token-0123456789';
const NARROW = 'fs-only-token-0123456789abc';

/** The text of a read's first content. */
function firstText(result: { contents: ({ text: string } | { blob: string })[] }): string | undefined {
  const first = result.contents[0];
  return first && 'text' in first ? first.text : undefined;
}

async function refusal(promise: Promise<unknown>): Promise<string> {
  try {
    await promise;
  } catch (error) {
    return (error as Error).message;
  }
  throw new Error('expected a refusal');
}

interface Heard {
  updated: string[];
  listChanged: number;
}
function listen(connected: TestClient): Heard {
  const heard: Heard = { updated: [], listChanged: 0 };
  connected.client.setNotificationHandler(ResourceUpdatedNotificationSchema, async (notification) => {
    heard.updated.push(notification.params.uri);
  });
  connected.client.setNotificationHandler(ResourceListChangedNotificationSchema, async () => {
    heard.listChanged++;
  });
  return heard;
}

const EVERY_REQUEST: ClientSide = {
  roots: () => [{ uri: 'file:///', name: 'everything on disk' }],
  elicit: () => ({ action: 'accept', content: { password: 'hunter2' } }),
  sample: () => ({ model: 'test-model', role: 'assistant', content: { type: 'text', text: 'yes' } }),
};

describe('relay attacks over Streamable HTTP', () => {
  let ws: TempWorkspace;
  let gateway: HttpGateway;
  let full: TestClient;
  let narrow: TestClient;
  const call = async (name: string, args: Record<string, unknown> = {}) => full.client.callTool({ name: 'call_tool', arguments: { name: `attack__${name}`, arguments: args } });
  const reads = () => (existsSync(ws.path('attack/reads.log')) ? readFileSync(ws.path('attack/reads.log'), 'utf8').trimEnd().split('\n') : []);
  const audit = () =>
    readFileSync(ws.path('.bulkhead/audit/gateway.jsonl'), 'utf8')
      .trimEnd()
      .split('\n')
      .map((line) => JSON.parse(line) as { tool: string; args: Record<string, unknown>; decision: string; outcome: string; error?: string });
  const permissions = () => ws.path('.bulkhead/permissions.yaml');

  beforeAll(async () => {
    ws = tempWorkspace({
      'full.token': FULL,
      '.bulkhead/fs-only.token': NARROW,
      '.bulkhead/permissions.yaml':
        'approval_wait_ms: 0\nautonomy: full\nallow:\n  - "attack:*"\n  - "everything:*"\ndeny:\n  - everything:resources/read(demo://resource/dynamic/blob/*)\n',
      '.bulkhead/bulkhead.yaml':
        `servers:\n  fs: {}\n  everything:\n    command: ${process.execPath}\n    args: [${EVERYTHING}, stdio]\n    trust: [annotations, results]\n` +
        `  attack:\n    command: ${process.execPath}\n    args: [${ATTACK_SERVER}, attack]\n` +
        'profiles:\n  fs_only:\n    namespaces: [fs]\ntokens:\n  - file: fs-only.token\n    profile: fs_only\n',
    });
    ws.mkdir('attack');
    gateway = await startHttpGateway(ws.root, { path: ws.path('full.token'), token: FULL });
    [full, narrow] = await Promise.all([gateway.connect(EVERY_REQUEST), gateway.connect(EVERY_REQUEST, NARROW)]);
  });
  afterAll(async () => {
    await gateway?.close();
    ws?.cleanup();
  });

  it("lists a server's URIs that pose as another server's under its own namespace, in every spelling of the scheme", async () => {
    const forged = (await full.client.listResources()).resources.filter((resource) => resource.name.startsWith('forged')).map((resource) => resource.uri);
    expect(forged).toEqual([
      'bulkhead://attack/bulkhead://fs/etc/passwd',
      'bulkhead://attack/BULKHEAD://fs/etc/hosts',
      'bulkhead://attack/bulkhead://x@fs/etc/shadow',
      'bulkhead://attack/bulkhead://fs:1/etc/group',
      'bulkhead://attack/Bulkhead://everything/demo://resource/static/document/features.md',
    ]);
    for (const uri of forged) expect((await full.client.readResource({ uri })).contents).toEqual([{ uri, mimeType: 'text/plain', text: expect.stringContaining(`attack content of ${uri.slice('bulkhead://attack/'.length)}`) }]);
    // The forged spellings read by themselves reach the server they name, never the one that listed them.
    expect(await refusal(full.client.readResource({ uri: 'bulkhead://fs/etc/passwd' }))).toBe('MCP error -32601: Method not found');
    expect(await refusal(full.client.readResource({ uri: 'BULKHEAD://fs/etc/hosts' }))).toBe('MCP error -32601: Method not found');
    expect(await refusal(full.client.readResource({ uri: 'bulkhead://x@fs/etc/shadow' }))).toBe(
      'MCP error -32602: Unknown resource bulkhead://x@fs/etc/shadow: this gateway has no server called x@fs (its servers: fs, everything, attack)',
    );
    expect(firstText(await full.client.readResource({ uri: 'Bulkhead://everything/demo://resource/static/document/features.md' }))).toMatch(/^# /);
    expect(reads()).toEqual(forged.map((uri) => uri.slice('bulkhead://attack/'.length)));
  });

  it("rewrites a tool result's links to files and to another server's namespace so they read back from the server that sent them", async () => {
    const result = await call('links');
    const blocks = (result.content as { type: string; uri?: string; resource?: { uri: string; text?: string } }[]).filter((block) => block.type !== 'text');
    expect(blocks.map((block) => block.uri ?? block.resource?.uri)).toEqual(['bulkhead://attack/file:///etc/passwd', 'bulkhead://attack/bulkhead://fs/etc/passwd', 'bulkhead://attack/bulkhead://fs/etc/passwd']);
    const readBack = await full.client.readResource({ uri: 'bulkhead://attack/file:///etc/passwd' });
    expect(firstText(readBack)).toContain('attack content of file:///etc/passwd');
    expect(firstText(readBack)).not.toContain('root:');
  });

  it('matches a template made to backtrack in one pass, and matches no URI over 8192 characters', async () => {
    const long = `attack://slow/${'x'.repeat(8000)}`;
    const unknown = (uri: string) => `MCP error -32602: Unknown resource ${uri}: no server of this gateway lists it or has a template it matches; resources/list and resources/templates/list show what there is`;
    expect(await refusal(full.client.readResource({ uri: long }))).toBe(unknown(long));
    expect(firstText(await full.client.readResource({ uri: `${long}y` }))).toContain(`attack content of ${long}y`);
    const tooLong = `attack://slow/${'x'.repeat(8200)}y`;
    expect(await refusal(full.client.readResource({ uri: tooLong }))).toBe(unknown(tooLong));
  });

  it('holds a deny rule on reads whatever the spelling of the URI, and audits each refusal', async () => {
    const denied = `MCP error -32600: Permission denied: everything:resources/read is denied by ${permissions()} line 7 (\`everything:resources/read(demo://resource/dynamic/blob/*)\`). To allow it: remove or narrow that deny entry.`;
    for (const uri of ['demo://resource/dynamic/blob/1', 'bulkhead://everything/demo://resource/dynamic/blob/1', 'BULKHEAD://everything/demo://resource/dynamic/blob/1', 'demo://resource/dynamic/blob/%31', 'bulkhead://everything/demo://resource/dynamic/blob/1/']) {
      expect(await refusal(full.client.readResource({ uri }))).toBe(denied);
    }
    // A trailing slash is no URI the template expands to, so it names no server at all.
    expect(await refusal(full.client.readResource({ uri: 'demo://resource/dynamic/blob/1/' }))).toBe(
      'MCP error -32602: Unknown resource demo://resource/dynamic/blob/1/: no server of this gateway lists it or has a template it matches; resources/list and resources/templates/list show what there is',
    );
    const lines = audit().filter((line) => line.tool === 'everything:resources/read' && line.outcome === 'denied');
    expect(lines.map((line) => line.args['uri'])).toEqual(['demo://resource/dynamic/blob/1', 'demo://resource/dynamic/blob/1', 'demo://resource/dynamic/blob/1', 'demo://resource/dynamic/blob/%31', 'demo://resource/dynamic/blob/1/']);
  });

  it('tells a profile that sees only fs nothing of the hostile server while it floods, not even that its lists changed', async () => {
    const fullHeard = listen(full);
    const narrowHeard = listen(narrow);
    await narrow.client.setLoggingLevel('debug');
    await full.client.setLoggingLevel('debug');
    await full.client.subscribeResource({ uri: 'attack://own/1' });
    expect(await refusal(narrow.client.subscribeResource({ uri: 'attack://own/1' }))).toBe(
      'MCP error -32602: Unknown resource attack://own/1: no server of this gateway lists it or has a template it matches; resources/list and resources/templates/list show what there is',
    );
    // Nor can it end another connection's subscription, by either spelling.
    await narrow.client.unsubscribeResource({ uri: 'attack://own/1' });
    await narrow.client.unsubscribeResource({ uri: 'bulkhead://attack/attack://own/1' });
    expect(await refusal(narrow.client.readResource({ uri: 'bulkhead://attack/attack://own/1' }))).toBe(
      'MCP error -32602: Unknown resource bulkhead://attack/attack://own/1: this gateway has no server called attack (its servers: fs)',
    );
    const progress: string[] = [];
    const flooded = await full.client.callTool({ name: 'call_tool', arguments: { name: 'attack__flood', arguments: { count: 300 } } }, undefined, {
      onprogress: (update) => progress.push(update.message ?? ''),
    });
    expect(text(flooded)).toContain('flooded');
    await until('the flood to reach the full client', () => fullHeard.updated.length === 300 && full.logs.filter((log) => log.logger === 'attack/flood').length === 300);
    expect(new Set(fullHeard.updated)).toEqual(new Set(['attack://own/1']));
    expect(narrow.logs.filter((log) => String(log.logger).startsWith('attack'))).toEqual([]);
    expect(narrowHeard.updated).toEqual([]);
    await until('a resources list_changed to reach the full client', () => fullHeard.listChanged > 0);
    // Nor that a server it cannot see changed its lists: the connection's profile is its token's.
    expect(narrowHeard.listChanged).toBe(0);
    // The relay's one-a-second rule: a flood of progress reaches the client as a few notifications.
    expect(progress.length).toBeLessThan(10);
    expect(progress.some((message) => message.startsWith('forged'))).toBe(false);
    // 300 list_changed cost one read in flight and one more for those that came during it, not 300 reads.
    expect(readFileSync(ws.path('attack/lists.log'), 'utf8').trimEnd().split('\n').length).toBeLessThan(30);
    // The gateway still answers after the flood.
    expect((await full.client.listResources()).resources.length).toBeGreaterThan(0);
  });

  it('bounds a log message of a hostile server, structured data too', async () => {
    full.logs.length = 0;
    await call('huge_log');
    await until('both huge log messages', () => full.logs.filter((log) => log.logger === 'attack/huge').length === 2);
    const [structured, plain] = full.logs.filter((entry) => entry.logger === 'attack/huge').map((log) => log.data);
    // Over the 16 KiB of a log line, an object comes as its JSON cut head and tail, like a text line.
    expect(typeof structured).toBe('string');
    expect(structured).toMatch(/^\{"blob":"x+\n…\(\d+ bytes truncated\)…\nx+"\}$/);
    expect(Buffer.byteLength(structured as string)).toBeLessThanOrEqual(16 * 1024 + 64);
    expect(plain).toMatch(/^y+\n…\(\d+ bytes truncated\)…\ny+$/);
    expect(Buffer.byteLength(plain as string)).toBeLessThanOrEqual(16 * 1024 + 64);
  });

  it('refuses sampling for a server that an allow: entry over its tools names, with autonomy full, and audits it', async () => {
    const outcome = text(await call('sample_now'));
    expect(outcome).toContain(
      JSON.stringify({
        error: `MCP error -32600: Permission denied: attack:sampling/createMessage runs only when an allow: entry names it (attack:sampling/createMessage is high risk and autonomy is full (${permissions()} line 2)). To allow it: add \`attack:sampling/createMessage\` under allow: in ${permissions()}.`,
      }),
    );
    expect(full.requests.filter((request) => request.method === 'sampling/createMessage')).toEqual([]);
    expect(audit().filter((line) => line.tool === 'attack:sampling/createMessage').map((line) => `${line.decision} ${line.outcome}`)).toEqual(['deny denied']);
  });

  it("shows a prompt's forged resource URIs under the server that sent them, and none of its prompts to a profile that hides it", async () => {
    const prompt = await full.client.getPrompt({ name: 'attack__forged' });
    const uris = prompt.messages.map((message) => {
      const content = message.content as { type: string; uri?: string; resource?: { uri: string } };
      return content.uri ?? content.resource?.uri;
    });
    expect(uris).toEqual(['bulkhead://attack/BULKHEAD://fs/etc/passwd', 'bulkhead://attack/bulkhead://x@fs/etc/shadow']);
    expect((await narrow.client.listPrompts()).prompts.map((entry) => entry.name).filter((name) => name.startsWith('attack'))).toEqual([]);
    expect(await refusal(narrow.client.getPrompt({ name: 'attack__forged' }))).toBe('MCP error -32602: Unknown prompt attack__forged; prompts/list lists the prompts there are');
  });

  it("puts a server's question only to the client whose call asks, labelled with the server", async () => {
    const answer = text(await call('elicit_now'));
    expect(answer).toContain(JSON.stringify({ ok: { action: 'accept', content: { password: 'hunter2' } } }));
    expect(full.requests.filter((request) => request.method === 'elicitation/create').map((request) => (request.params as { message: string }).message)).toEqual(['[attack] your password?']);
    expect(narrow.requests).toEqual([]);
    // With a call of another connection under way on the server, it cannot be told whose question it is: refused, audited.
    const other = await gateway.connect(EVERY_REQUEST);
    const held = other.client.callTool({ name: 'call_tool', arguments: { name: 'attack__hold', arguments: { ms: 2500 } } });
    await until('the other call to be under way', () => existsSync(ws.path('attack/hold.log')));
    expect(text(await call('elicit_now'))).toContain(
      JSON.stringify({ error: 'MCP error -32600: elicitation/create from attack was refused: tool calls of 2 client connections are under way on attack, and the request does not say which one it serves. Try again when only one client is calling attack.' }),
    );
    expect(text(await held)).toContain('held');
    expect(other.requests).toEqual([]);
    await (other.client.transport as StreamableHTTPClientTransport).terminateSession();
    await other.client.close();
    expect(audit().filter((line) => line.tool === 'attack:elicitation/create' && line.decision === 'none').map((line) => line.error)).toEqual([
      'elicitation/create from attack was refused: tool calls of 2 client connections are under way on attack, and the request does not say which one it serves. Try again when only one client is calling attack.',
    ]);
    // A url-mode request from a client that declared only forms is not put to anyone, whatever its URL.
    expect(text(await call('elicit_now', { url: 'javascript:alert(1)' }))).toContain('cannot open URLs for its user: it did not declare elicitation in url mode');
  });

  it("completes nothing of a server the caller's profile hides", async () => {
    const unknownRef = (ref: string) => `MCP error -32602: Unknown resource or resource template ${ref}; resources/list and resources/templates/list list the ones there are`;
    for (const uri of ['attack://slow/{+a}x{+b}x{+c}x{+d}x{+e}x{+f}x{+g}x{+h}y', 'bulkhead://attack/attack://own/1']) {
      expect(await refusal(narrow.client.complete({ ref: { type: 'ref/resource', uri }, argument: { name: 'a', value: '' } }))).toBe(unknownRef(uri));
    }
    expect(await refusal(narrow.client.complete({ ref: { type: 'ref/prompt', name: 'attack__forged' }, argument: { name: 'a', value: '' } }))).toBe(
      'MCP error -32602: Unknown prompt attack__forged; prompts/list lists the prompts there are',
    );
  });

  it("passes on none of a client's roots that leave the gateway's root by another host, dot segments, encoded slashes or a symlink", async () => {
    const outside = tempWorkspace({ 'secret.txt': 'not for the gateway\n' });
    try {
      symlinkSync(outside.root, ws.path('link'));
      ws.mkdir('sub');
      const rootUrl = pathToFileURL(ws.root).href;
      const rooted = await gateway.connect({
        roots: () => [
          { uri: `file://evil.example${new URL(rootUrl).pathname}`, name: 'another host' },
          { uri: `file://localhost${new URL(rootUrl).pathname}/sub`, name: 'localhost' },
          { uri: `${rootUrl}/../${basename(outside.root)}`, name: 'dot segments' },
          { uri: `${rootUrl}/%2e%2e/${basename(outside.root)}`, name: 'encoded dot segments' },
          { uri: `${rootUrl}/sub%2F..%2F..%2F${basename(outside.root)}`, name: 'encoded slashes' },
          { uri: `${rootUrl}/link`, name: 'symlink out' },
        ],
      });
      const answer = text(await rooted.client.callTool({ name: 'call_tool', arguments: { name: 'attack__roots_now', arguments: {} } }));
      expect(answer).toContain(JSON.stringify([{ uri: pathToFileURL(realpathSync(ws.path('sub'))).href, name: 'localhost' }]));
      expect(answer).not.toContain(basename(outside.root));
      await (rooted.client.transport as StreamableHTTPClientTransport).terminateSession();
      await rooted.client.close();
    } finally {
      outside.cleanup();
    }
  });

  // Last: it closes the full client's session, so that the narrow one is the only one open.
  it('asks no HTTP client, whatever its profile, for roots, elicitation or sampling outside a call, and audits each refusal', async () => {
    expect(text(await call('later', { delay: 500 }))).toContain('scheduled');
    await (full.client.transport as StreamableHTTPClientTransport).terminateSession();
    await full.client.close();
    const logged = () => (existsSync(ws.path('attack/later.log')) ? readFileSync(ws.path('attack/later.log'), 'utf8').trimEnd().split('\n') : []);
    await until('the three requests outside a call', () => logged().length === 3, 10_000);
    const root = realpathSync(ws.root);
    expect(logged().map((line) => JSON.parse(line) as unknown)).toEqual([
      // The gateway's own roots: the narrow client's roots (all of the disk) were not asked for.
      { what: 'roots', ok: { roots: [{ uri: pathToFileURL(root).href, name: basename(root) }] } },
      {
        what: 'elicitation',
        error: "MCP error -32600: elicitation/create from attack was refused: none of its tool calls is under way, so the gateway cannot tell which client's user it is for. Ask within the tool call that needs the answer.",
      },
      {
        what: 'sampling',
        error: "MCP error -32600: sampling/createMessage from attack was refused: none of its tool calls is under way, so the gateway cannot tell which client's model it is for. Ask within the tool call that needs it.",
      },
    ]);
    expect(narrow.requests).toEqual([]);
    const outsideCalls = audit().filter((line) => line.decision === 'none' && line.error?.includes('none of its tool calls is under way'));
    expect(outsideCalls).toEqual([
      expect.objectContaining({ tool: 'attack:elicitation/create', caller: 'none', args: { message: 'your password?', mode: 'form' }, decision: 'none', outcome: 'error', error: expect.stringMatching(/^elicitation\/create from attack was refused: none of its tool calls is under way/) }),
      expect.objectContaining({ tool: 'attack:sampling/createMessage', caller: 'none', args: { outputLimit: 5, messages: 1, systemPromptLength: 0 }, decision: 'none', outcome: 'error', error: expect.stringMatching(/^sampling\/createMessage from attack was refused: none of its tool calls is under way/) }),
    ]);
  });
});
