import { mkdirSync, mkdtempSync, realpathSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';

export interface TempWorkspace {
  /** Real path of a fresh folder. */
  readonly root: string;
  path(relative: string): string;
  write(relative: string, content: string | Uint8Array): string;
  mkdir(relative: string): string;
  cleanup(): void;
}

/** A fresh folder under the system temp dir, filled with `files` (relative path → content). */
export function tempWorkspace(files: Record<string, string | Uint8Array> = {}, prefix = 'bulkhead-'): TempWorkspace {
  const root = realpathSync(mkdtempSync(join(tmpdir(), prefix)));
  const workspace: TempWorkspace = {
    root,
    path: (relative) => join(root, relative),
    write: (relative, content) => {
      const file = join(root, relative);
      mkdirSync(dirname(file), { recursive: true });
      writeFileSync(file, content);
      return file;
    },
    mkdir: (relative) => {
      const folder = join(root, relative);
      mkdirSync(folder, { recursive: true });
      return folder;
    },
    cleanup: () => rmSync(root, { recursive: true, force: true }),
  };
  for (const [relative, content] of Object.entries(files)) workspace.write(relative, content);
  return workspace;
}
