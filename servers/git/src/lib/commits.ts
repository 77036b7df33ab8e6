import { z } from 'zod';
import { NUL, TokenReader } from '@bulkhead/core';

/** The fields of one commit, NUL-separated; `-z` ends each commit with a NUL as well. */
const FIELDS = ['%H', '%P', '%an', '%ae', '%aI', '%s', '%b'] as const;
export const COMMIT_FORMAT = `--format=${FIELDS.join('%x00')}`;

export const commitSchema = z.object({
  hash: z.string().describe('Full commit id'),
  parents: z.array(z.string()).describe('Parent commit ids (two or more for a merge, none for a root commit)'),
  author: z.string().describe('Author name'),
  email: z.string().describe('Author email'),
  date: z.string().describe('Author date, ISO 8601 with offset'),
  subject: z.string().describe('First line of the message'),
  body: z.string().describe('The rest of the message (cut with a marker past limits.body_max_chars)'),
});

export type Commit = z.output<typeof commitSchema>;

/** Cuts text to `maxChars` with a marker saying how much more there was (bytes, when the reader already dropped some unread). */
export function cutText(text: string, maxChars: number, droppedBytes: number, what: string): string {
  if (text.length <= maxChars && droppedBytes === 0) return text;
  const kept = text.slice(0, maxChars);
  const more = text.length - kept.length + droppedBytes;
  return `${kept}… [${what} truncated: ${more} more ${droppedBytes > 0 ? 'bytes' : 'characters'}]`;
}

/**
 * Reads commits in COMMIT_FORMAT from a git stream; each field is held only up to its cap, so a
 * commit with a huge message costs no memory. Stops once `maxCommits` were read.
 */
export class CommitReader {
  readonly commits: Commit[] = [];
  private fields: { text: string; dropped: number }[] = [];
  private readonly reader: TokenReader;

  constructor(
    private readonly maxCommits: number,
    private readonly bodyMaxChars: number,
  ) {
    this.reader = new TokenReader({ delimiter: NUL, maxTokenBytes: bodyMaxChars * 4, onToken: (token, dropped) => this.field(token, dropped) });
  }

  /** Feeds git's stdout; 'stop' once enough commits were read. */
  push(chunk: Buffer): 'stop' | undefined {
    return this.reader.push(chunk) ? undefined : 'stop';
  }

  private field(token: Buffer, dropped: number): 'stop' | undefined {
    this.fields.push({ text: token.toString('utf8'), dropped });
    if (this.fields.length < FIELDS.length) return undefined;
    const [hash, parents, author, email, date, subject, body] = this.fields;
    this.fields = [];
    this.commits.push({
      hash: hash!.text,
      parents: parents!.text === '' ? [] : parents!.text.split(' '),
      author: author!.text,
      email: email!.text,
      date: date!.text,
      subject: cutText(subject!.text, this.bodyMaxChars, subject!.dropped, 'subject'),
      body: cutText(body!.text.replace(/\n+$/, ''), this.bodyMaxChars, body!.dropped, 'message'),
    });
    return this.commits.length >= this.maxCommits ? 'stop' : undefined;
  }
}

/** A commit as git_log and git_show print it: id, date and author on one line, the message indented. */
export function renderCommit(commit: Commit): string {
  const merge = commit.parents.length > 1 ? ` (merge of ${commit.parents.map((p) => p.slice(0, 12)).join(', ')})` : '';
  const message = [commit.subject, ...(commit.body ? ['', commit.body] : [])].join('\n');
  return `${commit.hash} ${commit.date} ${commit.author} <${commit.email}>${merge}\n${message.replace(/^/gm, '    ')}`;
}
