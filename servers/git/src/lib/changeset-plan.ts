import { decodeGitName, refuseOptionLike, repositoryPath, ToolError, type PathGlobSet } from '@bulkhead/core';

/** One change as the model gives it: the full new content, or a deletion. */
export type FileChangeInput = { readonly path: string; readonly content: string } | { readonly path: string; readonly delete: true };

export interface PlannedChange {
  /** The path as git stores it. */
  readonly path: Buffer;
  /** The path as shown to the model. */
  readonly shown: string;
  /** The new content; undefined for a deletion. */
  readonly content: Buffer | undefined;
}

export interface ChangesetLimits {
  readonly maxFiles: number;
  readonly maxFileBytes: number;
  readonly maxTotalBytes: number;
}

/**
 * `.git` as git's verify_path refuses it: any letter case, and the forms Windows treats as the same
 * name (trailing dots and spaces, the short name GIT~1, a stream after `:`). Git drops such a path
 * from the index with no error, so it is refused here, where the model gets a clear answer.
 */
const GIT_DIR_NAME = /^(?:\.git|git~1)[. ]*(?::.*)?$/i;
/** Code points HFS+ ignores in names (git's utf8.c, next_hfs_char): `.g\u200cit` is `.git` on macOS. */
const HFS_IGNORED = /[\u200c-\u200f\u202a-\u202e\u206a-\u206f\ufeff]/g;

/** The folders above a repository path: `a/b/c` → `a`, `a/b`. */
export function ancestorsOf(path: string): string[] {
  const parts = path.split('/');
  return parts.slice(1).map((_, i) => parts.slice(0, i + 1).join('/'));
}

/**
 * Checks the changes before git runs: paths inside the repository, none under `.git`, none in the
 * protected set, none twice, none a folder of another, sizes within the limits.
 */
export function planChanges(
  files: readonly FileChangeInput[],
  limits: ChangesetLimits,
  isProtected: (shown: string, argument: string) => void,
): PlannedChange[] {
  if (files.length > limits.maxFiles) throw new ToolError(`files has ${files.length} entries; the limit is ${limits.maxFiles} (limits.changeset_max_files)`, 'too_large');
  const planned: PlannedChange[] = [];
  const seen = new Map<string, string>();
  let total = 0;
  for (const [i, file] of files.entries()) {
    const argument = `files[${i}].path`;
    const path = repositoryPath(file.path, argument);
    const shown = decodeGitName(path);
    if (path.length === 0) throw new ToolError(`${argument} names the whole tree; give a file path`, 'bad_argument');
    if (shown.split('/').some((part) => GIT_DIR_NAME.test(part.replace(HFS_IGNORED, '')))) {
      throw new ToolError(`${argument} ${JSON.stringify(shown)} is inside .git, git's own folder; commits never hold it`, 'protected');
    }
    isProtected(shown, argument);
    const key = path.toString('latin1');
    if (seen.has(key)) throw new ToolError(`${argument} ${JSON.stringify(shown)} is also ${seen.get(key)}; give each path once`, 'bad_argument');
    seen.set(key, argument);
    const content = 'content' in file ? Buffer.from(file.content, 'utf8') : undefined;
    if (content && content.length > limits.maxFileBytes) {
      throw new ToolError(`files[${i}].content is ${content.length} bytes; the limit is ${limits.maxFileBytes} (limits.changeset_max_file_bytes)`, 'too_large');
    }
    total += content?.length ?? 0;
    if (total > limits.maxTotalBytes) throw new ToolError(`the contents add up to more than ${limits.maxTotalBytes} bytes (limits.changeset_max_total_bytes)`, 'too_large');
    planned.push({ path, shown, content });
  }
  const written = new Set(planned.filter((change) => change.content).map((change) => change.path.toString('latin1')));
  for (const change of planned) {
    const folder = ancestorsOf(change.path.toString('latin1')).find((ancestor) => written.has(ancestor));
    if (change.content && folder !== undefined) {
      throw new ToolError(`${change.shown} would be inside ${decodeGitName(Buffer.from(folder, 'latin1'))}, which this changeset writes as a file`, 'bad_argument');
    }
  }
  return planned;
}

/** The `Name <email>` of an author, checked: it goes into the commit header as it is. */
export function parseAuthor(author: string): { name: string; email: string } {
  refuseOptionLike(author, 'author');
  const match = /^\s*([^<>\0-\x1f]+?)\s*<([^<>\0-\x1f]*)>\s*$/.exec(author);
  if (!match) throw new ToolError(`author ${JSON.stringify(author)} is not "Name <email>" (one line, no other angle brackets)`, 'bad_argument');
  return { name: match[1]!, email: match[2]! };
}

/** Refuses a path the protected set holds, by its path in the repository. */
export function protectedPathCheck(globs: PathGlobSet): (shown: string, argument: string) => void {
  return (shown, argument) => {
    const glob = globs.match(shown);
    if (glob) throw new ToolError(`${argument} ${JSON.stringify(shown)} is in the protected set (\`${glob}\`); commit_changeset never writes there. Nothing was written.`, 'protected');
  };
}
