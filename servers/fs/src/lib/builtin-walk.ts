import { readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import fg from 'fast-glob';
import ignore, { type Ignore } from 'ignore';
import { PathGlobSet } from '@bulkhead/core/globs';

export interface WalkOptions {
  readonly cwd: string;
  readonly pattern: string | string[];
  readonly hidden: boolean;
  readonly respectGitignore: boolean;
  readonly denyRead: readonly string[];
}

function gitignoreFilter(cwd: string): (relative: string) => boolean {
  const files = fg.sync('**/.gitignore', { cwd, dot: true, ignore: ['**/.git/**', '**/node_modules/**'], followSymbolicLinks: false });
  const rules = new Map<string, Ignore>();
  for (const file of files) {
    try {
      rules.set(dirname(file) === '.' ? '' : dirname(file), ignore().add(readFileSync(join(cwd, file), 'utf8')));
    } catch {
      // unreadable .gitignore: its rules are skipped, as git would
    }
  }
  return (relative) => {
    for (const [folder, rule] of rules) {
      if (folder === '') {
        if (rule.ignores(relative)) return false;
      } else if (relative.startsWith(`${folder}/`) && rule.ignores(relative.slice(folder.length + 1))) return false;
    }
    return true;
  };
}

/**
 * The file walk used when ripgrep is unavailable: fast-glob for matching, .gitignore files at
 * every level, no symlink following, secrets skipped.
 */
export function walkFiles(options: WalkOptions): string[] {
  const found = fg.sync(options.pattern, {
    cwd: options.cwd,
    dot: options.hidden,
    onlyFiles: true,
    followSymbolicLinks: false,
    ignore: ['**/.git/**'],
    suppressErrors: true,
  });
  const deny = new PathGlobSet(options.denyRead);
  const kept = options.respectGitignore ? gitignoreFilter(options.cwd) : () => true;
  return found.filter((relative) => deny.match(relative) === undefined && kept(relative));
}
