import { AuditLog } from '../audit/log.js';
import { auditFile, receiptPrivateKeyFile, receiptPublicKeyFile } from '../audit/layout.js';
import { issueReceipt, loadReceiptSigner, type ReceiptSigner } from '../audit/receipts.js';
import { redactArguments } from '../audit/redact.js';
import type { AuditEntry, AuditRecord } from '../audit/entry.js';
import type { AuditPolicy } from '../config/audit-policy.js';
import { errorMessage, ToolError } from '../errors.js';
import type { OutputLimits } from '../limits/index.js';
import { capToolResult } from './cap.js';
import type { CallState } from './call-state.js';
import type { Middleware } from './compose.js';
import { errorResult, resultBytes } from './results.js';

/** Records kept while the audit log cannot be written, to append once it can. */
const MAX_HELD_RECORDS = 1000;

/**
 * One audit file per namespace in the control-plane folder, plus the receipt signing key when enabled.
 * When the log cannot be written (a full disk), the call that already ran still gets its result,
 * its record is held in memory, and no further call runs until the held records are written:
 * every call is audited, none is lost, and an unaudited call never starts.
 */
export class CallAuditor {
  private readonly log: AuditLog | undefined;
  /** The control-plane folder when receipts are on: its keys/ holds the signing key, read or made on the first receipt. */
  private readonly receiptKeysIn: string | undefined;
  private receiptSigner: ReceiptSigner | undefined;
  private held: { record: AuditRecord; time: Date }[] = [];
  private droppedRecords = 0;
  private failure: string | undefined;

  constructor(
    controlDir: string,
    readonly namespace: string,
    private readonly policy: AuditPolicy,
  ) {
    this.log = policy.enabled ? AuditLog.at(auditFile(controlDir, namespace)) : undefined;
    this.receiptKeysIn = policy.enabled && policy.receipts ? controlDir : undefined;
    if (this.receiptKeysIn) this.log?.signHeadsWith(() => this.signingKey()?.privateKey);
  }

  /**
   * The receipt key, made on the first receipt rather than at start, so a server that answered
   * no call writes nothing. A key that cannot be made leaves the call, which already ran and was
   * audited, without a receipt: failing it now would invite running it again.
   */
  private signingKey(): ReceiptSigner | undefined {
    if (this.receiptSigner || !this.receiptKeysIn) return this.receiptSigner;
    const privateKeyFile = receiptPrivateKeyFile(this.receiptKeysIn);
    try {
      this.receiptSigner = loadReceiptSigner(privateKeyFile, receiptPublicKeyFile(this.receiptKeysIn));
    } catch (error) {
      process.stderr.write(`bulkhead ${this.namespace}: no receipt for this call: the receipt key ${privateKeyFile} cannot be made (${errorMessage(error)})\n`);
    }
    return this.receiptSigner;
  }

  /** Records a call that never reached a tool (an unknown name, say). */
  recordRejected(tool: string, caller: string, args: unknown, error: string): void {
    this.record({ tool, caller, args, decision: 'none', outcome: 'error', error, durationMs: 0 });
  }

  /** Records an event around a call that is not the call itself (a hook that ran, say). */
  record(event: { tool: string; caller: string; args: unknown; decision: string; outcome: 'ok' | 'error' | 'denied' | 'cancelled'; error?: string; durationMs: number }): void {
    this.write({
      server: this.namespace,
      tool: event.tool,
      caller: event.caller,
      args: redactArguments(event.args, this.policy.redact_keys),
      decision: event.decision,
      outcome: event.outcome,
      ...(event.error ? { error: event.error.slice(0, 500) } : {}),
      duration_ms: Math.round(event.durationMs * 10) / 10,
      bytes_out: 0,
    });
  }

  /** Appends the held records first; false while the log still cannot be written. */
  private flushHeld(log: AuditLog): boolean {
    while (this.held.length > 0) {
      const { record, time } = this.held[0]!;
      try {
        log.append(record, time);
      } catch (error) {
        this.failure = errorMessage(error);
        return false;
      }
      this.held.shift();
    }
    if (this.droppedRecords > 0) {
      const lost = `${this.droppedRecords} audit records were lost while the audit log could not be written`;
      try {
        log.append({ server: this.namespace, tool: `${this.namespace}:audit`, caller: 'bulkhead', args: {}, decision: 'none', outcome: 'error', error: lost, duration_ms: 0, bytes_out: 0 });
      } catch (error) {
        this.failure = errorMessage(error);
        return false;
      }
      this.droppedRecords = 0;
    }
    if (this.failure) process.stderr.write(`bulkhead ${this.namespace}: the audit log can be written again; held records were appended\n`);
    this.failure = undefined;
    return true;
  }

  /** Appends `record`, or holds it when the log cannot be written. */
  private write(record: AuditRecord): AuditEntry | undefined {
    const log = this.log;
    if (!log) return undefined;
    if (this.flushHeld(log)) {
      try {
        return log.append(record);
      } catch (error) {
        this.failure = errorMessage(error);
        process.stderr.write(`bulkhead ${this.namespace}: ${this.failure}; calls are refused until it can be written\n`);
      }
    }
    if (this.held.length >= MAX_HELD_RECORDS) {
      this.held.shift();
      this.droppedRecords++;
    }
    this.held.push({ record, time: new Date() });
    return undefined;
  }

  /**
   * The outermost middleware: refuses to start a call while the log cannot be written, turns
   * anything thrown below into an isError result, writes the audit line with the final outcome
   * and size, and signs successful calls when receipts are on.
   */
  middleware(): Middleware<CallState> {
    return async (state, next) => {
      const started = performance.now();
      let outcome: 'ok' | 'error' | 'denied' | 'cancelled' = 'ok';
      let error: string | undefined;
      const auditBroken = this.log !== undefined && !state.delegated && !this.flushHeld(this.log);
      if (auditBroken) {
        outcome = 'denied';
        error = `the audit log cannot be written (${this.failure}); no call runs until it can. Nothing was run.`;
        state.errorCode = 'audit_unavailable';
        state.result = errorResult(`Refused: ${error}`);
      } else {
        try {
          await next();
          if (state.result?.isError) outcome = 'error';
        } catch (thrown) {
          if (state.signal.aborted) {
            outcome = 'cancelled';
            error = 'cancelled';
            state.errorCode = 'cancelled';
            state.result = errorResult(`${state.qualifiedName} was cancelled before it finished`);
          } else {
            const message = errorMessage(thrown);
            outcome = thrown instanceof ToolError && thrown.code === 'denied' ? 'denied' : 'error';
            error = message;
            state.errorCode = thrown instanceof ToolError ? thrown.code : 'internal';
            state.result = errorResult(message);
          }
        }
      }
      const result = state.result ?? errorResult(`${state.qualifiedName} returned nothing`);
      state.result = result;
      if (state.delegated) return;
      const entry = this.write({
        server: this.namespace,
        tool: state.qualifiedName,
        caller: state.caller,
        args: redactArguments(state.rawArgs, this.policy.redact_keys),
        decision: auditBroken ? 'audit-unavailable' : state.decision,
        outcome,
        ...(error ? { error: error.slice(0, 500) } : {}),
        duration_ms: Math.round((performance.now() - started) * 10) / 10,
        bytes_out: resultBytes(result),
        ...(state.approval ? { approval: state.approval } : {}),
      });
      const signer = entry && outcome === 'ok' ? this.signingKey() : undefined;
      if (entry && signer && this.log) {
        state.result = { ...result, _meta: { ...result._meta, 'bulkhead/receipt': issueReceipt(signer, entry, this.log.file) } };
      }
    };
  }
}

/** Validates the raw arguments with a server-specific validator (zod, or a downstream JSON Schema). */
export function validateMiddleware(validate: (state: CallState) => Record<string, unknown>): Middleware<CallState> {
  return async (state, next) => {
    state.args = validate(state);
    return next();
  };
}

/** An unexpected exception becomes a ToolError naming the tool; ToolErrors pass through. */
export const errorMiddleware: Middleware<CallState> = async (state, next) => {
  try {
    await next();
  } catch (error) {
    if (error instanceof ToolError) throw error;
    if (state.signal.aborted) throw error;
    throw new ToolError(`${state.qualifiedName} failed unexpectedly: ${errorMessage(error)}`, 'internal');
  }
};

/** Bounds every result on its way out (see capToolResult). */
export function limitMiddleware(limits: OutputLimits): Middleware<CallState> {
  return async (state, next) => {
    await next();
    if (state.result) state.result = capToolResult(state.result, limits);
  };
}
