import { decodeGitName } from '@bulkhead/core';

export interface StatusEntry {
  readonly path: string;
  readonly status: string;
  /** The old path of a rename or copy. */
  readonly from?: string;
}

export interface StatusReport {
  branch: string | null;
  head: string | null;
  upstream: string | null;
  ahead: number | null;
  behind: number | null;
  readonly staged: StatusEntry[];
  readonly unstaged: StatusEntry[];
  readonly untracked: string[];
  readonly conflicted: StatusEntry[];
  /** Entries seen, listed or not. */
  entries: number;
}

const CHANGE: Readonly<Record<string, string>> = { M: 'modified', T: 'type changed', A: 'added', D: 'deleted', R: 'renamed', C: 'copied' };
const UNMERGED: Readonly<Record<string, string>> = {
  DD: 'both deleted',
  AU: 'added by us',
  UD: 'deleted by them',
  UA: 'added by them',
  DU: 'deleted by us',
  AA: 'both added',
  UU: 'both modified',
};

/** The bytes after the first `count` space-separated fields (the path may hold spaces). */
function afterFields(record: Buffer, count: number): Buffer {
  let at = 0;
  for (let i = 0; i < count; i++) at = record.indexOf(0x20, at) + 1;
  return record.subarray(at);
}

/**
 * Reads `git status --porcelain=v2 -z --branch` one NUL-terminated record at a time. A rename's
 * record is followed by one holding its old path.
 */
export class StatusParser {
  readonly report: StatusReport = { branch: null, head: null, upstream: null, ahead: null, behind: null, staged: [], unstaged: [], untracked: [], conflicted: [], entries: 0 };
  private pendingRename: { xy: string; path: string } | undefined;

  constructor(private readonly maxEntries: number) {}

  /** Takes one record; answers 'stop' once more entries than can be listed were seen. */
  record(record: Buffer): 'stop' | undefined {
    if (this.pendingRename) {
      this.addChange(this.pendingRename.xy, this.pendingRename.path, decodeGitName(record));
      this.pendingRename = undefined;
      return this.full();
    }
    const kind = String.fromCharCode(record[0] ?? 0);
    if (kind === '#') {
      this.header(record.toString('utf8'), record);
      return undefined;
    }
    const xy = record.toString('latin1', 2, 4);
    if (kind === '1') this.addChange(xy, decodeGitName(afterFields(record, 8)));
    else if (kind === '2') this.pendingRename = { xy, path: decodeGitName(afterFields(record, 9)) };
    else if (kind === 'u') this.addEntry(this.report.conflicted, { path: decodeGitName(afterFields(record, 10)), status: UNMERGED[xy] ?? `unmerged (${xy})` });
    else if (kind === '?') this.addUntracked(decodeGitName(record.subarray(2)));
    return this.full();
  }

  private full(): 'stop' | undefined {
    return this.report.entries > this.maxEntries ? 'stop' : undefined;
  }

  private header(text: string, bytes: Buffer): void {
    const [, key, value] = /^# (\S+) (.*)$/s.exec(text) ?? [];
    if (key === 'branch.oid') this.report.head = value === '(initial)' ? null : value!;
    else if (key === 'branch.head') this.report.branch = value === '(detached)' ? null : decodeGitName(bytes.subarray('# branch.head '.length));
    else if (key === 'branch.upstream') this.report.upstream = decodeGitName(bytes.subarray('# branch.upstream '.length));
    else if (key === 'branch.ab') {
      const [, ahead, behind] = /^\+(\d+) -(\d+)$/.exec(value ?? '') ?? [];
      this.report.ahead = ahead === undefined ? null : Number(ahead);
      this.report.behind = behind === undefined ? null : Number(behind);
    }
  }

  private addChange(xy: string, path: string, from?: string): void {
    const [x, y] = [xy[0]!, xy[1]!];
    const withFrom = (letter: string) => ({ path, status: CHANGE[letter] ?? letter, ...(from !== undefined && (letter === 'R' || letter === 'C') ? { from } : {}) });
    // One path changed both in the index and in the working tree counts as one entry.
    this.report.entries++;
    if (x !== '.') this.keep(this.report.staged, withFrom(x));
    if (y !== '.') this.keep(this.report.unstaged, withFrom(y));
  }

  private addEntry(list: StatusEntry[], entry: StatusEntry): void {
    this.report.entries++;
    this.keep(list, entry);
  }

  private addUntracked(path: string): void {
    this.report.entries++;
    if (this.report.entries <= this.maxEntries) this.report.untracked.push(path);
  }

  private keep(list: StatusEntry[], entry: StatusEntry): void {
    if (this.report.entries <= this.maxEntries) list.push(entry);
  }
}

/** The report without the entries `hides` names (a rename is left out when either of its paths is hidden). */
export function withoutPrivate(report: StatusReport, hides: (path: string) => boolean): StatusReport {
  const keep = (entry: StatusEntry) => !hides(entry.path) && (entry.from === undefined || !hides(entry.from));
  const staged = report.staged.filter(keep);
  const unstaged = report.unstaged.filter(keep);
  const conflicted = report.conflicted.filter(keep);
  const untracked = report.untracked.filter((path) => !hides(path));
  const removed = report.staged.length - staged.length + report.unstaged.length - unstaged.length + report.conflicted.length - conflicted.length + report.untracked.length - untracked.length;
  return { ...report, staged, unstaged, conflicted, untracked, entries: report.entries - removed };
}
