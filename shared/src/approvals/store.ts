import { randomBytes } from 'node:crypto';
import { chmodSync, lstatSync, mkdirSync, readdirSync, watch, type FSWatcher } from 'node:fs';
import { join } from 'node:path';
import { z } from 'zod';
import { canonicalJson, sha256 } from '../audit/chain.js';
import { createExclusive, exists, readJsonFile, removeQuietly, replaceAtomically, withLock } from './files.js';
import { addAllowRule, describeAllowRule } from './policy-rule.js';
import { clockTime, minuteTime, oneLine } from './wording.js';
import {
  APPROVAL_DECISIONS,
  APPROVAL_KEEP_MS,
  ApprovalError,
  type ApprovalDecision,
  type ApprovalStoreApi,
  type NewApproval,
  type PendingApproval,
  type RecordedDecision,
} from './types.js';

/** Lower-case letters and digits without the look-alikes 0/o and 1/l: 32 symbols, so one random byte's low 5 bits pick one evenly. */
const ID_ALPHABET = 'abcdefghijkmnpqrstuvwxyz23456789';
const ID_LENGTH = 8;
const ID_PATTERN = /^[a-km-np-z2-9]{8}$/;
const RECORD_NAME = /^([a-km-np-z2-9]{8})\.json$/;
const SIDE_FILE_NAME = /^([a-km-np-z2-9]{8})\.(?:decision\.json|used|deciding)$/;
const FILE_MODE = 0o600;
const FOLDER_MODE = 0o700;
/** fs.watch misses events on some file systems (network mounts, some containers); a stat poll catches them. */
const POLL_MS = 500;
/** One write is several file events (temp, link, unlink): watchers hear about it once. */
const DEBOUNCE_MS = 40;
/** setTimeout fires at once past this. */
const LONGEST_TIMER_MS = 2 ** 31 - 1;
/**
 * More undecided approvals than a human works through: past it a model that makes call after
 * distinct call cannot fill the disk (each record is up to about 150 KB), nor make every held
 * call read thousands of records. Creators in several processes at once may pass it by a few.
 */
export const MAX_UNDECIDED_APPROVALS = 100;
/** A leftover temp file of a writer that died is removed after this long. */
const STALE_TEMP_MS = 60_000;

export function isApprovalId(text: string): boolean {
  return ID_PATTERN.test(text);
}

/** A fresh id from crypto random bytes (`k3m9q2xa`). */
export function newApprovalId(): string {
  const bytes = randomBytes(ID_LENGTH);
  let id = '';
  for (const byte of bytes) id += ID_ALPHABET[byte & 31];
  return id;
}

/** The identity of a call for the identical retry; the gate and the store use this one definition. */
export function callSha256(tool: string, args: unknown): string {
  return sha256(canonicalJson({ tool, args }));
}

// UTC only, as this store writes them: the lists sort by the text.
const isoTime = z.iso.datetime();

const recordedDecisionSchema = z.object({
  decision: z.enum(APPROVAL_DECISIONS),
  by: z.string().min(1),
  at: isoTime,
  rule: z.string().optional(),
});

/** A stored approval: the fields every reader relies on are checked; fields a newer writer added are kept. */
const storedApprovalSchema = z.looseObject({
  id: z.string().regex(ID_PATTERN),
  created: isoTime,
  expires: isoTime,
  server: z.string(),
  pid: z.number().int(),
  tool: z.string().min(1),
  caller: z.string(),
  principal: z.string().optional(),
  callSha256: z.string().regex(/^[0-9a-f]{64}$/),
  args: z.unknown(),
  prompt: z.string(),
  rest: z.array(z.string()),
  reason: z.string(),
  risk: z.string().optional(),
  preview: z.union([z.object({ text: z.string() }), z.object({ failed: z.string() })]).optional(),
  offers: z.array(z.enum(APPROVAL_DECISIONS)),
  state: z.enum(['waiting', 'timed_out']),
});
type StoredApproval = z.output<typeof storedApprovalSchema>;

const usedClaimSchema = z.object({ at: isoTime, pid: z.number().int() });

const DECIDED_AS: Readonly<Record<ApprovalDecision, string>> = {
  once: 'allowed once',
  session: 'allowed for the session',
  always: 'always allowed',
  deny: 'denied',
};

/** `allowed once by the Bulkhead console (127.0.0.1) at 02:31:07 UTC`, for refusals, replies and the audit log. */
export function describeDecision(decision: RecordedDecision): string {
  return `${DECIDED_AS[decision.decision]} by ${decision.by} at ${clockTime(decision.at)}`;
}

function assertId(id: string): void {
  if (!isApprovalId(id)) throw new ApprovalError(`not an approval id: ${JSON.stringify(id)} (an id is ${ID_LENGTH} lower-case letters and digits, such as k3m9q2xa)`);
}

/**
 * A watcher on `folder` that calls `listener` on any event, or undefined where fs.watch is not
 * available (the poll still runs). Watchers and timers keep the process alive on purpose: one
 * left running is a leak to be seen, not hidden; stop watching, or abort the wait, to let go.
 */
function watchFolder(folder: string, listener: () => void): FSWatcher | undefined {
  try {
    const watcher = watch(folder, () => listener());
    // The folder went away or the platform gave up: the poll carries on alone.
    watcher.on('error', () => watcher.close());
    return watcher;
  } catch {
    return undefined;
  }
}

type Lookup = { readonly found: PendingApproval } | { readonly expired: string } | { readonly missing: true };

export interface ApprovalStoreOptions {
  /** The clock (tests move it). */
  readonly now?: () => Date;
}

/** The pending-approval store of one control-plane folder, shared by every process on the machine through its files. */
export class ApprovalStore implements ApprovalStoreApi {
  readonly folder: string;
  private readonly now: () => Date;

  constructor(
    readonly controlDir: string,
    options: ApprovalStoreOptions = {},
  ) {
    this.folder = join(controlDir, 'approvals');
    this.now = options.now ?? (() => new Date());
  }

  private file(id: string, suffix: '.json' | '.decision.json' | '.used' | '.deciding'): string {
    return join(this.folder, `${id}${suffix}`);
  }

  /** Creates the folder (0700), and refuses one that is a symbolic link or something else. */
  private ensureFolder(): void {
    mkdirSync(this.folder, { recursive: true, mode: FOLDER_MODE });
    const stat = lstatSync(this.folder);
    if (!stat.isDirectory()) throw new ApprovalError(`${this.folder} is not a folder (a symbolic link or a file is there); approvals are kept only in a real folder`);
    if ((stat.mode & 0o777) !== FOLDER_MODE) chmodSync(this.folder, FOLDER_MODE);
  }

  create(approval: NewApproval): PendingApproval {
    this.ensureFolder();
    const undecided = this.undecidedCount();
    if (undecided >= MAX_UNDECIDED_APPROVALS) {
      throw new ApprovalError(
        `${this.folder} holds ${undecided} undecided approvals, as many as it keeps; decide or deny them (\`bulkhead approvals list\`) before another call can wait`,
      );
    }
    const created = this.now();
    const times = { created: created.toISOString(), expires: new Date(created.getTime() + APPROVAL_KEEP_MS).toISOString() };
    // 32^8 ids: a clash is all but impossible, and the exclusive create turns one into a retry.
    for (let attempt = 0; attempt < 8; attempt++) {
      const record = storedApprovalSchema.parse({ ...approval, id: newApprovalId(), ...times, state: 'waiting' });
      if (createExclusive(this.file(record.id, '.json'), `${JSON.stringify(record)}\n`, FILE_MODE)) return record as PendingApproval;
    }
    throw new ApprovalError(`could not pick a fresh approval id in ${this.folder}`);
  }

  get(id: string): PendingApproval | undefined {
    assertId(id);
    const looked = this.lookup(id);
    return 'found' in looked ? looked.found : undefined;
  }

  pending(): PendingApproval[] {
    return this.all()
      .filter((approval) => approval.decision === undefined)
      .sort((a, b) => (a.created === b.created ? (a.id < b.id ? -1 : 1) : a.created < b.created ? -1 : 1));
  }

  recent(limit: number): PendingApproval[] {
    return this.all()
      .sort((a, b) => (a.created === b.created ? (a.id < b.id ? 1 : -1) : a.created < b.created ? 1 : -1))
      .slice(0, Math.max(0, limit));
  }

  decide(id: string, decision: ApprovalDecision, by: string): PendingApproval {
    assertId(id);
    if (!(APPROVAL_DECISIONS as readonly string[]).includes(decision)) {
      throw new ApprovalError(`not a decision: ${JSON.stringify(decision)} (one of ${APPROVAL_DECISIONS.join(', ')})`);
    }
    this.decidable(id);
    // Deciders take turns, so an always that writes its rule cannot lose to a deny made meanwhile
    // (which would leave the rule without the decision); the exclusive link below stays the last word.
    return withLock(this.file(id, '.deciding'), () => new ApprovalError(`approval ${id} is being decided by another process; try again`), () => {
      const approval = this.decidable(id);
      if (!approval.offers.includes(decision)) {
        throw new ApprovalError(`approval ${id} does not offer ${decision}; it offers: ${approval.offers.join(', ')}`);
      }
      const decider = oneLine(by) || 'someone who did not say who';
      const at = this.now();
      let rule: string | undefined;
      if (decision === 'always') {
        try {
          rule = describeAllowRule(addAllowRule(this.controlDir, approval.tool, { by: decider, approvalId: id, at }));
        } catch (error) {
          if (error instanceof ApprovalError) throw new ApprovalError(`approval ${id} is still undecided: ${error.message}`);
          throw error;
        }
      }
      const recorded: RecordedDecision = { decision, by: decider, at: at.toISOString(), ...(rule !== undefined ? { rule } : {}) };
      if (!createExclusive(this.file(id, '.decision.json'), `${JSON.stringify(recorded)}\n`, FILE_MODE)) throw this.alreadyDecided(id);
      return { ...approval, decision: recorded };
    });
  }

  /** The approval if a decision may still be recorded for it; the refusal otherwise. */
  private decidable(id: string): PendingApproval {
    const looked = this.lookup(id);
    if ('missing' in looked) throw new ApprovalError(`there is no approval ${id} (an expired one is removed; \`bulkhead approvals list\` shows the waiting ones)`);
    if ('expired' in looked) throw new ApprovalError(`approval ${id} expired at ${minuteTime(looked.expired)}; the call was not run`);
    if (looked.found.decision) throw this.alreadyDecided(id);
    return looked.found;
  }

  private alreadyDecided(id: string): ApprovalError {
    const winner = readJsonFile(this.file(id, '.decision.json'), recordedDecisionSchema);
    return new ApprovalError(`approval ${id} was already decided: ${winner ? describeDecision(winner) : 'its decision file cannot be read'}`);
  }

  markTimedOut(id: string): void {
    assertId(id);
    const file = this.file(id, '.json');
    const stored = this.readRecord(id);
    if (!stored || stored.state === 'timed_out' || this.isExpired(stored)) return;
    replaceAtomically(file, `${JSON.stringify({ ...stored, state: 'timed_out' })}\n`, FILE_MODE);
  }

  use(id: string): boolean {
    assertId(id);
    const looked = this.lookup(id);
    // Only an allowing decision is a thing to use; claiming an undecided or denied call would let it run.
    if (!('found' in looked) || !looked.found.decision || looked.found.decision.decision === 'deny') return false;
    return createExclusive(this.file(id, '.used'), `${JSON.stringify({ at: this.now().toISOString(), pid: process.pid })}\n`, FILE_MODE);
  }

  findFor(tool: string, callSha256: string, principal: string | undefined): PendingApproval | undefined {
    return this.recent(Number.MAX_SAFE_INTEGER).find(
      (approval) =>
        approval.tool === tool &&
        approval.callSha256 === callSha256 &&
        approval.principal === principal &&
        (approval.decision === undefined || (approval.decision.decision !== 'deny' && approval.used === undefined)),
    );
  }

  watch(onChange: () => void): () => void {
    this.ensureFolder();
    let stopped = false;
    let debounce: NodeJS.Timeout | undefined;
    let seen = this.fingerprint();
    const changed = () => {
      if (stopped || debounce) return;
      debounce = setTimeout(() => {
        debounce = undefined;
        if (stopped) return;
        seen = this.fingerprint();
        onChange();
      }, DEBOUNCE_MS);
    };
    const watcher = watchFolder(this.folder, changed);
    const poll = setInterval(() => {
      if (this.fingerprint() !== seen) changed();
    }, POLL_MS);
    return () => {
      stopped = true;
      watcher?.close();
      clearInterval(poll);
      if (debounce) clearTimeout(debounce);
      debounce = undefined;
    };
  }

  waitForDecision(id: string, timeoutMs: number, signal: AbortSignal): Promise<RecordedDecision | undefined> {
    assertId(id);
    const decisionFile = this.file(id, '.decision.json');
    const recorded = () => readJsonFile(decisionFile, recordedDecisionSchema);
    const already = recorded();
    if (already) return Promise.resolve(already);
    if (signal.aborted) return Promise.resolve(undefined);
    this.ensureFolder();
    return new Promise((resolve) => {
      let settled = false;
      const finish = (value: RecordedDecision | undefined) => {
        if (settled) return;
        settled = true;
        watcher?.close();
        clearInterval(poll);
        clearTimeout(timeout);
        signal.removeEventListener('abort', onAbort);
        resolve(value);
      };
      const check = () => {
        const found = recorded();
        if (found) finish(found);
      };
      const onAbort = () => finish(undefined);
      const watcher = watchFolder(this.folder, check);
      const poll = setInterval(check, POLL_MS);
      const timeout = setTimeout(() => finish(undefined), Math.min(Math.max(0, timeoutMs || 0), LONGEST_TIMER_MS));
      signal.addEventListener('abort', onAbort, { once: true });
      // The decision may have landed between the first look and the watcher starting.
      check();
    });
  }

  /** Records without a decision, counted by their names (an expired one is removed whenever the store is listed, as the desk does before it creates). */
  private undecidedCount(): number {
    const names = new Set(readdirSync(this.folder));
    let count = 0;
    for (const name of names) {
      const record = RECORD_NAME.exec(name);
      if (record && !names.has(`${record[1]!}.decision.json`)) count++;
    }
    return count;
  }

  /** What changes when an approval is created, decided, used, timed out or removed. */
  private fingerprint(): string {
    try {
      const names = readdirSync(this.folder).filter((name) => !name.endsWith('.tmp'));
      return `${lstatSync(this.folder).mtimeMs}|${names.sort().join('|')}`;
    } catch {
      return '';
    }
  }

  private readRecord(id: string): StoredApproval | undefined {
    const stored = readJsonFile(this.file(id, '.json'), storedApprovalSchema);
    // A record under another id's name is foreign: never let one file stand for another approval.
    return stored?.id === id ? stored : undefined;
  }

  private isExpired(stored: StoredApproval): boolean {
    return Date.parse(stored.expires) <= this.now().getTime();
  }

  /** The approval with its decision and claim; an expired one is removed (lazily, by whoever looks first). */
  private lookup(id: string): Lookup {
    const stored = this.readRecord(id);
    if (!stored) return { missing: true };
    if (this.isExpired(stored)) {
      this.remove(id);
      return { expired: stored.expires };
    }
    const decision = readJsonFile(this.file(id, '.decision.json'), recordedDecisionSchema);
    const used = this.usedAt(id);
    return { found: { ...(stored as PendingApproval), ...(decision ? { decision } : {}), ...(used !== undefined ? { used } : {}) } };
  }

  /** When the decision was claimed; a claim file that cannot be read still counts (an allow-once must never run twice). */
  private usedAt(id: string): string | undefined {
    const file = this.file(id, '.used');
    if (!exists(file)) return undefined;
    return readJsonFile(file, usedClaimSchema)?.at ?? 'unknown time';
  }

  private remove(id: string): void {
    // The record first: once it is gone, nothing reads the side files as an approval.
    for (const suffix of ['.json', '.decision.json', '.used'] as const) removeQuietly(this.file(id, suffix));
  }

  /** Every kept approval; files that are not approvals (corrupt, foreign, left over) are skipped, never fatal. */
  private all(): PendingApproval[] {
    let names: string[];
    try {
      names = readdirSync(this.folder);
    } catch {
      return [];
    }
    const records = new Set(names.filter((name) => RECORD_NAME.test(name)));
    const found: PendingApproval[] = [];
    for (const name of names) {
      const record = RECORD_NAME.exec(name);
      if (record) {
        const looked = this.lookup(record[1]!);
        if ('found' in looked) found.push(looked.found);
        continue;
      }
      this.tidy(name, records);
    }
    return found;
  }

  /** Removes a decision or claim whose approval is gone, and temp files of writers that died. */
  private tidy(name: string, records: ReadonlySet<string>): void {
    const side = SIDE_FILE_NAME.exec(name);
    if (side && !records.has(`${side[1]!}.json`)) {
      removeQuietly(join(this.folder, name));
      return;
    }
    if (!name.endsWith('.tmp')) return;
    try {
      // The real clock: the file's time is the real one, whatever clock this store is given.
      if (Date.now() - lstatSync(join(this.folder, name)).mtimeMs > STALE_TEMP_MS) removeQuietly(join(this.folder, name));
    } catch {
      // Renamed into place meanwhile.
    }
  }
}
