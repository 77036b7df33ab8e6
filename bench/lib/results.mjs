// Results files are committed, so they must not hold paths of the machine the bench ran on: paths
// in the checkout become relative to the repository, temporary and home folders become $TMPDIR
// and ~. Every bench writes its .md and .json through writeResult.
import { realpathSync, writeFileSync } from 'node:fs';
import { homedir, tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const REPO = join(dirname(fileURLToPath(import.meta.url)), '..', '..');

function variants(path) {
  const out = new Set([path]);
  try {
    out.add(realpathSync(path));
  } catch {
    // missing: only the given spelling
  }
  return [...out].filter((p) => p.length > 1).sort((a, b) => b.length - a.length);
}

const escape = (text) => text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');

/**
 * `text` with paths inside the repository made relative to it (the repository itself is `.`) and
 * paths inside the temporary and home folders starting with $TMPDIR/ and ~/. A bare /tmp or
 * /root stays: in the results it is a literal (a sandbox's mount point), not where the bench ran.
 */
export function withoutMachinePaths(text) {
  let out = text;
  for (const path of variants(REPO)) out = out.replace(new RegExp(`(?<![\\w.~$/-])${escape(path)}(/|(?![\\w.-]))`, 'g'), (_, slash) => (slash ? '' : '.'));
  for (const [base, name] of [[tmpdir(), '$TMPDIR'], [homedir(), '~']]) {
    for (const path of variants(base)) out = out.replace(new RegExp(`(?<![\\w.~$/-])${escape(path)}/`, 'g'), () => `${name}/`);
  }
  return out;
}

export function writeResult(file, text) {
  writeFileSync(file, withoutMachinePaths(text));
}
