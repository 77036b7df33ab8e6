import { execFileSync } from 'node:child_process';
import { writeFileSync, mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { auditPolicySchema, PermissionGate } from '@bulkhead/core';
import { connectInProcess, tempWorkspace, type TempWorkspace } from '@bulkhead/core/testing';
import { createFsServer } from '@bulkhead/fs';
import { fsPolicySchema, type FsLimits } from '../src/policy.js';

/** Policy overrides in the shape of fs_policy.yaml, with `limits` merged over the defaults. */
export type PolicyOverrides = Omit<Partial<Record<string, unknown>>, 'limits'> & { limits?: Partial<FsLimits> };

export interface ToolCall {
  readonly text: string;
  readonly isError: boolean;
  readonly content: { type: string; text?: string; data?: string; mimeType?: string }[];
}

export interface FsHarness {
  /** The workspace the server serves (its only root). */
  readonly ws: TempWorkspace;
  /** The control-plane folder (outside the root, so listings stay exact). */
  readonly controlDir: string;
  readonly client: Awaited<ReturnType<typeof connectInProcess>>['client'];
  call(name: string, args?: Record<string, unknown>): Promise<ToolCall>;
  read(path: string, more?: Record<string, unknown>): Promise<ToolCall>;
  close(): Promise<void>;
}

export interface StartOptions {
  readonly policy?: PolicyOverrides;
  /** Contents of permissions.yaml in the control folder. */
  readonly permissions?: string;
  /** Serve an existing workspace instead of a fresh one (it is not cleaned up by close). */
  readonly ws?: TempWorkspace;
}

export function toolCall(result: unknown): ToolCall {
  const r = result as { isError?: boolean; content: ToolCall['content'] };
  const text = r.content
    .filter((block) => block.type === 'text')
    .map((block) => block.text)
    .join('\n');
  return { text, isError: r.isError === true, content: r.content };
}

/** Starts the fs server in-process on a workspace holding `files`, with a connected client. */
export async function startFs(files: Record<string, string | Uint8Array> = {}, options: StartOptions = {}): Promise<FsHarness> {
  const ws = options.ws ?? tempWorkspace(files, 'bulkhead-fs-');
  if (options.ws) for (const [relative, content] of Object.entries(files)) ws.write(relative, content);
  const control = tempWorkspace({}, 'bulkhead-fs-control-');
  const controlDir = control.path('.bulkhead');
  mkdirSync(controlDir, { recursive: true });
  if (options.permissions !== undefined) writeFileSync(join(controlDir, 'permissions.yaml'), options.permissions);
  const { limits, ...rest } = options.policy ?? {};
  const server = createFsServer({
    roots: [ws.root],
    controlDir,
    gate: { kind: 'self', permissions: PermissionGate.load(controlDir) },
    audit: auditPolicySchema.parse({}),
    policy: fsPolicySchema.parse({ ...rest, limits: { ...limits } }),
  });
  const { client, close } = await connectInProcess(server);
  const call = async (name: string, args: Record<string, unknown> = {}) => toolCall(await client.callTool({ name, arguments: args }));
  return {
    ws,
    controlDir,
    client,
    call,
    read: (path, more = {}) => call('read_file', { path, ...more }),
    close: async () => {
      await close();
      await server.close();
      if (!options.ws) ws.cleanup();
      control.cleanup();
    },
  };
}

/** Makes the folder a git repository so that ripgrep and the walkers honour its .gitignore. */
export function gitInit(dir: string): void {
  execFileSync('git', ['init', '-q', dir], { stdio: 'ignore' });
}

/** A window of numbered lines as read_file prints them (cat -n style, width 6). */
export function numbered(lines: readonly string[], first = 1): string {
  return lines.map((line, i) => `${String(first + i).padStart(6)}\t${line}`).join('\n');
}

/** `count` lines "line 1" … "line count", each ending in a newline. */
export function lineFile(count: number, text: (n: number) => string = (n) => `line ${n}`): string {
  let out = '';
  for (let n = 1; n <= count; n++) out += `${text(n)}\n`;
  return out;
}
