import { readFileSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { tempWorkspace, type TempWorkspace } from '@bulkhead/core/testing';
import { EVERYTHING, text, until } from './helpers.js';
import { startHttpGateway, startStdioGateway, type ClientSide, type HttpGateway, type StdioGateway, type TestClient } from './relay-clients.js';

/** server-everything, untrusted but for its results (so the tests read its text as it sent it); its tools allowed, nothing else. */
const CONFIG = `servers:\n  everything:\n    command: ${process.execPath}\n    args: [${EVERYTHING}, stdio]\n    trust: [results]\n`;
const ALLOW_TOOLS = 'approval_wait_ms: 0\nallow:\n  - "everything:*"\n';
const ALLOW_SAMPLING = `${ALLOW_TOOLS}  - "everything:sampling/createMessage"\n`;

const auditOf = (ws: TempWorkspace, tool: string) =>
  readFileSync(ws.path('.bulkhead/audit/gateway.jsonl'), 'utf8')
    .trimEnd()
    .split('\n')
    .map((line) => JSON.parse(line) as Record<string, unknown>)
    .filter((entry) => entry['tool'] === tool);

const call = (client: TestClient, name: string, args: Record<string, unknown> = {}) => client.client.callTool({ name: 'call_tool', arguments: { name, arguments: args } });

const ACCEPT: ClientSide = { elicit: () => ({ action: 'accept', content: { name: 'Ada Lovelace', check: true } }) };
const SAMPLES: ClientSide = { sample: () => ({ model: 'test-model', role: 'assistant', content: { type: 'text', text: 'a fixed answer' } }) };

describe('elicitation relayed (stdio)', () => {
  let ws: TempWorkspace;
  let gateway: StdioGateway;
  let answer: ClientSide['elicit'] = ACCEPT.elicit;
  beforeAll(async () => {
    ws = tempWorkspace({ '.bulkhead/bulkhead.yaml': CONFIG, '.bulkhead/permissions.yaml': ALLOW_TOOLS });
    gateway = await startStdioGateway(ws.root, { elicit: (request) => answer!(request), ...SAMPLES });
  });
  afterAll(async () => {
    await gateway.close();
    ws.cleanup();
  });

  it('reaches a client that declared it, labelled with the server, and the answer goes back to the server', async () => {
    const result = await call(gateway, 'everything__trigger-elicitation-request');
    expect(result.isError).toBeFalsy();
    expect(text(result)).toContain('✅ User provided the requested information!\nUser inputs:\n- Name: Ada Lovelace\n- Agreed to terms: true');
    const asked = gateway.requests.filter((request) => request.method === 'elicitation/create');
    expect(asked).toHaveLength(1);
    const params = asked[0]!.params as { message: string; requestedSchema: { required: string[] } };
    expect(params.message).toBe('[everything] Please provide inputs for the following fields:');
    // The form itself is the server's, untouched.
    expect(params.requestedSchema.required).toEqual(['name']);
    const audited = auditOf(ws, 'everything:elicitation/create');
    expect(audited.map((entry) => [entry['decision'], entry['outcome']])).toEqual([['allow', 'ok']]);
    // The question is audited, the human's answer is not.
    expect(JSON.stringify(audited[0])).toContain('Please provide inputs');
    expect(JSON.stringify(audited)).not.toContain('Ada');
  });

  it('passes a decline back to the server', async () => {
    answer = () => ({ action: 'decline' });
    try {
      expect(text(await call(gateway, 'everything__trigger-elicitation-request'))).toContain('❌ User declined to provide the requested information.');
    } finally {
      answer = ACCEPT.elicit;
    }
  });

  it('refuses a url-mode elicitation to a client that declared forms only', async () => {
    const result = await call(gateway, 'everything__trigger-url-elicitation', { url: 'https://example.com/authorize', message: 'Open this page', elicitationId: 'e-1' });
    expect(text(result)).toContain(
      "the client (relay-test) cannot open URLs for its user: it did not declare elicitation in url mode, so everything's question was not put to anyone. Use a client that supports MCP elicitation (url mode) for this tool.",
    );
    expect(auditOf(ws, 'everything:elicitation/create').at(-1)).toMatchObject({ decision: 'allow', outcome: 'error', args: { mode: 'url' } });
  });

  it('refuses sampling from a third-party server by default, with the allow: entry that would let it', async () => {
    const result = await call(gateway, 'everything__trigger-sampling-request', { prompt: 'say hi', maxTokens: 20 });
    const permissions = ws.path('.bulkhead/permissions.yaml');
    expect(text(result)).toContain(
      `Permission denied: everything:sampling/createMessage is high risk and autonomy is supervised (the default; ${permissions} does not set autonomy). To allow it: add \`everything:sampling/createMessage\` under allow: in ${permissions} (the allow list is at line 2).`,
    );
    expect(gateway.requests.filter((request) => request.method === 'sampling/createMessage')).toHaveLength(0);
    expect(auditOf(ws, 'everything:sampling/createMessage').map((entry) => [entry['decision'], entry['outcome'], entry['args']])).toEqual([['deny', 'denied', { outputLimit: 20, messages: 1, systemPromptLength: 30 }]]);
  });

  it('has no task-based execution to offer, and says so for a tool that requires it', async () => {
    const result = await call(gateway, 'everything__simulate-research-query', { topic: 'tides' });
    expect(result.isError).toBe(true);
    expect(text(result)).toContain('everything:simulate-research-query requires task-based execution (MCP tasks), which the gateway does not relay; nothing was run. Connect to its server directly to use it.');
  });
});

describe('sampling relayed with an allow: entry (stdio)', () => {
  let ws: TempWorkspace;
  let gateway: StdioGateway;
  beforeAll(async () => {
    ws = tempWorkspace({ '.bulkhead/bulkhead.yaml': CONFIG, '.bulkhead/permissions.yaml': ALLOW_SAMPLING });
    gateway = await startStdioGateway(ws.root, SAMPLES);
  });
  afterAll(async () => {
    await gateway.close();
    ws.cleanup();
  });

  it("sends the server's request to the client's model and its answer back", async () => {
    const result = await call(gateway, 'everything__trigger-sampling-request', { prompt: 'say hi', maxTokens: 20 });
    expect(result.isError).toBeFalsy();
    expect(text(result)).toContain('"text": "a fixed answer"');
    const sent = gateway.requests.filter((request) => request.method === 'sampling/createMessage');
    expect(sent).toHaveLength(1);
    expect(sent[0]!.params).toMatchObject({ maxTokens: 20, systemPrompt: 'You are a helpful test server.', messages: [{ role: 'user', content: { type: 'text', text: 'Resource trigger-sampling-request context: say hi' } }] });
    const audited = auditOf(ws, 'everything:sampling/createMessage');
    expect(audited.map((entry) => [entry['decision'], entry['outcome']])).toEqual([['allow', 'ok']]);
    // Its shape, never its text.
    expect(JSON.stringify(audited)).not.toContain('say hi');
  });

  it('fails clearly for elicitation: this client cannot show forms', async () => {
    const result = await call(gateway, 'everything__trigger-elicitation-request');
    expect(result.isError).toBe(true);
    expect(text(result)).toContain("the client (relay-test) cannot show forms: it did not declare elicitation, so everything's question was not put to anyone. Use a client that supports MCP elicitation for this tool.");
  });
});

describe('a client without sampling', () => {
  let ws: TempWorkspace;
  let gateway: StdioGateway;
  beforeAll(async () => {
    ws = tempWorkspace({ '.bulkhead/bulkhead.yaml': CONFIG, '.bulkhead/permissions.yaml': ALLOW_SAMPLING });
    gateway = await startStdioGateway(ws.root, ACCEPT);
  });
  afterAll(async () => {
    await gateway.close();
    ws.cleanup();
  });

  it('gets a clear failure even where sampling is allowed, and the failure is audited', async () => {
    const result = await call(gateway, 'everything__trigger-sampling-request', { prompt: 'say hi' });
    expect(result.isError).toBe(true);
    expect(text(result)).toContain("the client (relay-test) cannot sample: it did not declare sampling, so everything's request for a model's answer was not sent. Use a client that supports MCP sampling for this tool.");
    expect(auditOf(ws, 'everything:sampling/createMessage').map((entry) => [entry['decision'], entry['outcome']])).toEqual([['allow', 'error']]);
  });
});

describe('autonomy full, with a deny', () => {
  let ws: TempWorkspace;
  let gateway: StdioGateway;
  beforeAll(async () => {
    ws = tempWorkspace({ '.bulkhead/bulkhead.yaml': CONFIG, '.bulkhead/permissions.yaml': 'autonomy: full\ndeny:\n  - "everything:elicitation/create"\n' });
    gateway = await startStdioGateway(ws.root, { ...ACCEPT, ...SAMPLES });
  });
  afterAll(async () => {
    await gateway.close();
    ws.cleanup();
  });

  it('still refuses sampling from a third-party server: only an allow: entry lets it run', async () => {
    const permissions = ws.path('.bulkhead/permissions.yaml');
    const result = await call(gateway, 'everything__trigger-sampling-request', { prompt: 'say hi' });
    expect(text(result)).toContain(
      `Permission denied: everything:sampling/createMessage runs only when an allow: entry names it (everything:sampling/createMessage is high risk and autonomy is full (${permissions} line 1)). To allow it: add \`everything:sampling/createMessage\` under allow: in ${permissions}.`,
    );
    expect(gateway.requests).toHaveLength(0);
  });

  it('refuses an elicitation that permissions.yaml denies, and the human is not asked', async () => {
    const result = await call(gateway, 'everything__trigger-elicitation-request');
    expect(text(result)).toContain('Permission denied: everything:elicitation/create');
    expect(gateway.requests).toHaveLength(0);
    expect(auditOf(ws, 'everything:elicitation/create').map((entry) => [entry['decision'], entry['outcome']])).toEqual([['deny', 'denied']]);
  });
});

describe('over Streamable HTTP', () => {
  let ws: TempWorkspace;
  let gateway: HttpGateway;
  beforeAll(async () => {
    ws = tempWorkspace({ '.bulkhead/bulkhead.yaml': CONFIG, '.bulkhead/permissions.yaml': ALLOW_TOOLS });
    gateway = await startHttpGateway(ws.root);
  });
  afterAll(async () => {
    await gateway.close();
    ws.cleanup();
  });

  it("puts the question to the client whose call asks, and refuses one that cannot be told from another client's", async () => {
    let release: () => void = () => undefined;
    const held = new Promise<void>((resolve) => (release = resolve));
    let asked = 0;
    const first = await gateway.connect({
      elicit: async () => {
        asked++;
        await held;
        return { action: 'accept', content: { name: 'First' } };
      },
    });
    const second = await gateway.connect({ elicit: () => ({ action: 'accept', content: { name: 'Second' } }) });
    const firstCall = call(first, 'everything__trigger-elicitation-request');
    await until('the first client to be asked', () => asked === 1, 10_000);
    const secondResult = await call(second, 'everything__trigger-elicitation-request');
    expect(text(secondResult)).toContain(
      'elicitation/create from everything was refused: tool calls of 2 client connections are under way on everything, and the request does not say which one it serves. Try again when only one client is calling everything.',
    );
    expect(second.requests).toHaveLength(0);
    release();
    expect(text(await firstCall)).toContain('- Name: First');
    // With the first call over, the second client's own call is its alone.
    expect(text(await call(second, 'everything__trigger-elicitation-request'))).toContain('- Name: Second');
  });
});
