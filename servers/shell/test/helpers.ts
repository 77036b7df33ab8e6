import { auditPolicySchema, PermissionGate } from '@bulkhead/core';
import { connectInProcess, tempWorkspace, toolCall, type TempWorkspace, type ToolCall } from '@bulkhead/core/testing';
import { createShellServer } from '@bulkhead/shell';
import { shellPolicySchema, type ShellLimits } from '../src/policy.js';

export type ShellPolicyOverrides = Omit<Partial<Record<string, unknown>>, 'limits'> & { limits?: Partial<ShellLimits> };

export interface ShellHarness {
  readonly ws: TempWorkspace;
  readonly client: Awaited<ReturnType<typeof connectInProcess>>['client'];
  call<S = Record<string, unknown>>(name: string, args?: Record<string, unknown>): Promise<ToolCall<S>>;
  close(): Promise<void>;
}

export interface StartShellOptions {
  readonly policy?: ShellPolicyOverrides;
  /** permissions.yaml; default: everything of the shell server allowed. */
  readonly permissions?: string;
  readonly files?: Record<string, string>;
  readonly environment?: NodeJS.ProcessEnv;
}

/** Starts the shell server in-process, enabled, on a fresh workspace whose first root is the workspace. */
export async function startShell(options: StartShellOptions = {}): Promise<ShellHarness> {
  const ws = tempWorkspace({ '.bulkhead/permissions.yaml': options.permissions ?? 'allow:\n  - shell\n', ...options.files }, 'bulkhead-shell-');
  const controlDir = ws.path('.bulkhead');
  const { limits, ...rest } = options.policy ?? {};
  const server = createShellServer({
    roots: [ws.root],
    controlDir,
    gate: { kind: 'self', permissions: PermissionGate.load(controlDir) },
    audit: auditPolicySchema.parse({ enabled: false }),
    policy: shellPolicySchema.parse({ enabled: true, ...rest, limits: { ...limits } }),
    ...(options.environment ? { environment: options.environment } : {}),
  });
  const { client, close } = await connectInProcess(server);
  return {
    ws,
    client,
    call: async <S,>(name: string, args: Record<string, unknown> = {}) => toolCall<S>(await client.callTool({ name, arguments: args })),
    close: async () => {
      await close();
      await server.close();
      ws.cleanup();
    },
  };
}
