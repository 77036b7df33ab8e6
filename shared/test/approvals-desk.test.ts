// The gate's second channel in process: a client without elicitation gets a pending approval that
// a human decides in the store (as the console and `bulkhead approvals` do), and the call runs or
// is refused by that decision. The end-to-end flow over real processes is test/e2e/approvals-flow.
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { z } from 'zod';
import {
  ApprovalStore,
  auditPolicySchema,
  createToolServer,
  defineTool,
  PermissionGate,
  serverPolicySchema,
  textReply,
  verifyAuditFile,
  type DirectCall,
  type ToolServer,
} from '@bulkhead/core';
import { LoggingMessageNotificationSchema } from '@modelcontextprotocol/sdk/types.js';
import { connectInProcess, tempWorkspace, type ConnectedClient, type TempWorkspace } from '@bulkhead/core/testing';

interface Caps {
  readonly effects: string[];
}

const note = defineTool<Caps, z.ZodObject>({
  name: 'note',
  title: 'Note',
  description: 'Records a note (a side effect the tests can see).',
  input: z.strictObject({ text: z.string().max(100_000).describe('what to record'), extra: z.record(z.string(), z.string()).optional().describe('more keys') }),
  annotations: { readOnlyHint: false, destructiveHint: false, idempotentHint: false, openWorldHint: false },
  risk: 'medium',
  preview: async (args) => `would record ${JSON.stringify(args['text'])}`,
  run: async (args, ctx) => {
    ctx.effects.push(String(args['text']));
    return textReply(`recorded ${String(args['text'])}`);
  },
});

const stamp = defineTool<Caps, z.ZodObject>({
  name: 'stamp',
  title: 'Stamp',
  description: 'Records a stamp: another medium-risk tool.',
  input: z.strictObject({ text: z.string().max(100).describe('what to stamp') }),
  annotations: { readOnlyHint: false, destructiveHint: false, idempotentHint: false, openWorldHint: false },
  risk: 'medium',
  run: async (args, ctx) => {
    ctx.effects.push(`stamp ${String(args['text'])}`);
    return textReply('stamped');
  },
});

// Held calls notify the desktop; a developer running these tests in a desktop session gets no pop-ups.
for (const key of ['DBUS_SESSION_BUS_ADDRESS', 'DISPLAY', 'WAYLAND_DISPLAY']) delete process.env[key];

let ws: TempWorkspace;
let connections: ConnectedClient[] = [];
let servers: ToolServer[] = [];
let effects: string[];

afterEach(async () => {
  await Promise.all(connections.map((c) => c.close()));
  await Promise.all(servers.map((s) => s.close()));
  connections = [];
  servers = [];
  ws?.cleanup();
});

function workspace(permissions?: string) {
  ws = tempWorkspace(permissions !== undefined ? { '.bulkhead/permissions.yaml': permissions } : {});
  effects = [];
  return ws.path('.bulkhead');
}

/** A server built as a CLI builds it (gate loaded from the folder now), and a client without elicitation. */
async function serve(controlDir: string, capture?: (call: DirectCall) => void) {
  const server = createToolServer<Caps>({
    namespace: 'demo',
    version: '1.0.0',
    tools: [note, stamp],
    policy: serverPolicySchema(true, {}).parse({}),
    capabilities: { effects },
    controlDir,
    gate: { kind: 'self', permissions: PermissionGate.load(controlDir) },
    audit: auditPolicySchema.parse({}),
    limits: { maxOutputBytes: 10_000 },
    ...(capture ? { http: (call: DirectCall) => (capture(call), {}) } : {}),
  });
  servers.push(server);
  const connected = await connectInProcess(server);
  connections.push(connected);
  const notices: string[] = [];
  connected.client.setNotificationHandler(LoggingMessageNotificationSchema, (notification) => {
    notices.push(`${notification.params.level} ${notification.params.logger}: ${String(notification.params.data)}`);
  });
  return { client: connected.client, notices };
}

const text = (result: unknown) => ((result as { content: { text: string }[] }).content ?? []).map((c) => c.text).join('\n');
const auditLines = (controlDir: string) =>
  readFileSync(join(controlDir, 'audit', 'demo.jsonl'), 'utf8')
    .trimEnd()
    .split('\n')
    .map((line) => JSON.parse(line) as Record<string, unknown>);

/** The one undecided approval, once the held call opened it. */
async function waitingApproval(store: ApprovalStore, count = 1) {
  await expect.poll(() => store.pending().length, { timeout: 5000, interval: 10 }).toBe(count);
  return store.pending()[0]!;
}

describe('a call the client cannot confirm', () => {
  it('waits for the human and runs once allowed, with the prompt, preview and offers of its policy line', async () => {
    const dir = workspace('approval_wait_ms: 20000\n');
    const { client, notices } = await serve(dir);
    const store = new ApprovalStore(dir);
    const progress: string[] = [];
    const call = client.callTool({ name: 'note', arguments: { text: 'hello' } }, undefined, { onprogress: (p) => progress.push(p.message ?? ''), resetTimeoutOnProgress: true });
    const approval = await waitingApproval(store);
    expect(approval).toMatchObject({
      server: 'demo',
      pid: process.pid,
      tool: 'demo:note',
      caller: 'bulkhead-test/1.0.0',
      args: { text: 'hello' },
      reason: `demo:note is medium risk and autonomy is supervised (the default; ${dir}/permissions.yaml does not set autonomy)`,
      preview: { text: 'would record "hello"' },
      offers: ['once', 'session', 'always', 'deny'],
      state: 'waiting',
    });
    expect(approval.prompt).toContain('Allow demo:note?\n');
    expect(effects).toEqual([]);
    store.decide(approval.id, 'once', 'a unit test');
    expect(text(await call)).toBe('recorded hello');
    expect(effects).toEqual(['hello']);
    expect(notices).toEqual([
      `warning bulkhead-demo: demo:note waits for a human's approval (approval ${approval.id}) for up to 20 s. Approve it in the Bulkhead console (run \`bulkhead console --config ${dir}\` to open the console) or in a terminal: bulkhead approvals allow ${approval.id} --config ${dir}.`,
    ]);
    expect(progress[0]).toMatch(new RegExp(`^waiting for approval ${approval.id}… \\((20|19) s left\\)$`));
    expect(auditLines(dir).at(-1)).toMatchObject({ tool: 'demo:note', decision: 'ask:approved', outcome: 'ok', approval: { id: approval.id, by: 'a unit test' } });
    expect(store.get(approval.id)!.used).toBeDefined();
  });

  it('offers no always for an ask entry, and neither session nor always for an always_ask entry', async () => {
    const dir = workspace('ask:\n  - demo:note\nalways_ask:\n  - demo:stamp\napproval_wait_ms: 0\n');
    const { client } = await serve(dir);
    const store = new ApprovalStore(dir);
    await client.callTool({ name: 'note', arguments: { text: 'a' } });
    await client.callTool({ name: 'stamp', arguments: { text: 'b' } });
    const byTool = Object.fromEntries(store.pending().map((approval) => [approval.tool, approval.offers]));
    expect(byTool).toEqual({ 'demo:note': ['once', 'session', 'deny'], 'demo:stamp': ['once', 'deny'] });
    expect(store.pending().map((approval) => approval.state)).toEqual(['timed_out', 'timed_out']);
    expect(effects).toEqual([]);
  });

  it('joins an identical call to the approval already open, and an allow-once runs exactly one of them', async () => {
    const dir = workspace('approval_wait_ms: 20000\n');
    const { client } = await serve(dir);
    const store = new ApprovalStore(dir);
    const first = client.callTool({ name: 'note', arguments: { text: 'same' } });
    const approval = await waitingApproval(store);
    const second = client.callTool({ name: 'note', arguments: { text: 'same' } });
    // A different call is a different approval.
    const other = client.callTool({ name: 'note', arguments: { text: 'other' } });
    await expect.poll(() => store.pending().length, { timeout: 5000, interval: 10 }).toBe(2);
    store.decide(approval.id, 'once', 'a unit test');
    const answers = [text(await first), text(await second)].sort();
    expect(answers).toEqual([
      `Permission denied: approval ${approval.id} allowed demo:note once, and another identical call used it. Nothing was run; make the call again to ask anew.`,
      'recorded same',
    ]);
    expect(effects).toEqual(['same']);
    const otherApproval = store.pending()[0]!;
    expect(otherApproval.args).toEqual({ text: 'other' });
    store.decide(otherApproval.id, 'deny', 'a unit test');
    expect(text(await other)).toMatch(new RegExp(`^Permission denied: a unit test denied demo:note \\(approval ${otherApproval.id}\\) at \\d\\d:\\d\\d:\\d\\d UTC\\. Nothing was run\\.$`));
    expect(effects).toEqual(['same']);
    const decisions = auditLines(dir).map((entry) => [entry['decision'], entry['outcome'], (entry['approval'] as { id: string }).id]);
    expect(decisions.sort()).toEqual(
      [
        ['ask:approved', 'ok', approval.id],
        ['ask:used', 'denied', approval.id],
        ['ask:denied', 'denied', otherApproval.id],
      ].sort(),
    );
    expect(verifyAuditFile(join(dir, 'audit', 'demo.jsonl'))).toMatchObject({ ok: true, entries: 3 });
  });

  it('remembers an always for the rest of the process, and the rule it wrote lets a reloaded gate run the tool', async () => {
    const dir = workspace('approval_wait_ms: 20000\n');
    const { client } = await serve(dir);
    const store = new ApprovalStore(dir);
    const call = client.callTool({ name: 'note', arguments: { text: 'one' } });
    const approval = await waitingApproval(store);
    store.decide(approval.id, 'always', 'a unit test');
    expect(text(await call)).toBe('recorded one');
    // Other arguments, and the gate loaded before the rule was written: the desk remembers.
    expect(text(await client.callTool({ name: 'note', arguments: { text: 'two' } }))).toBe('recorded two');
    expect(store.pending()).toEqual([]);
    // Another tool is not covered.
    const stampCall = client.callTool({ name: 'stamp', arguments: { text: 'x' } });
    const stampApproval = await waitingApproval(store);
    expect(stampApproval.tool).toBe('demo:stamp');
    store.decide(stampApproval.id, 'deny', 'a unit test');
    await stampCall;
    expect(PermissionGate.load(dir).decide({ qualifiedName: 'demo:note', risk: 'medium', args: {} }).verdict).toBe('allow');
    const decisions = auditLines(dir).map((entry) => [entry['tool'], entry['decision'], entry['approval']]);
    expect(decisions).toEqual([
      ['demo:note', 'ask:always', { id: approval.id, by: 'a unit test' }],
      ['demo:note', 'allow:always', { id: approval.id, by: 'a unit test' }],
      ['demo:stamp', 'ask:denied', { id: stampApproval.id, by: 'a unit test' }],
    ]);
    expect(effects).toEqual(['one', 'two']);
  });

  it('honours an always given after the call stopped waiting, for other arguments too', async () => {
    const dir = workspace('approval_wait_ms: 0\n');
    const { client } = await serve(dir);
    const store = new ApprovalStore(dir);
    expect(text(await client.callTool({ name: 'note', arguments: { text: 'gave up' } }))).toContain("is waiting for a human's approval");
    const approval = store.pending()[0]!;
    store.decide(approval.id, 'always', 'a unit test');
    // Not the identical call: the always covers the tool, as the rule it wrote will after a restart.
    expect(text(await client.callTool({ name: 'note', arguments: { text: 'something else' } }))).toBe('recorded something else');
    expect(auditLines(dir).at(-1)).toMatchObject({ decision: 'allow:always', outcome: 'ok', approval: { id: approval.id, by: 'a unit test' } });
    // Another tool is not covered.
    expect(text(await client.callTool({ name: 'stamp', arguments: { text: 'x' } }))).toContain("demo:stamp is waiting for a human's approval");
    expect(effects).toEqual(['something else']);
  });

  it('grants a session allow on the session of the call, covering that tool only', async () => {
    const dir = workspace('approval_wait_ms: 20000\n');
    const { client } = await serve(dir);
    const store = new ApprovalStore(dir);
    const call = client.callTool({ name: 'note', arguments: { text: 'one' } });
    store.decide((await waitingApproval(store)).id, 'session', 'a unit test');
    expect(text(await call)).toBe('recorded one');
    expect(text(await client.callTool({ name: 'note', arguments: { text: 'two' } }))).toBe('recorded two');
    // Another connection is another session: it asks.
    const another = await serve(dir);
    const elsewhere = another.client.callTool({ name: 'note', arguments: { text: 'three' } });
    store.decide((await waitingApproval(store)).id, 'deny', 'a unit test');
    expect(text(await elsewhere)).toContain('Permission denied: a unit test denied demo:note');
    expect(auditLines(dir).map((entry) => entry['decision'])).toEqual(['ask:session', 'allow:session', 'ask:denied']);
    expect(effects).toEqual(['one', 'two']);
  });

  it('stops waiting when the client cancels, and keeps the approval for the identical retry', async () => {
    const dir = workspace('approval_wait_ms: 20000\n');
    const { client } = await serve(dir);
    const store = new ApprovalStore(dir);
    const abort = new AbortController();
    const call = client.callTool({ name: 'note', arguments: { text: 'later' } }, undefined, { signal: abort.signal });
    const approval = await waitingApproval(store);
    abort.abort();
    await expect(call).rejects.toThrow();
    await expect.poll(() => store.get(approval.id)?.state, { timeout: 5000, interval: 10 }).toBe('timed_out');
    await expect.poll(() => auditLines(dir).length, { timeout: 5000, interval: 10 }).toBe(1);
    expect(auditLines(dir)[0]).toMatchObject({ decision: 'ask:pending', outcome: 'cancelled', approval: { id: approval.id } });
    store.decide(approval.id, 'once', 'a unit test');
    expect(text(await client.callTool({ name: 'note', arguments: { text: 'later' } }))).toBe('recorded later');
    expect(auditLines(dir)[1]).toMatchObject({ decision: 'ask:approved', outcome: 'ok', approval: { id: approval.id, by: 'a unit test' } });
    expect(effects).toEqual(['later']);
  });

  it('is refused as before when the store cannot be written, or the call has nobody behind it', async () => {
    const dir = workspace('approval_wait_ms: 20000\n');
    // A file where the store's folder would be.
    writeFileSync(join(dir, 'approvals'), 'not a folder\n');
    let direct: DirectCall | undefined;
    const { client } = await serve(dir, (call) => (direct = call));
    const refused = text(await client.callTool({ name: 'note', arguments: { text: 'x' } }));
    expect(refused).toMatch(
      /^Permission denied: demo:note is medium risk and autonomy is supervised \(.*\)\. This client cannot show a confirmation prompt \(it does not support MCP elicitation\), and its pending approval could not be recorded \(.+\), so nothing was run\. To allow it: add `demo:note` under allow: in .*$/,
    );
    const viaHttp = await direct!('note', { text: 'y' }, { caller: 'curl' });
    expect(viaHttp.errorCode).toBe('denied');
    expect(text(viaHttp.result)).toContain('This call did not come over MCP, so nobody can be asked to confirm it, so nothing was run.');
    expect(effects).toEqual([]);
  });

  it('refuses, without opening an approval, a call with more keys than a prompt can list', async () => {
    const dir = workspace('approval_wait_ms: 20000\n');
    const { client } = await serve(dir);
    const extra = Object.fromEntries(Array.from({ length: 5000 }, (_, i) => [`key_${i}_${'k'.repeat(20)}`, 'v']));
    const refused = text(await client.callTool({ name: 'note', arguments: { text: 'x', extra } }));
    expect(refused).toMatch(/^Permission denied: demo:note cannot be put to the human: its arguments have 5,001 keys/);
    expect(existsSync(join(dir, 'approvals'))).toBe(false);
  });
});
