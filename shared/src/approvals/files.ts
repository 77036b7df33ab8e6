import { randomBytes } from 'node:crypto';
import { chmodSync, linkSync, lstatSync, readFileSync, renameSync, statSync, unlinkSync, writeFileSync } from 'node:fs';
import type { z } from 'zod';

/** A temp name beside `file` that no other writer (process or call) picks. */
function tempBeside(file: string): string {
  return `${file}.${process.pid}.${randomBytes(4).toString('hex')}.tmp`;
}

function removeQuietly(file: string): void {
  try {
    unlinkSync(file);
  } catch {
    // Already gone: nothing to undo.
  }
}

/**
 * Creates `file` with `text` only if it does not exist: written to a temp file, then hard-linked
 * into place, so the name appears with its whole content at once and exactly one of any number
 * of concurrent creators (in any process) succeeds. False when the file existed already.
 */
export function createExclusive(file: string, text: string, mode: number): boolean {
  const temp = tempBeside(file);
  writeFileSync(temp, text, { mode, flag: 'wx' });
  try {
    linkSync(temp, file);
    return true;
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'EEXIST') return false;
    throw error;
  } finally {
    removeQuietly(temp);
  }
}

/** Replaces `file` with `text` by temp + rename, so a reader sees the old or the new content, never a mix. */
export function replaceAtomically(file: string, text: string, mode: number): void {
  const temp = tempBeside(file);
  try {
    writeFileSync(temp, text, { mode, flag: 'wx' });
    // The umask may have narrowed the mode asked for at creation.
    chmodSync(temp, mode);
    renameSync(temp, file);
  } catch (error) {
    removeQuietly(temp);
    throw error;
  }
}

/**
 * `file` parsed as JSON and validated; undefined when it is missing, not a regular file (a
 * symbolic link planted in the folder is not followed), not JSON or not of the schema.
 */
export function readJsonFile<S extends z.ZodType>(file: string, schema: S): z.output<S> | undefined {
  try {
    if (!lstatSync(file).isFile()) return undefined;
    const parsed = schema.safeParse(JSON.parse(readFileSync(file, 'utf8')));
    return parsed.success ? parsed.data : undefined;
  } catch {
    return undefined;
  }
}

/** Whether `file` exists as itself (a symbolic link counts too: it is never followed). */
export function exists(file: string): boolean {
  try {
    lstatSync(file);
    return true;
  } catch {
    return false;
  }
}

export { removeQuietly };

const LOCK_WAIT_MS = 5_000;
/** A lock this old was left by a process that died (the work it guards takes milliseconds). */
const LOCK_STALE_MS = 15_000;
const LOCK_RETRY_MS = 20;

function sleep(ms: number): void {
  Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, ms);
}

/**
 * Runs `work` holding the file `lock` (created exclusively, so one holder at a time across
 * processes); throws `busy()` when another holder keeps it past a few seconds. A lock left by a
 * process that died is taken over.
 */
export function withLock<T>(lock: string, busy: () => Error, work: () => T): T {
  const deadline = Date.now() + LOCK_WAIT_MS;
  while (!createExclusive(lock, `${process.pid}\n`, 0o600)) {
    try {
      if (Date.now() - statSync(lock).mtimeMs > LOCK_STALE_MS) unlinkSync(lock);
    } catch {
      // Released meanwhile: try again at once.
      continue;
    }
    if (Date.now() > deadline) throw busy();
    sleep(LOCK_RETRY_MS);
  }
  try {
    return work();
  } finally {
    removeQuietly(lock);
  }
}
