import { afterEach, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { auditPolicySchema, checkArgumentBounds, createToolServer, defineTool, MAX_ARGUMENT_DEPTH, PermissionGate, serverPolicySchema, textReply, ToolError, type ToolServer } from '@bulkhead/core';
import { connectInProcess, tempWorkspace, unboundedFields, type ConnectedClient, type TempWorkspace } from '@bulkhead/core/testing';

/** Issue 15, item 12: every argument is bounded, and free-form JSON by the core's depth and size check, before any schema. */

const store = defineTool<{ ran: string[] }, z.ZodObject>({
  name: 'store',
  title: 'Store',
  description: 'Keeps a free-form JSON payload, like the ladder keeps an ask payload.',
  input: z.strictObject({
    payload: z.json().describe('any JSON'),
    tags: z.array(z.string().max(50)).max(20).optional().describe('tags'),
    labels: z.record(z.string().max(50), z.string().max(50)).optional().describe('labels'),
  }),
  annotations: { readOnlyHint: false, destructiveHint: false, idempotentHint: false, openWorldHint: false },
  risk: 'low',
  run: async (_args, ctx) => {
    ctx.ran.push('store');
    return textReply('stored');
  },
});

let ws: TempWorkspace | undefined;
let server: ToolServer | undefined;
let client: ConnectedClient['client'] | undefined;
let closeClient: (() => Promise<void>) | undefined;
const ran: string[] = [];

async function start(maxRequestBytes?: number) {
  ws = tempWorkspace({ '.bulkhead/permissions.yaml': 'allow:\n  - demo\n' });
  server = createToolServer<{ ran: string[] }>({
    namespace: 'demo',
    version: '1.0.0',
    tools: [store],
    policy: serverPolicySchema(true, {}).parse({}),
    capabilities: { ran },
    controlDir: ws.path('.bulkhead'),
    gate: { kind: 'self', permissions: PermissionGate.load(ws.path('.bulkhead')) },
    audit: auditPolicySchema.parse({ enabled: true }),
    limits: { maxOutputBytes: 10_000 },
    ...(maxRequestBytes ? { maxRequestBytes } : {}),
  });
  const connected = await connectInProcess(server);
  client = connected.client;
  closeClient = connected.close;
}

afterEach(async () => {
  await closeClient?.();
  await server?.close();
  ws?.cleanup();
  ran.length = 0;
});

function deep(levels: number, leaf: unknown = 1, kind: 'object' | 'array' = 'object'): unknown {
  let value = leaf;
  for (let i = 0; i < levels; i++) value = kind === 'object' ? { a: value } : [value];
  return value;
}

async function call(args: Record<string, unknown>): Promise<{ isError: boolean; text: string }> {
  const result = (await client!.callTool({ name: 'store', arguments: args })) as { isError?: boolean; content: { text: string }[] };
  return { isError: result.isError === true, text: result.content.map((c) => c.text).join('') };
}

describe('the core refuses arguments too deep or too large before any schema', () => {
  it('a 100,000-deep payload (objects, arrays, mixed) is refused with a message, not a stack overflow; the tool never runs', async () => {
    await start();
    for (const payload of [deep(100_000), deep(100_000, 1, 'array'), { x: [deep(50_000, [deep(50_000)])] }]) {
      const result = await call({ payload });
      expect(result.isError).toBe(true);
      expect(result.text).toMatch(/^Invalid arguments for demo:store: `payload(\.[a-z0-9]+)*(\.…)?` nests deeper than 64 levels of arrays and objects; send a flatter value$/);
      expect(result.text).not.toContain('call stack');
    }
    expect(ran).toEqual([]);
  });

  it('refuses at the first level past the limit and accepts the limit itself', async () => {
    await start();
    // The arguments object is level 1, payload's value level 2.
    expect((await call({ payload: deep(MAX_ARGUMENT_DEPTH - 1) })).text).toBe("stored");
    expect((await call({ payload: deep(MAX_ARGUMENT_DEPTH) })).text).toBe('Invalid arguments for demo:store: `payload.a.a.a.a.a.…` nests deeper than 64 levels of arrays and objects; send a flatter value');
  });

  it('refuses arguments larger than the request limit: a huge string, a huge array, a huge record, many small keys', async () => {
    await start(1024 * 1024);
    const limit = 'the arguments are larger than this server\'s request limit (1048576 bytes); send less per call';
    for (const payload of ['x'.repeat(2 * 1024 * 1024), Array.from({ length: 300_000 }, () => 1), Object.fromEntries(Array.from({ length: 100_000 }, (_, i) => [`key${i}`, 'v']))]) {
      expect(await call({ payload })).toEqual({ isError: true, text: `Invalid arguments for demo:store: ${limit}` });
    }
    expect(ran).toEqual([]);
  });

  it('the schema bounds apply below the limits: a too long array, a too long string in a record', async () => {
    await start();
    expect((await call({ payload: 1, tags: Array.from({ length: 21 }, () => 't') })).text).toMatch(/^Invalid arguments for demo:store: `tags`: Too big: expected array to have <=20 items/);
    expect((await call({ payload: 1, labels: { a: 'x'.repeat(51) } })).text).toMatch(/^Invalid arguments for demo:store: `labels.a`: Too big/);
  });

  it('checkArgumentBounds walks without recursion and counts from below', () => {
    expect(() => checkArgumentBounds(deep(1_000_000), 'x:y')).toThrow(ToolError);
    expect(() => checkArgumentBounds({ a: 'x'.repeat(100) }, 'x:y', { maxBytes: 200 })).not.toThrow();
    expect(() => checkArgumentBounds({ a: 'x'.repeat(300) }, 'x:y', { maxBytes: 200 })).toThrow('larger than this server\'s request limit (200 bytes)');
  });
});

describe('the inventory check finds every unbounded string, array and record', () => {
  it('names each field by its path', () => {
    const schema = z.toJSONSchema(
      z.object({
        ok: z.string().max(10),
        kind: z.enum(['a', 'b']),
        free: z.string(),
        list: z.array(z.string().max(5)),
        nested: z.array(z.object({ inner: z.string() })).max(3),
        map: z.record(z.string(), z.number()),
        json: z.json(),
      }),
      { io: 'input', unrepresentable: 'any' },
    );
    expect(unboundedFields(schema)).toEqual(
      expect.arrayContaining([
        'input.free is a string without maxLength (.max())',
        'input.list is an array without maxItems (.max())',
        'input.nested[].inner is a string without maxLength (.max())',
        'input.map is a record without maxProperties (a size check)',
      ]),
    );
    expect(unboundedFields(schema).filter((line) => line.startsWith('input.ok') || line.startsWith('input.kind'))).toEqual([]);
  });
});
