import { accessSync, constants } from 'node:fs';
import { rgPath } from '@vscode/ripgrep';
import { builtinEngine } from './builtin.js';
import { ripgrepEngine } from './ripgrep.js';
import type { SearchEngine } from './search-types.js';

export type { SearchEngine } from './search-types.js';

function ripgrepRuns(path: string): boolean {
  try {
    accessSync(path, constants.X_OK);
    return true;
  } catch {
    return false;
  }
}

/** ripgrep when its binary is there (or when forced), else the built-in engine. */
export function chooseSearchEngine(preference: 'auto' | 'ripgrep' | 'builtin'): SearchEngine {
  if (preference === 'builtin') return builtinEngine();
  if (preference === 'ripgrep' || ripgrepRuns(rgPath)) return ripgrepEngine(rgPath);
  return builtinEngine();
}
