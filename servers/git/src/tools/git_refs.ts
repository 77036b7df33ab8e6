import { z } from 'zod';
import { decodeGitName, defineTool, NEWLINE, READ_ONLY_LOCAL, structuredReply, TokenReader } from '@bulkhead/core';
import type { GitCapabilities } from '../context.js';
import { cutText } from '../lib/commits.js';
import { repoField } from '../lib/fields.js';

const NAMESPACES = { branches: ['refs/heads'], tags: ['refs/tags'], all: ['refs/heads', 'refs/remotes', 'refs/tags'] } as const;
const FIELDS = ['%(refname)', '%(objectname)', '%(*objectname)', '%(HEAD)', '%(upstream:short)', '%(upstream:track)', '%(creatordate:iso-strict)', '%(contents:subject)'];
const MAX_RECORD_BYTES = 16 * 1024;

const input = z.strictObject({
  repo: repoField,
  kind: z.enum(['branches', 'tags', 'all']).optional().describe('branches (default), tags, or all (branches, remote-tracking branches and tags)'),
});

const refSchema = z.object({
  name: z.string().describe('Short name: main, origin/main, v1.0'),
  kind: z.enum(['branch', 'remote', 'tag']),
  commit: z.string().describe('The commit it points at (an annotated tag is followed to its commit)'),
  current: z.boolean().describe('The checked-out branch'),
  upstream: z.string().optional().describe('The upstream of a branch'),
  track: z.string().optional().describe('How it stands against its upstream: [ahead 1, behind 2], [gone]'),
  date: z.string().describe('When the commit (or the annotated tag) was made, ISO 8601'),
  subject: z.string().describe('First line of its message'),
});

const output = z.object({
  head: z.object({
    branch: z.string().nullable().describe('The checked-out branch; null when HEAD is detached'),
    commit: z.string().nullable().describe('The commit HEAD is at; null before the first commit'),
  }),
  refs: z.array(refSchema).describe('Newest first'),
  truncated: z.boolean().describe('More refs exist than were listed (limits.refs_max)'),
});

type Ref = z.output<typeof refSchema>;

function kindOf(full: string): Ref['kind'] {
  return full.startsWith('refs/tags/') ? 'tag' : full.startsWith('refs/remotes/') ? 'remote' : 'branch';
}

export const gitRefs = defineTool<GitCapabilities, typeof input, typeof output>({
  name: 'git_refs',
  title: 'Branches and tags',
  description:
    'The branches (default), tags, or all refs including remote-tracking branches, newest first: name, commit, the current branch, upstream and ahead/behind, date and subject; plus where HEAD is. At most 500 refs, with a note when there are more.',
  input,
  output,
  annotations: READ_ONLY_LOCAL,
  risk: 'low',
  async run(args, ctx) {
    const repository = await ctx.openRepository(args.repo);
    const max = ctx.limits.refs_max;
    const refs: Ref[] = [];
    const reader = new TokenReader({
      delimiter: NEWLINE,
      maxTokenBytes: MAX_RECORD_BYTES,
      onToken: (record) => {
        const [full, commit, peeled, head, upstream, track, date, subject] = record.toString('latin1').split('\0');
        const name = decodeGitName(Buffer.from(full!, 'latin1'));
        refs.push({
          name: name.replace(/^refs\/(heads|remotes|tags)\//, ''),
          kind: kindOf(name),
          commit: peeled || commit!,
          current: head === '*',
          ...(upstream ? { upstream: decodeGitName(Buffer.from(upstream, 'latin1')) } : {}),
          ...(track ? { track } : {}),
          date: date ?? '',
          subject: cutText(Buffer.from(subject ?? '', 'latin1').toString('utf8'), ctx.limits.line_max_chars, 0, 'subject'),
        });
        return refs.length > max ? 'stop' : undefined;
      },
    });
    const [state] = await Promise.all([
      repository.headState(ctx.signal),
      repository.run(['for-each-ref', `--format=${FIELDS.join('%00')}`, '--sort=-creatordate', `--count=${max + 1}`, '--end-of-options', ...NAMESPACES[args.kind ?? 'branches']], {
        signal: ctx.signal,
        onStdout: (chunk) => (reader.push(chunk) ? undefined : 'stop'),
      }),
    ]);
    reader.end();
    const truncated = refs.length > max;
    const listed = refs.slice(0, max);
    const where = state.branch === undefined ? `HEAD detached at ${state.oid?.slice(0, 12)}` : `HEAD: ${state.branch}${state.oid === undefined ? ' (no commits yet)' : ` at ${state.oid.slice(0, 12)}`}`;
    const lines = [where, ...listed.map((r) => `${r.current ? '*' : ' '} ${r.kind.padEnd(6)} ${r.name} ${r.commit.slice(0, 12)} ${r.date.slice(0, 10)}${r.upstream ? ` [${r.upstream}${r.track ? ` ${r.track.replace(/^\[|\]$/g, '')}` : ''}]` : ''} ${r.subject}`)];
    if (listed.length === 0) lines.push(`No ${args.kind === 'tags' ? 'tags' : args.kind === 'all' ? 'refs' : 'branches'}.`);
    if (truncated) lines.push(`[the newest ${max} are listed (limits.refs_max); there are more]`);
    return structuredReply(lines.join('\n'), { head: { branch: state.branch ?? null, commit: state.oid ?? null }, refs: listed, truncated });
  },
});
