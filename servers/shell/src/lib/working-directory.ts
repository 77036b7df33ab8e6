import { stat } from 'node:fs/promises';
import { ToolError, type Roots } from '@bulkhead/core';

/** The folder a command runs in: the given one confined to the roots (it must exist), else the first root. */
export async function workingDirectory(paths: Roots, cwd: string | undefined): Promise<string> {
  if (cwd === undefined) return paths.primary;
  const confined = await paths.confine(cwd, 'read');
  const info = await stat(confined).catch(() => undefined);
  if (info === undefined) throw new ToolError(`cwd ${cwd} does not exist`, 'not_found');
  if (!info.isDirectory()) throw new ToolError(`cwd ${cwd} is not a folder`, 'not_a_directory');
  return confined;
}
