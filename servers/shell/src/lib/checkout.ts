import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { checkRevision, GitRepository, gitEnvironment, HARDENED_GIT_OPTIONS, runGitProcess, ToolError, type Roots } from '@bulkhead/core';

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

/**
 * Makes checkouts of the repository holding the first root. `git clone --shared` reads the
 * repository and writes nothing into it (no worktree bookkeeping in its .git): the clone's objects
 * come from the original through an alternates file, and its config is git's fresh one, so no
 * filter or hook the original's config names runs on checkout.
 */
export function checkoutMaker(paths: Roots): CheckoutMaker {
  return {
    async make(rev, signal) {
      const repo = await GitRepository.open(paths, undefined, { timeoutMs: CHECKOUT_TIMEOUT_MS, maxOutputBytes: 1024 * 1024 });
      const resolved = await repo.run(['rev-parse', '--verify', '--quiet', '--end-of-options', `${checkRevision(rev, 'rev')}^{commit}`], { okExitCodes: [1], signal });
      const commit = resolved.stdout.toString('utf8').trim();
      if (resolved.exitCode !== 0 || !/^[0-9a-f]{40,64}$/.test(commit)) throw new ToolError(`rev ${rev} names no commit in ${repo.shownAs}`, 'bad_revision');
      const parent = await mkdtemp(join(tmpdir(), 'bulkhead-checkout-'));
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
