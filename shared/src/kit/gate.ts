import { z } from 'zod';
import { ElicitResultSchema } from '@modelcontextprotocol/sdk/types.js';
import type { Decision, PermissionGate } from '../permissions/gate.js';
import { redactArguments } from '../audit/redact.js';
import { ApprovalStoreUnavailable, type ApprovalDesk, type DeskAnswer } from '../approvals/desk.js';
import type { ApprovalDecision } from '../approvals/types.js';
import { errorMessage, ToolError } from '../errors.js';
import { approvalPrompt, restMessage, SHOW_REST, TooManyKeysToShow, type ApprovalRequest } from './approval-prompt.js';
import type { CallState, RiskAssessment } from './call-state.js';
import type { Middleware } from './compose.js';

const ELICIT_TIMEOUT_MS = 10 * 60 * 1000;
/** A preview that takes longer is left out of the prompt rather than keeping the human waiting. */
const PREVIEW_TIMEOUT_MS = 30 * 1000;

/** How the allow/ask/deny gate is applied for one server. */
export type GateMode =
  | { readonly kind: 'self'; readonly permissions: PermissionGate }
  /** A gateway in front already decided; this server only enforces its hard boundaries. */
  | {
      readonly kind: 'gateway';
      /**
       * Served over stdio to the gateway that started it (`--gated-by-gateway` without `--http`):
       * the only client is that parent, so the principal it names in a call's `_meta` is who
       * called. Over HTTP anyone who can reach the port could name one, so it is ignored there.
       */
      readonly parentNamesCaller?: boolean;
    };

export interface GateOptions {
  /** Further argument keys whose values are secrets (audit.yaml's redact_keys), redacted in prompts too. */
  readonly redactKeys?: readonly string[];
  /**
   * The process's approval desk: a call the client cannot confirm becomes a pending approval a
   * human decides elsewhere. Without one, such a call is refused.
   */
  readonly desk?: ApprovalDesk;
}

/** The choices of the approval form, by the value the client sends back. */
export const APPROVAL_CHOICES = {
  once: 'Allow once',
  session: 'Allow this tool for the rest of this session',
  more: SHOW_REST,
  deny: 'Deny',
} as const;
type Choice = Exclude<keyof typeof APPROVAL_CHOICES, 'more'> | 'declined';

/** `approve: true` is the form of earlier versions (a single checkbox); clients built for it still work. */
const answerSchema = z.union([z.object({ decision: z.enum(['once', 'session', 'more', 'deny']) }), z.object({ approve: z.literal(true) }).transform(() => ({ decision: 'once' as const }))]);

function refusal(decision: Decision, tail: string): string {
  return `Permission denied: ${decision.reason}. ${tail}${decision.remedy ? ` To allow it: ${decision.remedy}.` : ''}`;
}

async function assess(state: CallState): Promise<RiskAssessment> {
  const assessed = await state.target.assessRisk?.(state.args);
  if (assessed === undefined) return { risk: state.target.risk };
  return typeof assessed === 'string' ? { risk: assessed } : assessed;
}

/** The tool's preview, bounded in time: one that fails or is slow is replaced by why, and the human is still asked. */
async function previewOf(state: CallState): Promise<ApprovalRequest['preview']> {
  const preview = state.target.preview;
  if (!preview) return undefined;
  let timer: NodeJS.Timeout | undefined;
  const timedOut = new Promise<never>((_resolve, reject) => {
    timer = setTimeout(() => reject(new Error(`no preview within ${PREVIEW_TIMEOUT_MS / 1000} s`)), PREVIEW_TIMEOUT_MS);
  });
  try {
    return { text: await Promise.race([preview(state.args), timedOut]) };
  } catch (error) {
    return { failed: errorMessage(error) };
  } finally {
    clearTimeout(timer);
  }
}

/** An always_ask entry wants every call confirmed; without a session there is nothing to remember an allow in. */
function sessionOffered(state: CallState, decision: Decision): boolean {
  return state.sessionApprovals !== undefined && !decision.alwaysAsk;
}

/** What the human is shown: the prompt, and the risk and preview it was made of. */
async function promptFor(state: CallState, decision: Decision, assessment: RiskAssessment, options: GateOptions) {
  const preview = state.target.preview ? await previewOf(state) : undefined;
  const prompt = approvalPrompt({
    qualifiedName: state.qualifiedName,
    reason: decision.reason,
    args: state.args,
    ...(assessment.reason ? { risk: assessment.reason } : {}),
    ...(preview ? { preview } : {}),
    ...(options.redactKeys ? { redactKeys: options.redactKeys } : {}),
  });
  return { prompt, preview };
}

async function askHuman(state: CallState, decision: Decision, assessment: RiskAssessment, options: GateOptions): Promise<Choice> {
  const { prompt } = await promptFor(state, decision, assessment, options);
  const sessionOffer = sessionOffered(state, decision);
  // The first message, then, one at a time as the human asks for them, the parts of the rest.
  for (let shown = 0; ; shown++) {
    const moreOffered = shown < prompt.rest.length;
    const choices: (keyof typeof APPROVAL_CHOICES)[] = ['once', ...(sessionOffer ? (['session'] as const) : []), ...(moreOffered ? (['more'] as const) : []), 'deny'];
    const result = await state.extra.sendRequest(
      {
        method: 'elicitation/create',
        params: {
          mode: 'form',
          message: shown === 0 ? prompt.message : restMessage(state.qualifiedName, prompt.rest, shown - 1),
          requestedSchema: {
            type: 'object',
            properties: {
              decision: { type: 'string', title: `Run ${state.qualifiedName}?`, oneOf: choices.map((choice) => ({ const: choice, title: APPROVAL_CHOICES[choice] })) },
            },
            required: ['decision'],
          },
        },
      },
      ElicitResultSchema,
      { signal: state.signal, timeout: ELICIT_TIMEOUT_MS },
    );
    if (result.action !== 'accept') return 'declined';
    const answer = answerSchema.safeParse(result.content ?? {});
    if (!answer.success) return 'declined';
    const picked = answer.data.decision;
    // A session allow where none was offered (always_ask) allows once, never more; "more" after the last part is no answer.
    if (!choices.includes(picked)) return picked === 'session' ? 'once' : 'declined';
    if (picked !== 'more') return picked;
  }
}

/**
 * The second channel of `ask`, for a client without elicitation: the desk holds the call as a
 * pending approval. `always` is offered only where the rule it writes would let the call run: an
 * allow entry loses to deny, always_ask and ask entries, so only a call the autonomy table decided.
 */
function holdForApproval(state: CallState, decision: Decision, assessment: RiskAssessment, options: GateOptions, desk: ApprovalDesk, waitMs: number): Promise<DeskAnswer> {
  const offers: ApprovalDecision[] = ['once', ...(sessionOffered(state, decision) ? (['session'] as const) : []), ...(decision.from === 'autonomy' ? (['always'] as const) : []), 'deny'];
  const logger = `bulkhead-${desk.server}`;
  return desk.hold({
    tool: state.qualifiedName,
    args: state.args,
    caller: state.caller,
    // Whose identical retry may use the decision: the token's owner, or else the token itself (a gateway's tokens name no owner).
    principal: state.principal ?? state.extra.authInfo?.clientId,
    reason: decision.reason,
    offers,
    waitMs,
    signal: state.signal,
    details: async () => {
      const { prompt, preview } = await promptFor(state, decision, assessment, options);
      return {
        args: redactArguments(state.args, options.redactKeys),
        prompt: prompt.message,
        rest: prompt.rest,
        ...(assessment.reason ? { risk: assessment.reason } : {}),
        ...(preview ? { preview } : {}),
      };
    },
    // The client may be gone by now; news of a held call is then of no use to anyone.
    tell: (text) => void state.extra.sendNotification({ method: 'notifications/message', params: { level: 'warning', logger, data: text } }).catch(() => undefined),
    ...(state.progress ? { progress: state.progress } : {}),
  });
}

/** The desk's answer applied: the call runs under the human's decision, or it is refused with the desk's words. */
async function runApproved(state: CallState, next: () => Promise<void>, answer: DeskAnswer): Promise<void> {
  state.approval = answer.approval;
  if (answer.kind === 'refused') {
    state.decision = answer.decision;
    throw new ToolError(answer.message, answer.code);
  }
  if (answer.decision === 'session') state.sessionApprovals?.grant(state.qualifiedName);
  state.decision = answer.decision === 'once' ? 'ask:approved' : `ask:${answer.decision}`;
  return next();
}

/** The permission gate as a middleware: a denied call never reaches the tool. */
export function gateMiddleware(mode: GateMode, options: GateOptions = {}): Middleware<CallState> {
  return async (state, next) => {
    if (mode.kind === 'gateway') {
      state.decision = 'gateway';
      return next();
    }
    const assessment = await assess(state);
    const decision = mode.permissions.decide({
      qualifiedName: state.qualifiedName,
      risk: assessment.risk,
      args: state.args,
      ...(state.target.subjectArg ? { subjectArg: state.target.subjectArg } : {}),
    });
    if (decision.verdict === 'deny') {
      state.decision = 'deny';
      throw new ToolError(refusal(decision, 'Nothing was run.'), 'denied');
    }
    if (decision.verdict === 'ask') {
      if (!decision.alwaysAsk && state.sessionApprovals?.has(state.qualifiedName)) {
        state.decision = 'allow:session';
        return next();
      }
      // A human allowed the tool always in this process: the rule is in permissions.yaml, the loaded gate predates it.
      const always = decision.from === 'autonomy' ? options.desk?.alwaysAllowed(state.qualifiedName) : undefined;
      if (always) {
        state.decision = 'allow:always';
        state.approval = always;
        return next();
      }
      const elicits = state.clientCanElicit();
      // A direct HTTP call has nobody behind it to tell of a pending approval: it keeps its refusal.
      const desk = elicits || state.unconfirmable !== undefined ? undefined : options.desk;
      if (!elicits && !desk) {
        state.decision = 'deny';
        const why = state.unconfirmable ?? 'This client cannot show a confirmation prompt (it does not support MCP elicitation)';
        throw new ToolError(refusal(decision, `${why}, so nothing was run.`), 'denied');
      }
      let answer: DeskAnswer | Choice;
      try {
        answer = desk ? await holdForApproval(state, decision, assessment, options, desk, mode.permissions.approvalWaitMs) : await askHuman(state, decision, assessment, options);
      } catch (error) {
        if (error instanceof TooManyKeysToShow) {
          state.decision = 'deny';
          throw new ToolError(`Permission denied: ${state.qualifiedName} cannot be put to the human: ${error.message}. Nothing was run; send fewer keys per call.`, 'denied');
        }
        if (error instanceof ApprovalStoreUnavailable) {
          state.decision = 'deny';
          throw new ToolError(refusal(decision, `This client cannot show a confirmation prompt (it does not support MCP elicitation), and its pending approval could not be recorded (${error.message}), so nothing was run.`), 'denied');
        }
        throw error;
      }
      if (typeof answer !== 'string') return runApproved(state, next, answer);
      if (answer === 'declined' || answer === 'deny') {
        state.decision = 'ask:declined';
        throw new ToolError(`Permission denied: the user declined ${state.qualifiedName}. Nothing was run.`, 'denied');
      }
      if (answer === 'session') {
        state.sessionApprovals?.grant(state.qualifiedName);
        state.decision = 'ask:session';
      } else state.decision = 'ask:approved';
      return next();
    }
    state.decision = 'allow';
    return next();
  };
}
