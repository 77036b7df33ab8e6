import { z } from 'zod';
import { actorField, checkSelf, defineLadderTool, repoField, repoOf, WRITES_LOCAL } from '../context.js';
import { BODY_MAX_CHARS, MAX_RUNGS_PER_WRITE, SUMMARY_MAX_CHARS } from '../ladder/ladder.js';
import { RUNG_KINDS } from '../ladder/rung-paths.js';
import type { Rung } from '../store/rungs.js';

const rung = z.strictObject({
  path: z.string().min(1).max(4096).describe('_repo, a directory (src), a file (src/index.js), _release/<tag> or _changeset/<id>'),
  kind: z.enum(RUNG_KINDS).describe('What the path is'),
  commit: z.string().min(1).max(1024).describe('The commit the summary describes (hash, branch, tag or HEAD); the path must exist there'),
  summary: z.string().min(1).max(SUMMARY_MAX_CHARS).describe('A short summary'),
  body: z.string().max(BODY_MAX_CHARS).optional().describe('The longer text'),
  expected_revision: z.number().int().min(0).optional().describe('The revision you read (0 for a rung not written yet); the write fails if someone wrote since'),
});

const input = z.strictObject({
  repo: repoField,
  actor: actorField,
  rungs: z.array(rung).min(1).max(MAX_RUNGS_PER_WRITE).describe('Written all or none'),
});

const output = z.object({ rungs: z.array(z.custom<Rung>()).describe('The rungs as stored: {repo, path, kind, commit, objectId, summary, body, revision, author, writtenAt}') });

export const ladderWriteRung = defineLadderTool({
  name: 'ladder_write_rung',
  title: 'Write rungs',
  description:
    'Writes summaries of paths anchored to commits, all or none. Each commit must exist and the path must exist there; give expected_revision (from ladder_read, 0 for a new rung) so a concurrent write fails instead of being overwritten. Earlier revisions are kept.',
  input,
  output,
  annotations: WRITES_LOCAL,
  risk: 'medium',
  async call(deps, principal, args, signal) {
    checkSelf(principal, args.actor, 'actor');
    const repository = await deps.openRepository(repoOf(deps, args.repo), signal);
    return { rungs: await deps.ladder.writeRungs(repository, args.rungs, principal) };
  },
  render({ rungs }) {
    return rungs.map((written) => `wrote ${written.repo} ${written.path} revision ${written.revision} at ${written.commit.slice(0, 12)}`).join('\n');
  },
});
