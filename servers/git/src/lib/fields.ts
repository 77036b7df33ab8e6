import { z } from 'zod';

/** The `repo` argument every tool takes. */
export const repoField = z
  .string()
  .max(4096)
  .optional()
  .describe('The repository: a folder inside the roots, relative to the first root or absolute (default: the first root); its .git may be in a folder above');

/** A path inside a repository, as every tool takes it. */
export const repoPathDescription =
  'relative to the repository\'s top folder; a name that is not UTF-8 is written as git tools show it, with \\xNN for each such byte';
