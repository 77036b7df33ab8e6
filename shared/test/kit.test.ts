import { mkdirSync, readdirSync, readFileSync, symlinkSync, unlinkSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { z } from 'zod';
import {
  auditPolicySchema,
  compose,
  ConnectionApprovals,
  createToolServer,
  defineTool,
  parsePublicKey,
  PermissionGate,
  serverPolicySchema,
  textReply,
  ToolError,
  verifyAuditFile,
  verifyReceipt,
  type GateMode,
  type Receipt,
  type ToolServer,
  type ToolServerSpec,
} from '@bulkhead/core';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { InMemoryTransport } from '@modelcontextprotocol/sdk/inMemory.js';
import { ElicitRequestSchema, LoggingMessageNotificationSchema, type ElicitResult } from '@modelcontextprotocol/sdk/types.js';
import { connectInProcess, tempWorkspace, type ConnectedClient, type TempWorkspace } from '@bulkhead/core/testing';

interface DemoCaps {
  readonly effects: string[];
}

const echo = defineTool<DemoCaps, z.ZodObject<{ text: z.ZodString }>>({
  name: 'echo',
  title: 'Echo',
  description: 'Returns its text argument unchanged.',
  input: z.strictObject({ text: z.string().describe('what to echo') }),
  annotations: { readOnlyHint: true, destructiveHint: false, idempotentHint: true, openWorldHint: false },
  risk: 'low',
  run: async (args) => textReply(args.text),
});

const touch = defineTool<DemoCaps, z.ZodObject<{ name: z.ZodString }>>({
  name: 'touch',
  title: 'Touch',
  description: 'Records a side effect, standing in for a write.',
  input: z.strictObject({ name: z.string().describe('what to record') }),
  annotations: { readOnlyHint: false, destructiveHint: false, idempotentHint: false, openWorldHint: false },
  risk: 'medium',
  subjectArg: 'name',
  preview: async (args) => {
    if (args.name === 'unpreviewable') throw new ToolError('cannot tell what unpreviewable would do');
    return `would record ${args.name}\nand nothing else`;
  },
  run: async (args, ctx) => {
    ctx.effects.push(args.name);
    return textReply(`touched ${args.name}`);
  },
});

const label = defineTool<DemoCaps, z.ZodObject<{ fields: z.ZodRecord<z.ZodString, z.ZodString> }>>({
  name: 'label',
  title: 'Label',
  description: 'Records many named fields, standing in for a tool with open-ended arguments.',
  input: z.strictObject({ fields: z.record(z.string(), z.string()).describe('the fields to record') }),
  annotations: { readOnlyHint: false, destructiveHint: false, idempotentHint: false, openWorldHint: false },
  risk: 'medium',
  run: async (args, ctx) => {
    ctx.effects.push(`label ${Object.keys(args.fields).length}`);
    return textReply('labelled');
  },
});

const slow = defineTool<DemoCaps, z.ZodObject>({
  name: 'slow',
  title: 'Slow',
  description: 'Reports progress, then waits until cancelled.',
  input: z.strictObject({}),
  annotations: { readOnlyHint: true, destructiveHint: false, idempotentHint: true, openWorldHint: false },
  risk: 'low',
  run: async (_args, ctx) => {
    ctx.progress('started');
    await new Promise<void>((resolve) => {
      if (ctx.signal.aborted) resolve();
      ctx.signal.addEventListener('abort', () => resolve(), { once: true });
    });
    ctx.effects.push('saw-abort');
    throw ctx.signal.reason;
  },
});

const big = defineTool<DemoCaps, z.ZodObject>({
  name: 'big',
  title: 'Big',
  description: 'Returns far more text than the output cap allows.',
  input: z.strictObject({}),
  annotations: { readOnlyHint: true, destructiveHint: false, idempotentHint: true, openWorldHint: false },
  risk: 'low',
  run: async () => textReply(`${'h'.repeat(5000)}${'t'.repeat(5000)}`),
});

const many = defineTool<DemoCaps, z.ZodObject>({
  name: 'many',
  title: 'Many',
  description: 'Returns several text blocks that together exceed the cap.',
  input: z.strictObject({}),
  annotations: { readOnlyHint: true, destructiveHint: false, idempotentHint: true, openWorldHint: false },
  risk: 'low',
  run: async () => ({ content: [1, 2, 3, 4].map((n) => ({ type: 'text' as const, text: String(n).repeat(600) })) }),
});

const boom = defineTool<DemoCaps, z.ZodObject>({
  name: 'boom',
  title: 'Boom',
  description: 'Fails with an unexpected error or a ToolError.',
  input: z.strictObject({ expected: z.boolean().default(false).describe('throw a ToolError') }),
  annotations: { readOnlyHint: true, destructiveHint: false, idempotentHint: true, openWorldHint: false },
  risk: 'low',
  run: async (args) => {
    if (args['expected']) throw new ToolError('the file is not there; try list_files');
    throw new Error('kaboom');
  },
});

let ws: TempWorkspace;
let connected: ConnectedClient | undefined;
let effects: string[];
let servers: ToolServer[] = [];

afterEach(async () => {
  await connected?.close();
  connected = undefined;
  ws?.cleanup();
});

async function start(options: { permissions?: string; policy?: unknown; receipts?: boolean; gateway?: boolean; elicit?: (m: string) => ElicitResult; assessRisk?: ToolServerSpec<DemoCaps>['assessRisk'] } = {}) {
  ws = tempWorkspace(options.permissions ? { '.bulkhead/permissions.yaml': options.permissions } : {});
  const controlDir = ws.path('.bulkhead');
  effects = [];
  const gate: GateMode = options.gateway ? { kind: 'gateway' } : { kind: 'self', permissions: PermissionGate.load(controlDir) };
  const server = createToolServer<DemoCaps>({
    namespace: 'demo',
    version: '1.0.0',
    tools: [echo, touch, slow, big, many, boom, label],
    policy: serverPolicySchema(true, {}).parse(options.policy ?? {}),
    capabilities: { effects },
    controlDir,
    gate,
    audit: auditPolicySchema.parse({ receipts: options.receipts ?? false }),
    limits: { maxOutputBytes: 1000 },
    ...(options.assessRisk ? { assessRisk: options.assessRisk } : {}),
  });
  servers.push(server);
  connected = await connectInProcess(server, options.elicit ? { elicit: options.elicit } : {});
  return { client: connected.client, server, controlDir, auditFile: join(controlDir, 'audit', 'demo.jsonl') };
}

const text = (result: unknown) => ((result as { content: { text: string }[] }).content ?? []).map((c) => c.text).join('\n');
const auditLines = (file: string) => readFileSync(file, 'utf8').trimEnd().split('\n').map((line) => JSON.parse(line));

describe('registration is the switch', () => {
  it('does not list or run a disabled tool', async () => {
    const { client } = await start({ policy: { tools: { touch: { enabled: false } } } });
    const names = (await client.listTools()).tools.map((t) => t.name);
    expect(names).toEqual(['echo', 'slow', 'big', 'many', 'boom', 'label']);
    await expect(client.callTool({ name: 'touch', arguments: { name: 'x' } })).rejects.toThrow(
      'MCP error -32602: Unknown tool touch. Available tools: echo, slow, big, many, boom, label.',
    );
    expect(effects).toEqual([]);
  });

  it('registers nothing for a disabled server', async () => {
    const { client } = await start({ policy: { enabled: false } });
    expect((await client.listTools()).tools).toEqual([]);
    await expect(client.callTool({ name: 'echo', arguments: { text: 'x' } })).rejects.toThrow(
      'MCP error -32602: Unknown tool echo. Available tools: none (this server is disabled by its policy).',
    );
  });

  it('audits a call to a tool that does not exist', async () => {
    const { client, auditFile } = await start({ policy: { tools: { touch: { enabled: false } } } });
    await expect(client.callTool({ name: 'touch', arguments: { name: 'x', password: 'hunter2' } })).rejects.toThrow();
    expect(auditLines(auditFile).at(-1)).toMatchObject({
      tool: 'demo:touch',
      decision: 'none',
      outcome: 'error',
      args: { name: 'x', password: '[REDACTED]' },
      error: 'Unknown tool touch. Available tools: echo, slow, big, many, boom, label.',
    });
  });

  it('lists schemas and all four annotations', async () => {
    const { client } = await start();
    const listed = (await client.listTools()).tools.find((t) => t.name === 'touch')!;
    expect(listed.annotations).toEqual({ title: 'Touch', readOnlyHint: false, destructiveHint: false, idempotentHint: false, openWorldHint: false });
    expect(listed.inputSchema).toEqual({
      type: 'object',
      properties: { name: { type: 'string', description: 'what to record' } },
      required: ['name'],
      additionalProperties: false,
    });
  });
});

describe('argument validation', () => {
  it('explains wrong, missing and unknown arguments', async () => {
    const { client } = await start();
    expect(text(await client.callTool({ name: 'echo', arguments: { text: 5 } }))).toBe('Invalid arguments for demo:echo: `text`: Invalid input: expected string, received number');
    expect(text(await client.callTool({ name: 'echo', arguments: {} }))).toBe('Invalid arguments for demo:echo: `text` is required (string)');
    expect(text(await client.callTool({ name: 'echo', arguments: { text: 'a', extra: 1 } }))).toBe('Invalid arguments for demo:echo: unknown argument `extra`');
  });
});

describe('permission gate', () => {
  it('holds an ask the client cannot confirm as a pending approval, and runs nothing until a human decides', async () => {
    const { client, auditFile } = await start({ permissions: 'ask:\n  - demo:touch\napproval_wait_ms: 0\n' });
    const result = await client.callTool({ name: 'touch', arguments: { name: 'x' } });
    expect(result.isError).toBe(true);
    const id = /\(approval ([a-z2-9]{8})\)/.exec(text(result))?.[1];
    expect(text(result).replaceAll(ws.root, '<ws>')).toBe(
      `demo:touch is waiting for a human's approval (approval ${id}); nothing was run yet. Approve it in the Bulkhead console (run \`bulkhead console --config <ws>/.bulkhead\` to open the console) or in a terminal: bulkhead approvals allow ${id} --config <ws>/.bulkhead. Then make the same call again (same tool, same arguments): it runs without asking again.`,
    );
    expect(effects).toEqual([]);
    expect(auditLines(auditFile).at(-1)).toMatchObject({ tool: 'demo:touch', decision: 'ask:pending', outcome: 'error', approval: { id } });
  });

  it('runs an ask the human allows once, showing the arguments and the tool\'s preview', async () => {
    const messages: string[] = [];
    const { client, auditFile } = await start({
      elicit: (message) => {
        messages.push(message);
        return { action: 'accept', content: { decision: 'once' } };
      },
    });
    expect(text(await client.callTool({ name: 'touch', arguments: { name: 'doc' } }))).toBe('touched doc');
    expect(text(await client.callTool({ name: 'touch', arguments: { name: 'again' } }))).toBe('touched again');
    expect(effects).toEqual(['doc', 'again']);
    expect(messages).toHaveLength(2);
    expect(messages[0]!.replaceAll(ws.root, '<ws>')).toBe(
      [
        'Allow demo:touch?',
        'Asked because: demo:touch is medium risk and autonomy is supervised (the default; there is no <ws>/.bulkhead/permissions.yaml).',
        '',
        'Arguments (1 value; every key is listed here):',
        '  name (string): "doc"',
        '',
        "What will happen (the tool's preview):",
        '  would record doc',
        '  and nothing else',
        '',
        'These are the whole arguments (secrets redacted).',
      ].join('\n'),
    );
    expect(auditLines(auditFile).map((line) => line.decision)).toEqual(['ask:approved', 'ask:approved']);
  });

  it('offers allow once, allow for this session and deny as one choice', async () => {
    const { server } = await start();
    const schemas: unknown[] = [];
    const other = new Client({ name: 'schema-check', version: '1.0.0' }, { capabilities: { elicitation: { form: {} } } });
    other.setRequestHandler(ElicitRequestSchema, async (request) => {
      schemas.push(request.params.mode === 'url' ? undefined : request.params.requestedSchema);
      return { action: 'decline' };
    });
    const [clientSide, serverSide] = InMemoryTransport.createLinkedPair();
    await server.connect(serverSide);
    await other.connect(clientSide);
    expect(text(await other.callTool({ name: 'touch', arguments: { name: 'doc' } }))).toBe('Permission denied: the user declined demo:touch. Nothing was run.');
    await other.close();
    expect(schemas).toEqual([
      {
        type: 'object',
        properties: {
          decision: {
            type: 'string',
            title: 'Run demo:touch?',
            oneOf: [
              { const: 'once', title: 'Allow once' },
              { const: 'session', title: 'Allow this tool for the rest of this session' },
              { const: 'deny', title: 'Deny' },
            ],
          },
        },
        required: ['decision'],
      },
    ]);
    expect(effects).toEqual([]);
  });

  it('still takes the approve checkbox of earlier versions as allow once', async () => {
    const { client, auditFile } = await start({ elicit: () => ({ action: 'accept', content: { approve: true } }) });
    expect(text(await client.callTool({ name: 'touch', arguments: { name: 'doc' } }))).toBe('touched doc');
    expect(auditLines(auditFile).at(-1)).toMatchObject({ decision: 'ask:approved', outcome: 'ok' });
  });

  it('runs later calls of a tool allowed for the session without asking, in that session only', async () => {
    let asked = 0;
    const elicit = (): ElicitResult => {
      asked++;
      return { action: 'accept', content: { decision: 'session' } };
    };
    const { client, server, auditFile } = await start({ elicit });
    expect(text(await client.callTool({ name: 'touch', arguments: { name: 'one' } }))).toBe('touched one');
    expect(text(await client.callTool({ name: 'touch', arguments: { name: 'two, other arguments' } }))).toBe('touched two, other arguments');
    expect(asked).toBe(1);
    // Another tool that asks is still asked about.
    expect(text(await client.callTool({ name: 'label', arguments: { fields: { a: 'b' } } }))).toBe('labelled');
    expect(asked).toBe(2);
    const second = await connectInProcess(server, { elicit: () => ({ action: 'decline' }) });
    expect(text(await second.client.callTool({ name: 'touch', arguments: { name: 'three' } }))).toBe('Permission denied: the user declined demo:touch. Nothing was run.');
    await second.close();
    expect(effects).toEqual(['one', 'two, other arguments', 'label 1']);
    expect(auditLines(auditFile).map((line) => [line.tool, line.decision, line.outcome])).toEqual([
      ['demo:touch', 'ask:session', 'ok'],
      ['demo:touch', 'allow:session', 'ok'],
      ['demo:label', 'ask:session', 'ok'],
      ['demo:touch', 'ask:declined', 'denied'],
    ]);
  });

  it('keeps each bearer token\'s session allows apart within one connection', () => {
    const approvals = new ConnectionApprovals();
    approvals.for('tokens[0]').grant('demo:touch');
    expect(approvals.for('tokens[0]').has('demo:touch')).toBe(true);
    expect(approvals.for('tokens[1]').has('demo:touch')).toBe(false);
    expect(approvals.for(undefined).has('demo:touch')).toBe(false);
    expect(approvals.for('tokens[0]').has('demo:label')).toBe(false);
    expect(new ConnectionApprovals().for('tokens[0]').has('demo:touch')).toBe(false);
  });

  it('never lets a session allow pass a deny', async () => {
    let asked = 0;
    const { client } = await start({
      permissions: 'deny:\n  - demo:touch(rm*)\n',
      elicit: () => {
        asked++;
        return { action: 'accept', content: { decision: 'session' } };
      },
    });
    expect(text(await client.callTool({ name: 'touch', arguments: { name: 'fine' } }))).toBe('touched fine');
    expect(text(await client.callTool({ name: 'touch', arguments: { name: 'rm -rf' } }))).toContain('Permission denied: demo:touch is denied by');
    expect(effects).toEqual(['fine']);
    expect(asked).toBe(1);
  });

  it('asks about every call an always_ask entry names, even in a session that allowed the tool, and offers no session allow for it', async () => {
    const messages: string[] = [];
    const schemas: string[] = [];
    const { server, auditFile } = await start({ permissions: 'always_ask:\n  - demo:touch(rm*)\n' });
    const client = new Client({ name: 'always-ask', version: '1.0.0' }, { capabilities: { elicitation: { form: {} } } });
    client.setRequestHandler(ElicitRequestSchema, async (request) => {
      messages.push(request.params.message);
      schemas.push(JSON.stringify(request.params.mode === 'url' ? {} : request.params.requestedSchema));
      return { action: 'accept', content: { decision: 'session' } };
    });
    const [clientSide, serverSide] = InMemoryTransport.createLinkedPair();
    await server.connect(serverSide);
    await client.connect(clientSide);
    expect(text(await client.callTool({ name: 'touch', arguments: { name: 'plain' } }))).toBe('touched plain');
    expect(text(await client.callTool({ name: 'touch', arguments: { name: 'plain again' } }))).toBe('touched plain again');
    expect(text(await client.callTool({ name: 'touch', arguments: { name: 'rm one' } }))).toBe('touched rm one');
    expect(text(await client.callTool({ name: 'touch', arguments: { name: 'rm two' } }))).toBe('touched rm two');
    await client.close();
    expect(messages).toHaveLength(3);
    expect(schemas[0]).toContain('"const":"session"');
    expect(schemas[1]).not.toContain('session');
    expect(schemas[2]).not.toContain('session');
    expect(auditLines(auditFile).map((line) => line.decision)).toEqual(['ask:session', 'allow:session', 'ask:approved', 'ask:approved']);
  });

  it('shows the rest of cut values, part by part, when the human asks for it before deciding', async () => {
    const messages: string[] = [];
    const answers: ElicitResult[] = [
      { action: 'accept', content: { decision: 'more' } },
      { action: 'accept', content: { decision: 'more' } },
      { action: 'accept', content: { decision: 'once' } },
      // A second call: "more" after the last part is no answer.
      { action: 'accept', content: { decision: 'more' } },
      { action: 'accept', content: { decision: 'more' } },
      { action: 'accept', content: { decision: 'more' } },
    ];
    const { client } = await start({
      elicit: (message) => {
        messages.push(message);
        return answers[messages.length - 1]!;
      },
    });
    const value = `${'v'.repeat(9_000)}END`;
    expect(text(await client.callTool({ name: 'label', arguments: { fields: { note: value, bcc: 'x@evil.example' } } }))).toBe('labelled');
    expect(messages).toHaveLength(3);
    expect(messages[0]).toContain('\n  fields.bcc (string): "x@evil.example"\n');
    expect(messages[0]).toContain('choose "Show the rest of the arguments" (2 parts)');
    expect(messages[1]!.startsWith('Allow demo:label? The rest of its arguments in full, part 1 of 2 (secrets redacted):\n\n  fields.note (string, 9,003 characters): "vvv')).toBe(true);
    expect(messages[2]!.startsWith('Allow demo:label? The rest of its arguments in full, part 2 of 2 (secrets redacted):\n\n  fields.note (continued): "vvv')).toBe(true);
    expect(messages[2]).toContain('END"');
    expect(text(await client.callTool({ name: 'label', arguments: { fields: { note: value } } }))).toBe('Permission denied: the user declined demo:label. Nothing was run.');
    expect(messages).toHaveLength(6);
    expect(effects).toEqual(['label 2']);
  });

  it('runs nothing when the human declines, denies, leaves approve unticked or answers something else', async () => {
    const answers: ElicitResult[] = [
      { action: 'decline' },
      { action: 'cancel' },
      { action: 'accept', content: { decision: 'deny' } },
      { action: 'accept', content: { approve: false } },
      { action: 'accept', content: { decision: 'always' } },
      { action: 'accept', content: { decision: true } },
      { action: 'accept', content: {} },
      { action: 'accept' },
    ];
    let next = 0;
    const { client, auditFile } = await start({ elicit: () => answers[next++]! });
    for (let i = 0; i < answers.length; i++) {
      expect(text(await client.callTool({ name: 'touch', arguments: { name: 'doc' } }))).toBe('Permission denied: the user declined demo:touch. Nothing was run.');
    }
    expect(effects).toEqual([]);
    expect(new Set(auditLines(auditFile).map((line) => line.decision))).toEqual(new Set(['ask:declined']));
  });

  it('asks with the reason when the preview fails, and runs what the human allows', async () => {
    const messages: string[] = [];
    const { client } = await start({
      elicit: (message) => {
        messages.push(message);
        return { action: 'accept', content: { decision: 'once' } };
      },
    });
    expect(text(await client.callTool({ name: 'touch', arguments: { name: 'unpreviewable' } }))).toBe('touched unpreviewable');
    expect(messages[0]).toContain('\nWhat will happen: the tool could not tell:\n  cannot tell what unpreviewable would do\n');
  });

  it('refuses, without asking, a call with more keys than a prompt can list', async () => {
    let asked = false;
    const { client, auditFile } = await start({
      elicit: () => {
        asked = true;
        return { action: 'accept', content: { decision: 'once' } };
      },
    });
    const fields = Object.fromEntries(Array.from({ length: 5_000 }, (_, i) => [`field_${i}`, 'x']));
    expect(text(await client.callTool({ name: 'label', arguments: { fields } }))).toBe(
      'Permission denied: demo:label cannot be put to the human: its arguments have 5,000 keys, more than an approval prompt can list (40,000 characters). Nothing was run; send fewer keys per call.',
    );
    expect(asked).toBe(false);
    expect(effects).toEqual([]);
    expect(auditLines(auditFile).at(-1)).toMatchObject({ decision: 'deny', outcome: 'denied' });
  });

  it('gates a call by the risk its arguments carry when the server assesses it', async () => {
    const { client, auditFile } = await start({
      permissions: 'autonomy: supervised\n',
      assessRisk: { touch: (args) => (String(args['name']).startsWith('safe') ? 'low' : 'high') },
    });
    expect(text(await client.callTool({ name: 'touch', arguments: { name: 'safe-one' } }))).toBe('touched safe-one');
    const risky = await client.callTool({ name: 'touch', arguments: { name: 'rm-everything' } });
    expect(risky.isError).toBe(true);
    expect(text(risky)).toContain('demo:touch is high risk and autonomy is supervised');
    expect(effects).toEqual(['safe-one']);
    expect(auditLines(auditFile).map((line) => line.decision)).toEqual(['allow', 'deny']);
  });

  it('never runs a denied call, even for a client that can elicit', async () => {
    let asked = false;
    const { client } = await start({
      permissions: 'autonomy: full\ndeny:\n  - demo:touch(rm*)\n',
      elicit: () => {
        asked = true;
        return { action: 'accept', content: { approve: true } };
      },
    });
    expect(text(await client.callTool({ name: 'touch', arguments: { name: 'rm -rf' } })).replaceAll(ws.root, '<ws>')).toBe(
      'Permission denied: demo:touch is denied by <ws>/.bulkhead/permissions.yaml line 3 (`demo:touch(rm*)`). Nothing was run. To allow it: remove or narrow that deny entry.',
    );
    expect(text(await client.callTool({ name: 'touch', arguments: { name: 'ok' } }))).toBe('touched ok');
    expect(effects).toEqual(['ok']);
    expect(asked).toBe(false);
  });

  it('leaves allow/ask/deny to a gateway in front when told so', async () => {
    const { client, auditFile } = await start({ gateway: true });
    expect(text(await client.callTool({ name: 'touch', arguments: { name: 'x' } }))).toBe('touched x');
    expect(auditLines(auditFile).at(-1)).toMatchObject({ decision: 'gateway', outcome: 'ok' });
  });
});

describe('errors, limits, cancellation and progress', () => {
  it('turns a ToolError into an isError result with its message', async () => {
    const { client } = await start();
    const result = await client.callTool({ name: 'boom', arguments: { expected: true } });
    expect(result.isError).toBe(true);
    expect(text(result)).toBe('the file is not there; try list_files');
  });

  it('turns an unexpected exception into an isError result naming the tool', async () => {
    const { client, auditFile } = await start();
    expect(text(await client.callTool({ name: 'boom', arguments: {} }))).toBe('demo:boom failed unexpectedly: kaboom');
    expect(auditLines(auditFile).at(-1)).toMatchObject({ outcome: 'error', error: 'demo:boom failed unexpectedly: kaboom' });
  });

  it('caps every text output with a head+tail marker', async () => {
    const { client, auditFile } = await start();
    const out = text(await client.callTool({ name: 'big', arguments: {} }));
    expect(out).toMatch(/^h+\n…\(9048 bytes truncated\)…\nt+$/);
    expect(auditLines(auditFile).at(-1).bytes_out).toBe(Buffer.byteLength(out));
  });

  it('caps the text of all blocks together, not each block alone', async () => {
    const { client } = await start();
    const result = await client.callTool({ name: 'many', arguments: {} });
    const blocks = (result.content as { text: string }[]).map((block) => block.text);
    expect(blocks[0]).toBe('1'.repeat(600));
    expect(blocks[1]).toMatch(/^2+\n…\(\d+ bytes truncated\)…\n2+$/);
    expect(blocks.slice(2).every((text) => Buffer.byteLength(text) <= 200)).toBe(true);
    expect(blocks.reduce((sum, text) => sum + Buffer.byteLength(text), 0)).toBeLessThanOrEqual(1000 + 2 * 200);
  });

  it('aborts the tool when the client cancels, and records the cancellation', async () => {
    const { client, auditFile } = await start();
    const controller = new AbortController();
    const progress: number[] = [];
    const call = client.callTool({ name: 'slow', arguments: {} }, undefined, {
      signal: controller.signal,
      onprogress: (p) => {
        progress.push(p.progress);
        controller.abort('user pressed stop');
      },
    });
    await expect(call).rejects.toThrow();
    await expect.poll(() => effects).toEqual(['saw-abort']);
    expect(progress).toEqual([1]);
    await expect.poll(() => auditLines(auditFile).at(-1)?.outcome).toBe('cancelled');
  });
});

describe('audit and receipts', () => {
  it('audits every call in an intact chain and signs only successful ones', async () => {
    const { client, controlDir, auditFile } = await start({ receipts: true, permissions: 'deny:\n  - demo:touch\n' });
    // Nothing is written before the first call: a server that answered none leaves no audit folder and no key.
    await client.listTools();
    expect(readdirSync(controlDir)).toEqual(['permissions.yaml']);
    const ok = await client.callTool({ name: 'echo', arguments: { text: 'hi' } });
    const failed = await client.callTool({ name: 'boom', arguments: {} });
    const denied = await client.callTool({ name: 'touch', arguments: { name: 'x' } });
    const receipt = ok._meta?.['bulkhead/receipt'] as Receipt;
    expect(receipt).toMatchObject({ server: 'demo', tool: 'demo:echo', seq: 1 });
    expect(verifyReceipt({ publicKey: parsePublicKey(readFileSync(join(controlDir, 'keys', 'receipt.pub'), 'utf8')) }, receipt)).toBe(true);
    expect(receipt.entry_hash).toBe(auditLines(auditFile)[0].hash);
    expect(failed._meta?.['bulkhead/receipt']).toBeUndefined();
    expect(denied._meta?.['bulkhead/receipt']).toBeUndefined();
    expect(verifyAuditFile(auditFile)).toEqual({ ok: true, entries: 3 });
    expect(auditLines(auditFile).map((e) => [e.tool, e.outcome])).toEqual([
      ['demo:echo', 'ok'],
      ['demo:boom', 'error'],
      ['demo:touch', 'denied'],
    ]);
  });
});

describe('an audit log that cannot be written', () => {
  it('returns the result of the call that ran, refuses the next ones, and writes every record once it can', async () => {
    const { client, auditFile } = await start({ permissions: 'allow:\n  - demo:touch\n' });
    // The audit folder is made by the first call, so the full disk is set up ahead of it.
    mkdirSync(dirname(auditFile), { recursive: true });
    symlinkSync('/dev/full', auditFile);
    const ran = await client.callTool({ name: 'touch', arguments: { name: 'a' } });
    expect(ran.isError).toBeFalsy();
    expect(text(ran)).toBe('touched a');
    const refused = await client.callTool({ name: 'touch', arguments: { name: 'b' } });
    expect(refused.isError).toBe(true);
    expect(text(refused)).toBe(
      `Refused: the audit log cannot be written (cannot append to the audit log ${auditFile}: ENOSPC: no space left on device, write); no call runs until it can. Nothing was run.`,
    );
    expect(effects).toEqual(['a']);

    unlinkSync(auditFile);
    expect(text(await client.callTool({ name: 'touch', arguments: { name: 'c' } }))).toBe('touched c');
    expect(effects).toEqual(['a', 'c']);
    expect(verifyAuditFile(auditFile)).toEqual({ ok: true, entries: 3 });
    expect(auditLines(auditFile).map((e) => [e.args.name, e.decision, e.outcome])).toEqual([
      ['a', 'allow', 'ok'],
      ['b', 'audit-unavailable', 'denied'],
      ['c', 'allow', 'ok'],
    ]);
  });
});

describe('compose', () => {
  it('sends a log notification to every connected client', async () => {
    const { client } = await start();
    const received: unknown[] = [];
    client.setNotificationHandler(LoggingMessageNotificationSchema, (notification) => void received.push(notification.params));
    await servers.at(-1)!.sendLog('info', { event: 'task ended' });
    await expect.poll(() => received).toEqual([{ level: 'info', logger: 'bulkhead-demo', data: { event: 'task ended' } }]);
  });

  it('runs middlewares outermost first and refuses a double next()', async () => {
    const order: string[] = [];
    await compose<object>([
      async (_c, next) => {
        order.push('a-in');
        await next();
        order.push('a-out');
      },
      async () => {
        order.push('b');
      },
    ])({});
    expect(order).toEqual(['a-in', 'b', 'a-out']);
    const twice = compose<object>([
      async (_c, next) => {
        await next();
        await next();
      },
    ]);
    await expect(twice({})).rejects.toThrow('next() called more than once in one middleware');
  });

  it('turns a middleware that throws before returning a promise into a rejection the outer one sees', async () => {
    const seen: string[] = [];
    await compose<object>([
      async (_c, next) => {
        await next().catch((error: Error) => seen.push(error.message));
      },
      () => {
        throw new Error('thrown synchronously');
      },
    ])({});
    expect(seen).toEqual(['thrown synchronously']);
  });
});
