import { mkdtemp, readdir, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { checkRevision, processAlive, GitRepository, gitEnvironment, HARDENED_GIT_OPTIONS, runGitProcess, ToolError, type Roots } from '@bulkhead/core';

/** A throwaway checkout: a clone that shares the repository's objects, at one commit, detached. */
export interface Checkout {
  /** The checkout's top folder, outside the roots. */
  readonly dir: string;
  /** The commit checked out. */
  readonly commit: string;
  readonly shownAs: string;
  remove(): Promise<void>;
}

export interface CheckoutMaker {
  make(rev: string, signal: AbortSignal): Promise<Checkout>;
}

const CHECKOUT_TIMEOUT_MS = 120_000;
/** Checkouts are named after the server's pid, so one whose server died (never reaching its clean-up) can be told apart. */
const CHECKOUT_PREFIX = 'bulkhead-checkout-';

/** Removes the checkouts left by servers that are gone (killed mid-command). */
async function sweepCheckoutsOfGoneServers(): Promise<void> {
  const names = await readdir(tmpdir()).catch(() => [] as string[]);
  for (const name of names) {
    const owner = new RegExp(`^${CHECKOUT_PREFIX}(\\d+)-`).exec(name)?.[1];
    if (owner !== undefined && !processAlive(Number(owner))) await rm(join(tmpdir(), name), { recursive: true, force: true });
  }
}

/**
 * Makes checkouts of the repository holding the first root. `git clone --shared` reads the
 * repository and writes nothing into it (no worktree bookkeeping in its .git): the clone's objects
 * come from the original through an alternates file, and its config is git's fresh one, so no
 * filter or hook the original's config names runs on checkout.
 */
export function checkoutMaker(paths: Roots): CheckoutMaker {
  let swept = false;
  return {
    async make(rev, signal) {
      if (!swept) {
        swept = true;
        await sweepCheckoutsOfGoneServers();
      }
      const repo = await GitRepository.open(paths, undefined, { timeoutMs: CHECKOUT_TIMEOUT_MS, maxOutputBytes: 1024 * 1024 });
      const resolved = await repo.run(['rev-parse', '--verify', '--quiet', '--end-of-options', `${checkRevision(rev, 'rev')}^{commit}`], { okExitCodes: [1], signal });
      const commit = resolved.stdout.toString('utf8').trim();
      if (resolved.exitCode !== 0 || !/^[0-9a-f]{40,64}$/.test(commit)) throw new ToolError(`rev ${rev} names no commit in ${repo.shownAs}`, 'bad_revision');
      const parent = await mkdtemp(join(tmpdir(), `${CHECKOUT_PREFIX}${process.pid}-`));
      const dir = join(parent, 'repo');
      const remove = () => rm(parent, { recursive: true, force: true });
      try {
        await git(parent, ['-c', 'protocol.file.allow=always', 'clone', '--shared', '--no-checkout', '--quiet', '--', repo.layout.commonDir, dir], signal, { GIT_ALLOW_PROTOCOL: 'file' });
        await git(dir, ['checkout', '--detach', '--quiet', commit], signal);
      } catch (error) {
        await remove();
        throw error;
      }
      return { dir, commit, shownAs: repo.shownAs, remove };
    },
  };
}

async function git(cwd: string, argv: readonly string[], signal: AbortSignal, env: Readonly<Record<string, string>> = {}): Promise<void> {
  const result = await runGitProcess({ cwd, argv: [...HARDENED_GIT_OPTIONS, ...argv], env: gitEnvironment(env), timeoutMs: CHECKOUT_TIMEOUT_MS, maxOutputBytes: 1024 * 1024, signal });
  if (result.exitCode !== 0) throw new ToolError(`making the throwaway checkout failed: ${result.stderr.trim().split('\n')[0] || `git exit code ${result.exitCode}`}`, 'checkout_failed');
}
