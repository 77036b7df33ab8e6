import { z } from 'zod';

/** The `repo` argument every tool takes. */
export const repoField = z
  .string()
  .optional()
  .describe('The repository: a folder inside the roots, relative to the first root or absolute (default: the first root); its .git may be in a folder above');

/** A path inside a repository, as every tool takes it. */
export const repoPathDescription =
  'relative to the repository\'s top folder; a name that is not UTF-8 is written as git tools show it, with \\xNN for each such byte';

/**
 * A file name as the text of a reply shows it. One with a control character is put in double
 * quotes with escapes (`"new\nline.txt"`), as git quotes names: a raw newline in a name from a
 * hostile repository would otherwise forge lines of the reply (a fake "Staged" section). The
 * structured result keeps the name as it is.
 */
export function textName(name: string): string {
  return /[\x00-\x1f\x7f]/.test(name) ? JSON.stringify(name) : name;
}
