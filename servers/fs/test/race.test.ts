import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import { mkdirSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { tempWorkspace, type TempWorkspace } from '@bulkhead/core/testing';
import { startFs, type FsHarness } from './helpers.js';

/**
 * Swaps folders and files for symlinks to outside the root while the search tools run
 * (`renameat2(RENAME_EXCHANGE)` in a tight loop, as anything that writes in a root can do), and
 * counts the calls whose answer shows anything from outside. BULKHEAD_RACE_CALLS sets the number
 * of calls per tool, variant and engine (default 40: 18 combinations, ~720 calls, well under a
 * minute); the attack run in the issue used 10,000 calls in all.
 */
const CALLS = Number(process.env['BULKHEAD_RACE_CALLS'] ?? 40);
const IN_FLIGHT = 4;
const LEAK = /LEAKED_CONTENT|leaked_name|7\.6 KiB/;

const SWAPPER_C = `
#define _GNU_SOURCE
#include <stdio.h>
#include <fcntl.h>
#include <unistd.h>
#include <sys/syscall.h>
#ifndef RENAME_EXCHANGE
#define RENAME_EXCHANGE (1 << 1)
#endif
int main(int argc, char **argv) {
  for (;;) for (int i = 1; i + 1 < argc; i += 2) syscall(SYS_renameat2, AT_FDCWD, argv[i], AT_FDCWD, argv[i + 1], RENAME_EXCHANGE);
}
`;

const SWAPPER_PY = `
import ctypes, os, sys
libc = ctypes.CDLL(None, use_errno=True)
AT_FDCWD = -100
pairs = [(os.fsencode(sys.argv[i]), os.fsencode(sys.argv[i + 1])) for i in range(1, len(sys.argv) - 1, 2)]
while True:
    for a, b in pairs:
        libc.syscall(316, AT_FDCWD, a, AT_FDCWD, b, 2)
`;

/** The swapper as a command: compiled C when gcc is there, else python3 through ctypes (x86_64). */
function swapperCommand(dir: string): string[] {
  try {
    writeFileSync(join(dir, 'swapper.c'), SWAPPER_C);
    execFileSync('gcc', ['-O2', '-o', join(dir, 'swapper'), join(dir, 'swapper.c')], { stdio: 'ignore' });
    return [join(dir, 'swapper')];
  } catch {
    writeFileSync(join(dir, 'swapper.py'), SWAPPER_PY);
    return ['python3', join(dir, 'swapper.py')];
  }
}

interface Variant {
  readonly name: string;
  /** The folder each tool is pointed at. */
  readonly path: string;
}

const VARIANTS: readonly Variant[] = [
  { name: 'the searched folder swapped for a symlink to an outside folder', path: 'a/target' },
  { name: 'a subfolder swapped during the walk', path: 'b' },
  { name: 'a file swapped for a symlink to an outside file', path: 'c' },
  { name: 'the searched file itself swapped for a symlink to an outside file', path: 'c/f.txt' },
];

function callsFor(tool: string, variant: Variant, i: number): { name: string; args: Record<string, unknown> } {
  if (tool === 'grep') {
    const mode = ['content', 'files_with_matches', 'count'][i % 3];
    return { name: 'grep', args: { pattern: 'CANARY', path: variant.path, output_mode: mode } };
  }
  if (tool === 'glob_files') return { name: 'glob_files', args: { pattern: '**/*.txt', path: variant.path } };
  return { name: 'list_files', args: { path: variant.path, depth: 3 } };
}

const canRun = process.platform === 'linux';

describe.skipIf(!canRun)('search tools under a swapping attacker (renameat2 RENAME_EXCHANGE)', () => {
  let outside: TempWorkspace;
  let tools: TempWorkspace;
  let swapper: ChildProcess;
  const servers: Record<string, FsHarness> = {};
  const tally: string[] = [];

  beforeAll(async () => {
    outside = tempWorkspace({ 'dir/leaked_name.txt': 'CANARY LEAKED_CONTENT\n', 'dir/deeper/leaked_name2.txt': 'CANARY LEAKED_CONTENT\n', 'file.txt': `CANARY LEAKED_CONTENT\n${'x'.repeat(7770)}\n` }, 'bulkhead-race-outside-');
    tools = tempWorkspace({}, 'bulkhead-race-tools-');
    const inside = {
      'a/target/inside.txt': 'CANARY inside\n',
      'b/sub/inside.txt': 'CANARY inside\n',
      'b/other.txt': 'CANARY inside\n',
      'c/f.txt': 'CANARY inside\n',
      'c/g.txt': 'CANARY inside\n',
    };
    const harness = await startFs(inside, { policy: { search_engine: 'ripgrep' } });
    servers['ripgrep'] = harness;
    servers['builtin'] = await startFs({}, { ws: harness.ws, policy: { search_engine: 'builtin' } });
    const ws = harness.ws;
    symlinkSync(outside.path('dir'), ws.path('a/evil'));
    symlinkSync(outside.path('dir'), ws.path('b/subx'));
    symlinkSync(outside.path('file.txt'), ws.path('c/fx'));
    // Names that are never in the listing's normal form: the swapped partners live one level apart.
    mkdirSync(ws.path('b/sub/empty'), { recursive: true });
    const command = swapperCommand(tools.root);
    swapper = spawn(command[0]!, [...command.slice(1), ws.path('a/target'), ws.path('a/evil'), ws.path('b/sub'), ws.path('b/subx'), ws.path('c/f.txt'), ws.path('c/fx')], { stdio: 'ignore' });
  });

  afterAll(async () => {
    if (swapper?.pid !== undefined) swapper.kill('SIGKILL');
    await new Promise((resolve) => setTimeout(resolve, 50));
    await servers['builtin']?.close();
    await servers['ripgrep']?.close();
    outside?.cleanup();
    tools?.cleanup();
    if (tally.length > 0) console.log(`race test (${CALLS} calls per row):\n${tally.join('\n')}`);
  });

  for (const engine of ['ripgrep', 'builtin'] as const) {
    for (const tool of ['grep', 'glob_files', 'list_files', ...(engine === 'ripgrep' ? ['read_file'] : [])]) {
      // read_file reads one file (the file swap); glob_files and list_files take folders only.
      const variants = tool === 'read_file' ? [VARIANTS[3]!] : tool === 'grep' ? VARIANTS : VARIANTS.slice(0, 3);
      for (const variant of variants) {
        it(`${tool} (${engine}): ${variant.name} shows nothing from outside`, { timeout: Math.max(180_000, CALLS * 1500) }, async () => {
          const server = servers[engine]!;
          let leaks = 0;
          let refused = 0;
          let answered = 0;
          let sawInside = 0;
          let calls = 0;
          const example: string[] = [];
          let next = 0;
          const worker = async () => {
            // Most calls of a swapped searched folder are refused: calls go on until one got through.
            for (let i = next++; i < CALLS || (sawInside === 0 && i < CALLS * 20); i = next++) {
              const call = tool === 'read_file' ? { name: 'read_file', args: { path: variant.path } } : callsFor(tool, variant, i);
              const result = await server.call(call.name, call.args);
              calls++;
              if (LEAK.test(result.text)) {
                leaks++;
                if (example.length < 1) example.push(result.text.slice(0, 300));
              } else if (result.isError) refused++;
              else answered++;
              if (/inside|f\.txt/.test(result.text)) sawInside++;
            }
          };
          await Promise.all(Array.from({ length: IN_FLIGHT }, worker));
          tally.push(`  ${tool} (${engine}), ${variant.name}: ${calls} calls, ${leaks} leaks, ${refused} refused, ${answered} answered (${sawInside} showing the inside files)`);
          expect(leaks, example.join('\n')).toBe(0);
          expect(answered).toBeGreaterThan(0);
          expect(sawInside).toBeGreaterThan(0);
        });
      }
    }
  }
});
