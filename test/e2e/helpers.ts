import { execFileSync } from 'node:child_process';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const require = createRequire(import.meta.url);

export const FS_CLI = fileURLToPath(new URL('../../servers/fs/dist/cli.js', import.meta.url));
export const GIT_CLI = fileURLToPath(new URL('../../servers/git/dist/cli.js', import.meta.url));
export const WEB_CLI = fileURLToPath(new URL('../../servers/web/dist/cli.js', import.meta.url));
export const SHELL_CLI = fileURLToPath(new URL('../../servers/shell/dist/cli.js', import.meta.url));
export const AUDIT_CLI = fileURLToPath(new URL('../../shared/dist/audit/cli.js', import.meta.url));
export const GATEWAY_CLI = fileURLToPath(new URL('../../servers/gateway/dist/cli.js', import.meta.url));
export const LADDER_CLI = fileURLToPath(new URL('../../servers/ladder/dist/cli.js', import.meta.url));
export const CHANGING_SERVER = fileURLToPath(new URL('../fixtures/changing-server.mjs', import.meta.url));
export const ODD_NAMES_SERVER = fileURLToPath(new URL('../fixtures/odd-names-server.mjs', import.meta.url));
export const BIG_RESULTS_SERVER = fileURLToPath(new URL('../fixtures/big-results-server.mjs', import.meta.url));
/** The reference server from npm that the gateway tests put beside the built-ins. */
export const EVERYTHING = join(dirname(require.resolve('@modelcontextprotocol/server-everything/package.json')), 'dist', 'index.js');
/**
 * Trusted with its annotations, so its read-only tools are low risk as the tests of risk tiers expect (untrusted, every tool is
 * medium), and with its results, so tests of other things compare its answers as sent (untrusted, they come wrapped).
 */
export const EVERYTHING_ENTRY = `  everything:\n    command: ${process.execPath}\n    args: [${EVERYTHING}, stdio]\n    trust: [annotations, results]\n`;
export const HOSTILE_SERVER = fileURLToPath(new URL('../fixtures/hostile-tools.mjs', import.meta.url));

/** The text blocks of a tool result, joined. */
export function text(result: unknown): string {
  return ((result as { content?: { type: string; text?: string }[] }).content ?? [])
    .filter((block) => block.type === 'text')
    .map((block) => block.text)
    .join('\n');
}

export function childrenOf(pid: number): { pid: number; command: string }[] {
  return execFileSync('ps', ['-eo', 'pid=,ppid=,args='], { encoding: 'utf8' })
    .split('\n')
    .map((line) => /^\s*(\d+)\s+(\d+)\s+(.*)$/.exec(line))
    .filter((m): m is RegExpExecArray => m !== null && Number(m[2]) === pid)
    .map((m) => ({ pid: Number(m[1]), command: m[3]! }));
}

/** Every pid below `pid` (children, grandchildren, …), from the parent links in ps. */
export function descendants(pid: number): number[] {
  const rows = execFileSync('ps', ['-eo', 'pid=,ppid='], { encoding: 'utf8' })
    .split('\n')
    .map((line) => line.trim().split(/\s+/).map(Number))
    .filter((row): row is [number, number] => row.length === 2 && !Number.isNaN(row[0]));
  const found: number[] = [];
  const walk = (parent: number) => {
    for (const [child, ppid] of rows) {
      if (ppid === parent) {
        found.push(child);
        walk(child);
      }
    }
  };
  walk(pid);
  return found;
}

export function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

/** Waits until `check` holds, polling; fails with `what` after `ms`. */
export async function until(what: string, check: () => boolean, ms = 5000): Promise<void> {
  const deadline = Date.now() + ms;
  while (!check()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 25));
  }
}
