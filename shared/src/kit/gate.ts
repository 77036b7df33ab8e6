import { ElicitResultSchema } from '@modelcontextprotocol/sdk/types.js';
import type { Decision, PermissionGate } from '../permissions/gate.js';
import { redactArguments } from '../audit/redact.js';
import { ToolError } from '../errors.js';
import type { CallState } from './call-state.js';
import type { Middleware } from './compose.js';

const ELICIT_TIMEOUT_MS = 10 * 60 * 1000;

/** How the allow/ask/deny gate is applied for one server. */
export type GateMode =
  | { readonly kind: 'self'; readonly permissions: PermissionGate }
  /** A gateway in front already decided; this server only enforces its hard boundaries. */
  | { readonly kind: 'gateway' };

function refusal(decision: Decision, tail: string): string {
  return `Permission denied: ${decision.reason}. ${tail}${decision.remedy ? ` To allow it: ${decision.remedy}.` : ''}`;
}

async function askHuman(state: CallState, decision: Decision): Promise<boolean> {
  const preview = JSON.stringify(redactArguments(state.args));
  const result = await state.extra.sendRequest(
    {
      method: 'elicitation/create',
      params: {
        mode: 'form',
        message: `Allow ${state.qualifiedName}?\nArguments: ${preview.length > 600 ? `${preview.slice(0, 600)}…` : preview}\nReason for asking: ${decision.reason}.`,
        requestedSchema: {
          type: 'object',
          properties: { approve: { type: 'boolean', title: `Allow ${state.qualifiedName} this once`, default: false } },
          required: ['approve'],
        },
      },
    },
    ElicitResultSchema,
    { signal: state.signal, timeout: ELICIT_TIMEOUT_MS },
  );
  return result.action === 'accept' && result.content?.['approve'] === true;
}

/** The permission gate as a middleware: a denied call never reaches the tool. */
export function gateMiddleware(mode: GateMode): Middleware<CallState> {
  return async (state, next) => {
    if (mode.kind === 'gateway') {
      state.decision = 'gateway';
      return next();
    }
    const risk = (await state.target.assessRisk?.(state.args)) ?? state.target.risk;
    const decision = mode.permissions.decide({
      qualifiedName: state.qualifiedName,
      risk,
      args: state.args,
      ...(state.target.subjectArg ? { subjectArg: state.target.subjectArg } : {}),
    });
    if (decision.verdict === 'deny') {
      state.decision = 'deny';
      throw new ToolError(refusal(decision, 'Nothing was run.'), 'denied');
    }
    if (decision.verdict === 'ask') {
      if (!state.clientCanElicit()) {
        state.decision = 'deny';
        const why = state.unconfirmable ?? 'This client cannot show a confirmation prompt (it does not support MCP elicitation)';
        throw new ToolError(refusal(decision, `${why}, so nothing was run.`), 'denied');
      }
      const approved = await askHuman(state, decision);
      if (!approved) {
        state.decision = 'ask:declined';
        throw new ToolError(`Permission denied: the user declined ${state.qualifiedName}. Nothing was run.`, 'denied');
      }
      state.decision = 'ask:approved';
      return next();
    }
    state.decision = 'allow';
    return next();
  };
}
