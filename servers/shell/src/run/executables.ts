import { accessSync, constants } from 'node:fs';
import { delimiter, join } from 'node:path';

/** The first executable `name` on searchPath, or null. */
export function findExecutable(name: string, searchPath: string | undefined): string | null {
  for (const folder of (searchPath ?? '').split(delimiter)) {
    if (folder === '') continue;
    const candidate = join(folder, name);
    try {
      accessSync(candidate, constants.X_OK);
      return candidate;
    } catch {
      // Not here.
    }
  }
  return null;
}

let bash: string | undefined;

/** bash from the server's PATH (found once), else /bin/bash. */
export function bashPath(): string {
  bash ??= findExecutable('bash', process.env['PATH']) ?? '/bin/bash';
  return bash;
}

/** Arguments that make bash run `command` without reading any profile or rc file. */
export function bashArgs(command: string): string[] {
  return ['--noprofile', '--norc', '-c', command];
}
