import { errorMessage } from '../errors.js';
import type { ProgressPhases } from '../kit/progress.js';
import { runningConsoles } from './consoles.js';
import { notifyDesktop } from './notify.js';
import { ApprovalStore, callSha256 } from './store.js';
import type { ApprovalDecision, ApprovalStoreApi, NewApproval, PendingApproval, RecordedDecision } from './types.js';
import { clockTime, shellWord } from './wording.js';


/** The approval behind a call's decision, as the audit line records it. */
export interface ApprovalRef {
  readonly id: string;
  readonly by?: string;
}

/** What only the gate can tell about a call; asked for only when a new approval is opened (a preview runs the tool's dry run). */
export type ApprovalDetails = Pick<NewApproval, 'args' | 'prompt' | 'rest' | 'risk' | 'preview'>;

/** A call the gate decided `ask` that no client can confirm: the desk holds it for a human. */
export interface HeldCall {
  /** The qualified name (`fs_write:write_file`). */
  readonly tool: string;
  /** The validated arguments: what the call's identity is made of. */
  readonly args: Record<string, unknown>;
  readonly caller: string;
  readonly principal?: string | undefined;
  /** Why the gate asked (Decision.reason). */
  readonly reason: string;
  readonly offers: readonly ApprovalDecision[];
  /** approval_wait_ms: how long the call waits for a decision (0: not at all). */
  readonly waitMs: number;
  /** The call's own: the client cancelling it ends the wait. */
  readonly signal: AbortSignal;
  readonly details: () => Promise<ApprovalDetails>;
  /** Tells the client, in an MCP log notification, that the call waits and where to approve it. */
  readonly tell: (text: string) => void;
  /** The call's progress, which tells the client every few seconds that the call still waits; absent when the client asked for no progress. */
  readonly progress?: ProgressPhases;
}

/** Where the desk's answer leaves the call: it runs under the human's decision, or it is refused. */
export type DeskAnswer =
  | { readonly kind: 'run'; readonly decision: Exclude<ApprovalDecision, 'deny'>; readonly approval: ApprovalRef }
  | {
      readonly kind: 'refused';
      /** The audit line's decision. */
      readonly decision: 'ask:denied' | 'ask:pending' | 'ask:used';
      /** The ToolError code. */
      readonly code: 'denied' | 'approval_pending';
      readonly approval: ApprovalRef;
      readonly message: string;
    };

/** The store could not be read or written: the call is refused as before there was a store. */
export class ApprovalStoreUnavailable extends Error {}

type Allowing = RecordedDecision & { readonly decision: Exclude<ApprovalDecision, 'deny'> };

function allows(decided: RecordedDecision): decided is Allowing {
  return decided.decision !== 'deny';
}

function seconds(ms: number): string {
  return `${Math.round(ms / 100) / 10} s`;
}

/**
 * One process's approval desk: the second channel of `ask`, for clients without elicitation. A
 * call becomes a pending approval in the control-plane folder's store, is held while a human
 * decides it (in the console or with `bulkhead approvals`) and then runs or is refused; one not
 * decided in time is answered with the approval's id, and the identical call made after the human
 * approved runs without asking again. The desk also remembers every `always` a human gave in this
 * process's lifetime: the rule is written into permissions.yaml, but the loaded gate is not reloaded.
 */
export class ApprovalDesk {
  private opened: ApprovalStore | undefined;
  private readonly always = new Map<string, ApprovalRef>();
  /**
   * An always given before this is in the permissions.yaml this process loaded, or was taken out
   * of it by the user since: either way the loaded gate already says what it should.
   */
  private readonly since = Date.now();

  /**
   * `server` is the namespace whose gate holds the calls (`gateway`, `fs_write`). The store is
   * opened on the first held call, so a server that never holds one writes nothing.
   */
  constructor(
    readonly controlDir: string,
    readonly server: string,
  ) {}

  private store(): ApprovalStoreApi {
    this.opened ??= new ApprovalStore(this.controlDir);
    return this.opened;
  }

  /**
   * The approval whose `always` allows this tool, if a human gave one: in this process, or in the
   * store for a call that was not there to claim it (it had given up waiting). The rule it wrote is
   * in permissions.yaml either way; this process's gate was loaded before it.
   */
  alwaysAllowed(tool: string): ApprovalRef | undefined {
    const remembered = this.always.get(tool);
    if (remembered) return remembered;
    let given: PendingApproval | undefined;
    try {
      given = this.store()
        .recent(Number.MAX_SAFE_INTEGER)
        .find((approval) => approval.tool === tool && approval.decision?.decision === 'always' && Date.parse(approval.decision.at) >= this.since);
    } catch {
      // An unreadable store grants nothing: the call is asked about as usual.
      return undefined;
    }
    if (!given?.decision) return undefined;
    const ref: ApprovalRef = { id: given.id, by: given.decision.by };
    this.always.set(tool, ref);
    return ref;
  }

  /** Where a human decides: the console when one runs for this folder, and the terminal command. */
  private whereToApprove(id: string): string {
    const running = runningConsoles(this.controlDir)[0];
    const command = `bulkhead approvals allow ${id} --config ${shellWord(this.controlDir)}`;
    const consoleText = running ? `the Bulkhead console (${running.url})` : `the Bulkhead console (run \`bulkhead console --config ${shellWord(this.controlDir)}\` to open the console)`;
    return `Approve it in ${consoleText} or in a terminal: ${command}`;
  }

  /** Holds the call until a human decides, the wait ends or the client cancels it. */
  async hold(call: HeldCall): Promise<DeskAnswer> {
    let store: ApprovalStoreApi;
    let approval: PendingApproval | undefined;
    const identity = callSha256(call.tool, call.args);
    try {
      store = this.store();
      approval = store.findFor(call.tool, identity, call.principal);
    } catch (error) {
      throw new ApprovalStoreUnavailable(errorMessage(error));
    }
    // The human approved this very call after an earlier attempt gave up waiting: it runs now.
    if (approval?.decision && allows(approval.decision)) return this.claim(store, approval, approval.decision, call.tool);

    const joined = approval !== undefined;
    if (!approval) {
      const details = await call.details();
      try {
        approval = store.create({
          server: this.server,
          pid: process.pid,
          tool: call.tool,
          caller: call.caller,
          ...(call.principal !== undefined ? { principal: call.principal } : {}),
          callSha256: identity,
          reason: call.reason,
          offers: call.offers,
          ...details,
        });
      } catch (error) {
        throw new ApprovalStoreUnavailable(errorMessage(error));
      }
    }
    const id = approval.id;
    const where = this.whereToApprove(id);
    call.tell(`${call.tool} waits for a human's approval (approval ${id})${call.waitMs > 0 ? ` for up to ${seconds(call.waitMs)}` : ''}. ${where}.`);
    // A call that joins an approval already open was announced on the desktop when it was opened.
    if (!joined) notifyDesktop('Bulkhead: approval needed', `${call.tool} waits for your approval (approval ${id}). Decide in the Bulkhead console, or in a terminal: bulkhead approvals allow ${id}`);

    const decided = call.waitMs > 0 ? await this.waitFor(store, id, call) : undefined;
    if (!decided) {
      try {
        store.markTimedOut(id);
      } catch {
        // Only what the console shows: the identical retry finds the approval whatever its state says.
      }
      return {
        kind: 'refused',
        decision: 'ask:pending',
        code: 'approval_pending',
        approval: { id },
        message: `${call.tool} is waiting for a human's approval (approval ${id}); nothing was run yet. ${where}. Then make the same call again (same tool, same arguments): it runs without asking again.`,
      };
    }
    if (!allows(decided)) {
      return {
        kind: 'refused',
        decision: 'ask:denied',
        code: 'denied',
        approval: { id, by: decided.by },
        message: `Permission denied: ${decided.by} denied ${call.tool} (approval ${id}) at ${clockTime(decided.at)}. Nothing was run.`,
      };
    }
    return this.claim(store, approval, decided, call.tool);
  }

  /** Waits for the decision, telling a client that asked for progress every few seconds that the call still waits. */
  private async waitFor(store: ApprovalStoreApi, id: string, call: HeldCall): Promise<RecordedDecision | undefined> {
    const until = Date.now() + call.waitMs;
    const waiting = () => store.waitForDecision(id, call.waitMs, call.signal);
    if (!call.progress) return waiting();
    return call.progress.during(() => `waiting for approval ${id}… (${Math.max(0, Math.ceil((until - Date.now()) / 1000))} s left)`, waiting);
  }

  /**
   * Uses an allowing decision for this call. Exactly one call runs on an allow-once; a session or
   * always allow says the human wants the tool run, so a call that lost the claim to an identical
   * one still runs.
   */
  private claim(store: ApprovalStoreApi, approval: PendingApproval, decided: Allowing, tool: string): DeskAnswer {
    const ref: ApprovalRef = { id: approval.id, by: decided.by };
    const won = store.use(approval.id);
    if (!won && decided.decision === 'once') {
      return {
        kind: 'refused',
        decision: 'ask:used',
        code: 'denied',
        approval: ref,
        message: `Permission denied: approval ${approval.id} allowed ${tool} once, and another identical call used it. Nothing was run; make the call again to ask anew.`,
      };
    }
    if (decided.decision === 'always') this.always.set(tool, ref);
    return { kind: 'run', decision: decided.decision, approval: ref };
  }
}
