// Committed benchmark results hold no paths of the machine they ran on: the benches write them
// through bench/lib/results.mjs, which makes paths relative to the repository.
import { readdirSync, readFileSync, realpathSync } from 'node:fs';
import { homedir, tmpdir } from 'node:os';
import { basename, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { withoutMachinePaths } from '../bench/lib/results.mjs';

const REPO = realpathSync(fileURLToPath(new URL('..', import.meta.url)));
const RESULTS = join(REPO, 'bench', 'results');

describe('bench results', () => {
  it('hold no absolute path of the checkout, the temporary folder or the home folder', () => {
    const machine = [`${REPO}/`, `${realpathSync(tmpdir())}/`, `${homedir()}/`];
    const found = readdirSync(RESULTS).flatMap((file) => {
      const text = readFileSync(join(RESULTS, file), 'utf8');
      return machine.filter((path) => text.includes(path)).map((path) => `${file}: ${path}`);
    });
    expect(found).toEqual([]);
  });

  it('are written with paths relative to the repository', () => {
    expect(withoutMachinePaths(JSON.stringify({ root: `${REPO}/bench/.work/shell/root`, cwd: REPO, tmp: `${tmpdir()}/x`, mount: '/tmp' }))).toBe(
      JSON.stringify({ root: 'bench/.work/shell/root', cwd: '.', tmp: '$TMPDIR/x', mount: '/tmp' }),
    );
    // A sibling whose name starts like the checkout's is not inside it (it may be inside $TMPDIR).
    expect(withoutMachinePaths(`${REPO}-other/x`)).toMatch(new RegExp(`/${basename(REPO)}-other/x$`));
  });
});
