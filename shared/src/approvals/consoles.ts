import { mkdirSync, readdirSync, unlinkSync } from 'node:fs';
import { join } from 'node:path';
import { z } from 'zod';
import { processAlive } from '../processes.js';
import { readJsonFile, replaceAtomically } from './files.js';

/** The console's own secret: one per control-plane folder, beside the bearer tokens (no tool can read `keys/`). */
export function consoleSecretFile(controlDir: string): string {
  return join(controlDir, 'keys', 'console.secret');
}

function registryFolder(controlDir: string): string {
  return join(controlDir, 'keys', 'consoles');
}

const runningConsoleSchema = z.object({
  pid: z.number().int().positive(),
  /** The console's address, without its secret (`http://127.0.0.1:43123/console/`). */
  url: z.string().url(),
  started: z.string(),
  /** Its own base path, where a logged-in browser works (`/console/<random>/`): never shown beyond the user's terminal and browser. */
  path: z.string().regex(/^\/[A-Za-z0-9_/-]*\/$/),
  /** What serves it (`bulkhead gateway`, `bulkhead console`). */
  server: z.string(),
});
export type RunningConsole = z.output<typeof runningConsoleSchema>;

/** Records a console this process serves, so `bulkhead console` and the gate's replies find it; the returned function removes it. */
export function registerConsole(controlDir: string, entry: Omit<RunningConsole, 'pid' | 'started'>): () => void {
  const folder = registryFolder(controlDir);
  mkdirSync(folder, { recursive: true, mode: 0o700 });
  const file = join(folder, `${process.pid}.json`);
  const record: RunningConsole = { pid: process.pid, started: new Date().toISOString(), ...entry };
  replaceAtomically(file, `${JSON.stringify(record)}\n`, 0o600);
  return () => {
    try {
      unlinkSync(file);
    } catch {
      // Gone already: nothing to undo.
    }
  };
}

/** The consoles of live processes for this control-plane folder, newest first; records of dead ones are removed. */
export function runningConsoles(controlDir: string): RunningConsole[] {
  const folder = registryFolder(controlDir);
  let names: string[];
  try {
    names = readdirSync(folder).filter((name) => /^\d+\.json$/.test(name));
  } catch {
    return [];
  }
  const found: RunningConsole[] = [];
  for (const name of names) {
    const file = join(folder, name);
    const record = readJsonFile(file, runningConsoleSchema);
    if (!record) continue;
    if (processAlive(record.pid)) found.push(record);
    else {
      try {
        unlinkSync(file);
      } catch {
        // Another reader removed it first.
      }
    }
  }
  return found.sort((a, b) => (a.started < b.started ? 1 : -1));
}
