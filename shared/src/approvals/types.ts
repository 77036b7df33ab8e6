/**
 * The pending-approval store's contract: the core's gate writes pending approvals, and a human
 * decides them in the console or with `bulkhead approvals`, from any process on the machine.
 * The store lives in `<control-dir>/approvals/` (folder 0700, files 0600), which no tool of any
 * compartment can read, list or write.
 */

/** What a human can answer. */
export const APPROVAL_DECISIONS = ['once', 'session', 'always', 'deny'] as const;
export type ApprovalDecision = (typeof APPROVAL_DECISIONS)[number];

/** What each decision is called in the console and in `bulkhead approvals`. */
export const APPROVAL_DECISION_TITLES: Readonly<Record<ApprovalDecision, string>> = {
  once: 'Allow this call once',
  session: 'Allow this tool for the rest of this session',
  always: 'Always allow this tool (adds a rule to permissions.yaml)',
  deny: 'Deny',
};

/** How long an undecided approval, or an allowed one whose call gave up waiting, is kept for the identical retry. */
export const APPROVAL_KEEP_MS = 24 * 60 * 60 * 1000;

/** A human's answer, as recorded (write-once: a second decision is refused). */
export interface RecordedDecision {
  readonly decision: ApprovalDecision;
  /** Who decided, in words for the refusal and the audit log: `the Bulkhead console (127.0.0.1)`, `bulkhead approvals (user alice)`. */
  readonly by: string;
  /** ISO time. */
  readonly at: string;
  /** For `always`: the rule written, and where (`fs_write:write_file` in /w/.bulkhead/permissions.yaml line 7). */
  readonly rule?: string;
}

/** One call that waits, or waited, for a human. */
export interface PendingApproval {
  /** Short, unguessable, lower-case (`k3m9q2xa`); what the human types. */
  readonly id: string;
  /** ISO time it was asked. */
  readonly created: string;
  /** ISO time after which it is dropped (created + APPROVAL_KEEP_MS). */
  readonly expires: string;
  /** The namespace whose gate holds it (`gateway`, `fs_write`). */
  readonly server: string;
  /** The process that holds it. */
  readonly pid: number;
  /** The qualified tool name (`fs_write:write_file`). */
  readonly tool: string;
  readonly caller: string;
  /** Who the transport authenticated (a bearer token's owner); absent over stdio. */
  readonly principal?: string;
  /** Identity of the call for the identical retry: sha256 of canonical JSON of { tool, args }. */
  readonly callSha256: string;
  /** The arguments for display: secrets redacted, each string cut to a bound (the cut is said in the value). */
  readonly args: unknown;
  /** The approval prompt an elicitation would have shown (approvalPrompt's message). */
  readonly prompt: string;
  /** The values the prompt cut, in full (approvalPrompt's rest). */
  readonly rest: readonly string[];
  /** Why the gate asked: the policy file and line (Decision.reason). */
  readonly reason: string;
  /** The classification of these arguments and why (the shell's), when the server assessed them. */
  readonly risk?: string;
  /** The tool's preview (a diff), or why it could not give one. */
  readonly preview?: { readonly text: string } | { readonly failed: string };
  /** The decisions this approval takes (no `session` or `always` for an always_ask rule, for instance). */
  readonly offers: readonly ApprovalDecision[];
  /** `waiting`: a call is held for it; `timed_out`: the call gave up waiting and an identical retry will find the decision. */
  readonly state: 'waiting' | 'timed_out';
  /** Present once a human decided. */
  readonly decision?: RecordedDecision;
  /** Set when the decision was used (by the held call or the identical retry): an allow-once runs one call. */
  readonly used?: string;
}

/** What the gate hands the store to open a pending approval. */
export type NewApproval = Omit<PendingApproval, 'id' | 'created' | 'expires' | 'state' | 'decision' | 'used'>;

/** A refusal of the store (unknown id, already decided, a decision not offered), written for the human. */
export class ApprovalError extends Error {}

/**
 * The store, shared by every process of one control-plane folder. A decision is written once and
 * never changed; watching is by fs.watch on the folder with a polling fallback.
 */
export interface ApprovalStoreApi {
  /** `<control-dir>/approvals`. */
  readonly folder: string;
  create(approval: NewApproval): PendingApproval;
  get(id: string): PendingApproval | undefined;
  /** Undecided approvals that are not expired, oldest first. */
  pending(): PendingApproval[];
  /** Every approval still kept (decided or not), newest first, at most `limit`. */
  recent(limit: number): PendingApproval[];
  /**
   * Records a human's decision; for `always` also writes the allow rule into the folder's
   * permissions.yaml (with a comment naming who and when) and records it. Throws ApprovalError
   * for an unknown or expired id, a second decision, or a decision the approval does not offer.
   */
  decide(id: string, decision: ApprovalDecision, by: string): PendingApproval;
  /** The held call gave up waiting: the approval stays for the identical retry. */
  markTimedOut(id: string): void;
  /** Claims the decision for one call (exactly one claimer wins); false when someone used it already. */
  use(id: string): boolean;
  /** A kept approval for this identical call (same tool, same arguments, same principal) that is undecided or allowed and not used. */
  findFor(tool: string, callSha256: string, principal: string | undefined): PendingApproval | undefined;
  /** Calls `onChange` whenever an approval is created or decided; returns the function that stops watching. */
  watch(onChange: () => void): () => void;
  /** Settles with the decision when one is recorded, or undefined after `timeoutMs` or when `signal` aborts. */
  waitForDecision(id: string, timeoutMs: number, signal: AbortSignal): Promise<RecordedDecision | undefined>;
}
