// A compartment believes a principal in a call's _meta only from the gateway that started it: with
// --gated-by-gateway over stdio. The flags decide it once (parseCommonOptions); the kit applies it
// to every tools/call, as ctx.principal and in the audit line's caller.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { auditPolicySchema, createToolServer, defineTool, parseCommonOptions, PermissionGate, serverPolicySchema, textReply, type GateMode } from '@bulkhead/core';
import { connectInProcess, tempWorkspace, type ConnectedClient, type TempWorkspace } from '@bulkhead/core/testing';

const whoami = defineTool<Record<string, never>, z.ZodObject<Record<string, never>>>({
  name: 'whoami',
  title: 'Who am I',
  description: 'Says who the call is made by.',
  input: z.strictObject({}),
  annotations: { readOnlyHint: true, destructiveHint: false, idempotentHint: true, openWorldHint: false },
  risk: 'low',
  run: async (_args, ctx) => textReply(ctx.principal ?? 'the server itself'),
});

let ws: TempWorkspace | undefined;
let connected: ConnectedClient | undefined;

afterEach(async () => {
  await connected?.close();
  connected = undefined;
  ws?.cleanup();
  ws = undefined;
});

async function serverWith(gate: (controlDir: string) => GateMode) {
  ws = tempWorkspace({ '.bulkhead/permissions.yaml': 'allow:\n  - demo\n' });
  const controlDir = ws.path('.bulkhead');
  const server = createToolServer<Record<string, never>>({
    namespace: 'demo',
    version: '1.0.0',
    tools: [whoami],
    policy: serverPolicySchema(true, {}).parse({}),
    capabilities: {},
    controlDir,
    gate: gate(controlDir),
    audit: auditPolicySchema.parse({}),
    limits: { maxOutputBytes: 1000 },
  });
  connected = await connectInProcess(server);
  const ask = async (meta?: Record<string, unknown>) => {
    const result = (await connected!.client.callTool({ name: 'whoami', arguments: {}, ...(meta ? { _meta: meta } : {}) })) as { content: { text: string }[] };
    return result.content.map((block) => block.text).join('');
  };
  const callers = () =>
    readFileSync(join(controlDir, 'audit', 'demo.jsonl'), 'utf8')
      .trimEnd()
      .split('\n')
      .map((line) => JSON.parse(line) as { tool?: string; caller?: string })
      .filter((line) => line.tool === 'demo:whoami')
      .map((line) => line.caller);
  return { ask, callers };
}

describe('who may name the caller in _meta', () => {
  it('is decided by the flags: --gated-by-gateway over stdio only', () => {
    ws = tempWorkspace();
    const cwd = ws.root;
    expect(parseCommonOptions(['--gated-by-gateway'], cwd).gate).toEqual({ kind: 'gateway', parentNamesCaller: true });
    expect(parseCommonOptions(['--gated-by-gateway', '--http', '127.0.0.1:0'], cwd).gate).toEqual({ kind: 'gateway', parentNamesCaller: false });
    expect(parseCommonOptions([], cwd).gate.kind).toBe('self');
  });

  it('a server its parent gateway started acts as the principal the parent names, and records it', async () => {
    const { ask, callers } = await serverWith(() => ({ kind: 'gateway', parentNamesCaller: true }));
    expect(await ask({ 'bulkhead/principal': 'ada' })).toBe('ada');
    expect(await ask({ 'bulkhead/other': 'ada' })).toBe('the server itself');
    expect(await ask()).toBe('the server itself');
    expect(callers()).toEqual(['bulkhead-test/1.0.0@ada', 'bulkhead-test/1.0.0', 'bulkhead-test/1.0.0']);
  });

  it('a server gated by a gateway over HTTP, or gating itself, ignores it', async () => {
    for (const gate of [() => ({ kind: 'gateway' }) as const, () => ({ kind: 'gateway', parentNamesCaller: false }) as const, (controlDir: string) => ({ kind: 'self', permissions: PermissionGate.load(controlDir) }) as const]) {
      const { ask, callers } = await serverWith(gate);
      expect(await ask({ 'bulkhead/principal': 'ada' })).toBe('the server itself');
      expect(callers()).toEqual(['bulkhead-test/1.0.0']);
      await connected?.close();
      connected = undefined;
      ws?.cleanup();
      ws = undefined;
    }
  });
});
