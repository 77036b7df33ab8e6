import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { auditPolicySchema, PermissionGate } from '@bulkhead/core';
import { connectInProcess, tempWorkspace, toolCall, type TempWorkspace, type ToolCall } from '@bulkhead/core/testing';
import { ladderPolicySchema } from '../src/policy.js';
import { createLadderServer } from '../src/server.js';
import { commit, git } from './ladder-helpers.js';

export const START = Date.UTC(2026, 0, 5, 12, 0, 0);

/** One workspace with a git repository (`repo/`), a control-plane folder and a clock every server on it shares. */
export interface LadderWorld {
  readonly ws: TempWorkspace;
  /** The git repository's folder; its default repository name is `local/repo`. */
  readonly repoDir: string;
  readonly controlDir: string;
  advance(ms: number): void;
  /** A server acting as `actor` on the shared database file, with a connected client. */
  connect(actor: string, policy?: Record<string, unknown>): Promise<LadderClient>;
  close(): Promise<void>;
}

export interface LadderClient {
  call<S = Record<string, unknown>>(name: string, args?: Record<string, unknown>): Promise<ToolCall<S>>;
  readonly listTools: () => Promise<string[]>;
}

export async function ladderWorld(files: Record<string, string> = { 'README.md': '# widgets\n', 'src/index.js': 'export {};\n' }): Promise<LadderWorld> {
  const ws = tempWorkspace({}, 'bulkhead-ladder-server-');
  const repoDir = ws.mkdir('repo');
  git(repoDir, ['init', '-q']);
  commit(repoDir, 'first', files);
  const controlDir = ws.path('.bulkhead');
  mkdirSync(controlDir, { recursive: true });
  writeFileSync(join(controlDir, 'permissions.yaml'), 'allow:\n  - ladder\n');
  let now = START;
  const closers: (() => Promise<void>)[] = [];
  return {
    ws,
    repoDir,
    controlDir,
    advance: (ms) => {
      now += ms;
    },
    async connect(actor, policy = {}) {
      const server = await createLadderServer({
        roots: [repoDir],
        controlDir,
        gate: { kind: 'self', permissions: PermissionGate.load(controlDir) },
        audit: auditPolicySchema.parse({ enabled: false }),
        policy: ladderPolicySchema.parse({ actor, ...policy }),
        clock: () => now,
      });
      const { client, close } = await connectInProcess(server);
      closers.push(async () => {
        await close();
        await server.close();
      });
      return {
        call: async <S,>(name: string, args: Record<string, unknown> = {}) => toolCall<S>(await client.callTool({ name, arguments: args })),
        listTools: async () => (await client.listTools()).tools.map((tool) => tool.name),
      };
    },
    async close() {
      for (const close of closers) await close();
      ws.cleanup();
    },
  };
}
