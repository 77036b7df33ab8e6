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

/** `path` where it starts an absolute path: bench/.work/shell/root/ is no mention of a home folder /root. */
function absolutePath(path: string): RegExp {
  return new RegExp(`(^|[\\s"'(=,:])${path.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}`, 'm');
}

describe('bench results', () => {
  it('hold no absolute path of the checkout, the temporary folder or the home folder', () => {
    const machine = [`${REPO}/`, `${realpathSync(tmpdir())}/`, `${homedir()}/`];
    const found = readdirSync(RESULTS).flatMap((file) => {
      const text = readFileSync(join(RESULTS, file), 'utf8');
      return machine.filter((path) => absolutePath(path).test(text)).map((path) => `${file}: ${path}`);
    });
    expect(found).toEqual([]);
  });

  it('would catch a machine path (the check above can fail)', () => {
    const home = `${homedir()}/`;
    const absolute = absolutePath(home);
    expect(absolute.test(JSON.stringify({ file: `${home}x` }))).toBe(true);
    expect(absolute.test(JSON.stringify({ file: `bench/.work${home}x` }))).toBe(false);
  });

  it('are written with paths relative to the repository', () => {
    expect(withoutMachinePaths(JSON.stringify({ root: `${REPO}/bench/.work/shell/root`, cwd: REPO, tmp: `${tmpdir()}/x`, mount: '/tmp' }))).toBe(
      JSON.stringify({ root: 'bench/.work/shell/root', cwd: '.', tmp: '$TMPDIR/x', mount: '/tmp' }),
    );
    // A sibling whose name starts like the checkout's is not inside it (it may be inside $TMPDIR).
    expect(withoutMachinePaths(`${REPO}-other/x`)).toMatch(new RegExp(`/${basename(REPO)}-other/x$`));
  });
});
