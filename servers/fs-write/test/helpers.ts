import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { auditPolicySchema, PermissionGate } from '@bulkhead/core';
import { connectInProcess, tempWorkspace, type TempWorkspace } from '@bulkhead/core/testing';
import { createFsWriteServer } from '@bulkhead/fs-write';
import { fsWritePolicySchema } from '../src/policy.js';

export interface ToolCall {
  readonly text: string;
  readonly isError: boolean;
}

export interface FsWriteHarness {
  /** The workspace the server serves (its only root). */
  readonly ws: TempWorkspace;
  /** The control-plane folder, inside the root as `bulkhead start` has it. */
  readonly controlDir: string;
  call(name: string, args?: Record<string, unknown>): Promise<ToolCall>;
  close(): Promise<void>;
}

export interface StartOptions {
  /** fs_write_policy.yaml as an object. */
  readonly policy?: Record<string, unknown>;
  /** Contents of permissions.yaml; by default every fs_write tool is allowed. */
  readonly permissions?: string;
}

export function toolCall(result: unknown): ToolCall {
  const r = result as { isError?: boolean; content: { type: string; text?: string }[] };
  return { text: r.content.filter((block) => block.type === 'text').map((block) => block.text).join('\n'), isError: r.isError === true };
}

/** Starts fs_write in-process on a workspace holding `files`, with a connected client. */
export async function startFsWrite(files: Record<string, string | Uint8Array> = {}, options: StartOptions = {}): Promise<FsWriteHarness> {
  const ws = tempWorkspace(files, 'bulkhead-fsw-');
  const controlDir = ws.path('.bulkhead');
  mkdirSync(controlDir, { recursive: true });
  writeFileSync(join(controlDir, 'permissions.yaml'), options.permissions ?? 'allow:\n  - fs_write\n');
  const server = createFsWriteServer({
    roots: [ws.root],
    controlDir,
    gate: { kind: 'self', permissions: PermissionGate.load(controlDir) },
    audit: auditPolicySchema.parse({}),
    policy: fsWritePolicySchema.parse(options.policy ?? {}),
  });
  const { client, close } = await connectInProcess(server);
  return {
    ws,
    controlDir,
    call: async (name, args = {}) => toolCall(await client.callTool({ name, arguments: args })),
    close: async () => {
      await close();
      await server.close();
      ws.cleanup();
    },
  };
}
