import { z } from 'zod';
import { NEWLINE, TokenReader } from '@bulkhead/core';
import { cutText } from './commits.js';

export const blameLineSchema = z.object({
  line: z.number().int().describe('Line number in the file at rev'),
  commit: z.string().describe('The commit that last changed the line'),
  original_line: z.number().int().describe('Its line number in that commit'),
  text: z.string().describe('The line (cut with a marker when long)'),
});

export const blameCommitSchema = z.object({
  hash: z.string(),
  author: z.string(),
  email: z.string(),
  date: z.string().describe('Author date, ISO 8601 with offset'),
  summary: z.string().describe('First line of the message'),
});

export type BlameLine = z.output<typeof blameLineSchema>;
export type BlameCommit = z.output<typeof blameCommitSchema>;

/** Seconds since the epoch and a `+0200` zone as ISO 8601 in that zone. */
export function isoDate(epochSeconds: number, zone: string): string {
  const match = /^([+-])(\d\d)(\d\d)$/.exec(zone);
  const offsetMinutes = match ? (match[1] === '-' ? -1 : 1) * (Number(match[2]) * 60 + Number(match[3])) : 0;
  const local = new Date((epochSeconds + offsetMinutes * 60) * 1000).toISOString().slice(0, 19);
  return `${local}${match ? `${match[1]}${match[2]}:${match[3]}` : 'Z'}`;
}

const LINE_HEADER = /^([0-9a-f]{40,64}) (\d+) (\d+)/;

/**
 * Reads `git blame --porcelain`: each line comes as `<commit> <original> <final>`, the commit's
 * details the first time it appears, then the line's text after a tab.
 */
export class BlameReader {
  readonly lines: BlameLine[] = [];
  readonly commits = new Map<string, BlameCommit>();
  private current: { commit: string; original: number; final: number } | undefined;
  /** author-time comes just before author-tz, which it needs. */
  private authorTime = 0;
  readonly reader: TokenReader;

  constructor(private readonly lineMaxChars: number) {
    this.reader = new TokenReader({ delimiter: NEWLINE, maxTokenBytes: lineMaxChars * 4, onToken: (token, dropped) => this.token(token, dropped) });
  }

  private token(token: Buffer, dropped: number): undefined {
    if (token[0] === 0x09) {
      if (this.current) {
        const text = cutText(token.subarray(1).toString('utf8'), this.lineMaxChars, dropped, 'line');
        this.lines.push({ line: this.current.final, commit: this.current.commit, original_line: this.current.original, text });
      }
      return undefined;
    }
    const text = token.toString('utf8');
    const header = LINE_HEADER.exec(text);
    if (header) {
      const commit = header[1]!;
      this.current = { commit, original: Number(header[2]), final: Number(header[3]) };
      if (!this.commits.has(commit)) this.commits.set(commit, { hash: commit, author: '', email: '', date: '', summary: '' });
      return undefined;
    }
    const details = this.current && this.commits.get(this.current.commit);
    if (!details) return undefined;
    const space = text.indexOf(' ');
    const [key, value] = space === -1 ? [text, ''] : [text.slice(0, space), text.slice(space + 1)];
    if (key === 'author') details.author = value;
    else if (key === 'author-mail') details.email = value.replace(/^<(.*)>$/, '$1');
    else if (key === 'author-time') this.authorTime = Number(value);
    else if (key === 'author-tz') details.date = isoDate(this.authorTime, value);
    else if (key === 'summary') details.summary = cutText(value, this.lineMaxChars, 0, 'summary');
    return undefined;
  }
}
