import { userInfo } from 'node:os';
import { APPROVAL_DECISION_TITLES, ApprovalError, ApprovalStore, describeDecision, minuteTime, neutralizeInvisible, processAlive, shellWord, UsageError, type ApprovalDecision, type PendingApproval } from '@bulkhead/core';

/** One argument's value in a list line. */
const LONGEST_VALUE = 40;
/** All of a list line's arguments. */
const LONGEST_ARGUMENTS = 160;

export interface ApprovalsOutput {
  readonly stdout: readonly string[];
  /** Notes that are not the command's answer (so `list` keeps stdout to one line per approval). */
  readonly stderr: readonly string[];
}

/** Who decides from this terminal, as the decision and the audit log record it. */
export function terminalDecider(): string {
  let name: string | undefined;
  try {
    name = userInfo().username;
  } catch {
    // No passwd entry for this uid (some containers): the environment may still say.
  }
  return `bulkhead approvals (user ${name || process.env.USER || process.env.USERNAME || `uid ${process.getuid?.() ?? 'unknown'}`})`;
}

/**
 * Text the model or its client chose (arguments, the client's name), made safe to print to a
 * terminal: controls and invisible characters are written out, so an escape sequence cannot
 * clear the screen or a carriage return hide what comes before it.
 */
function forTerminal(text: string): string {
  return neutralizeInvisible(text).replace(/\r(?!\n)/g, '\\u{D}');
}

function cut(text: string, longest: number): string {
  return text.length > longest ? `${text.slice(0, longest - 1)}…` : text;
}

function ago(iso: string, now: Date): string {
  const seconds = Math.max(0, Math.round((now.getTime() - Date.parse(iso)) / 1000));
  if (seconds < 60) return `${seconds} s ago`;
  if (seconds < 3600) return `${Math.floor(seconds / 60)} min ago`;
  return `${Math.floor(seconds / 3600)} h ago`;
}

/** `path=notes/todo.md content="# Todo\n…"`: a plain word as it is, anything else as JSON, each cut short. */
function argumentsLine(args: unknown): string {
  const shown = (value: unknown) => (typeof value === 'string' && /^[^\s"]+$/.test(value) ? value : (JSON.stringify(value) ?? String(value)));
  const parts =
    args !== null && typeof args === 'object' && !Array.isArray(args)
      ? Object.entries(args).map(([key, value]) => `${key}=${cut(shown(value), LONGEST_VALUE)}`)
      : [cut(shown(args), LONGEST_VALUE)];
  return forTerminal(cut(parts.join(' '), LONGEST_ARGUMENTS));
}

function fromWhom(approval: PendingApproval): string {
  return forTerminal(`from ${approval.caller || 'an unnamed client'}${approval.principal !== undefined ? ` (token of ${approval.principal})` : ''}`);
}

/** Whether a call still waits on the approval, or only its identical retry will find the decision. */
function callGone(approval: PendingApproval): 'gave up' | 'ended' | undefined {
  if (approval.state === 'timed_out') return 'gave up';
  return processAlive(approval.pid) ? undefined : 'ended';
}

const GONE_NOTE = {
  'gave up': 'the call gave up waiting; an identical retry runs once allowed',
  ended: 'the process that held the call has ended; an identical retry runs once allowed',
} as const;

/** `bulkhead approvals list`: one line per waiting approval, each beginning with its id. */
export function listApprovals(controlDir: string, now = new Date()): ApprovalsOutput {
  const pending = new ApprovalStore(controlDir).pending();
  if (pending.length === 0) return { stdout: [], stderr: ['no approvals are waiting'] };
  return {
    stdout: pending.map((approval) => {
      const gone = callGone(approval);
      const gaveUp = gone ? `  (${GONE_NOTE[gone]})` : '';
      return `${approval.id}  ${forTerminal(approval.tool)}  ${ago(approval.created, now)}  ${fromWhom(approval)}  ${argumentsLine(approval.args)}${gaveUp}`;
    }),
    stderr: [],
  };
}

/** The commands that decide `id`, each with what it does; `flags` repeats how this command found the control-plane folder. */
function decisionCommands(approval: PendingApproval, flags: string): string[] {
  const command: Readonly<Record<ApprovalDecision, string>> = {
    once: `bulkhead approvals allow ${approval.id}${flags}`,
    session: `bulkhead approvals allow ${approval.id} --session${flags}`,
    always: `bulkhead approvals allow ${approval.id} --always${flags}`,
    deny: `bulkhead approvals deny ${approval.id}${flags}`,
  };
  const width = Math.max(...approval.offers.map((offer) => command[offer].length));
  return approval.offers.map((offer) => `  ${command[offer].padEnd(width)}   ${APPROVAL_DECISION_TITLES[offer]}`);
}

function status(approval: PendingApproval, now: Date): string {
  if (approval.decision) {
    const rule = approval.decision.rule !== undefined ? `; the rule ${approval.decision.rule}` : '';
    const used = approval.used !== undefined ? `; used by a call at ${approval.used}` : '';
    return `decided: ${describeDecision(approval.decision)}${rule}${used}`;
  }
  const gone = callGone(approval);
  const held = gone ? `waiting: ${GONE_NOTE[gone]}` : 'waiting: the call is held until it is decided or its wait runs out';
  return `${held} (kept until ${minuteTime(approval.expires)}; asked ${ago(approval.created, now)})`;
}

/** `bulkhead approvals show ID`: the prompt, the preview, the reason and how to decide. */
/** Whether every line of the preview is in the prompt as the gate wrote it (each indented on a line of its own). */
function previewShownWhole(prompt: string, preview: string): boolean {
  const promptLines = new Set(prompt.split('\n'));
  return preview.replace(/\n$/, '').split('\n').every((line) => promptLines.has(`  ${line}`));
}

export function showApproval(controlDir: string, id: string, flags: string, now = new Date()): ApprovalsOutput {
  const approval = new ApprovalStore(controlDir).get(id);
  if (!approval) throw new ApprovalError(`there is no approval ${id} (an expired one is removed; \`bulkhead approvals list\` shows the waiting ones)`);
  const lines = [
    `approval ${approval.id}: ${forTerminal(approval.tool)}, asked at ${minuteTime(approval.created)} ${fromWhom(approval)} (held by ${forTerminal(approval.server)}, pid ${approval.pid})`,
    status(approval, now),
    '',
    forTerminal(approval.prompt),
  ];
  if (approval.rest.length > 0) lines.push('', 'The values the prompt cut, in full:', ...approval.rest.map(forTerminal));
  // The gate puts the preview into the prompt (indented, cut past 40 lines); it is repeated in full only when the prompt cut some of it.
  if (approval.preview && 'text' in approval.preview && !previewShownWhole(approval.prompt, approval.preview.text)) lines.push('', 'The preview in full:', forTerminal(approval.preview.text));
  if (approval.preview && 'failed' in approval.preview) lines.push('', `No preview: ${forTerminal(approval.preview.failed)}`);
  if (approval.risk !== undefined && !approval.prompt.includes(approval.risk)) lines.push('', `Risk: ${forTerminal(approval.risk)}`);
  if (!approval.prompt.includes(approval.reason)) lines.push('', `Asked because: ${forTerminal(approval.reason)}`);
  if (!approval.decision) lines.push('', 'Decide with one of:', ...decisionCommands(approval, flags));
  return { stdout: lines, stderr: [] };
}

const DECIDED_LINE: Readonly<Record<ApprovalDecision, (tool: string) => string>> = {
  once: (tool) => `allowed ${tool} once`,
  session: (tool) => `allowed ${tool} for the rest of its session`,
  always: (tool) => `always allowed ${tool}`,
  deny: (tool) => `denied ${tool}`,
};

/** `bulkhead approvals allow ID [--session | --always]` and `deny ID`; refusals are ApprovalErrors. */
export function decideApproval(controlDir: string, id: string, decision: ApprovalDecision, by = terminalDecider()): ApprovalsOutput {
  const decided = new ApprovalStore(controlDir).decide(id, decision, by);
  const rule = decided.decision?.rule !== undefined ? `; the rule ${decided.decision.rule}` : '';
  return { stdout: [`approval ${decided.id}: ${DECIDED_LINE[decision](forTerminal(decided.tool))}${rule}`], stderr: [] };
}

const USAGE = 'usage: bulkhead approvals [list | show ID | allow ID [--session | --always] | deny ID]';

/** The flags that found the control-plane folder, for the commands `show` prints. */
function folderFlags(values: { root?: string[]; config?: string }, controlDir: string): string {
  if (values.config !== undefined) return ` --config ${shellWord(controlDir)}`;
  return (values.root ?? []).map((root) => ` --root ${shellWord(root)}`).join('');
}

/** What `decide` a command line means. */
function decisionOf(action: 'allow' | 'deny', values: { session?: boolean; always?: boolean }): ApprovalDecision {
  if (action === 'deny') return 'deny';
  return values.always ? 'always' : values.session ? 'session' : 'once';
}

/** `bulkhead approvals …`: a refusal of the store exits 1 with its reason on stderr; a mistake in the command line is a usage error (2). */
export function approvals(positionals: readonly string[], values: { root?: string[]; config?: string; session?: boolean; always?: boolean }, controlDir: string): number {
  const [action = 'list', id, ...extra] = positionals;
  if (action !== 'list' && action !== 'show' && action !== 'allow' && action !== 'deny') throw new UsageError(`unknown approvals action ${action}; ${USAGE}`);
  if (action === 'list' && id !== undefined) throw new UsageError(`approvals list takes no id; ${USAGE}`);
  if (action !== 'list' && id === undefined) throw new UsageError(`approvals ${action} needs the id of an approval (bulkhead approvals list shows them)`);
  if (extra.length > 0) throw new UsageError(`approvals ${action} takes one id (got ${positionals.slice(1).join(' ')}); ${USAGE}`);
  if (values.session && values.always) throw new UsageError('--session and --always are two different decisions; give one of them');
  if ((values.session || values.always) && action !== 'allow') throw new UsageError(`--${values.session ? 'session' : 'always'} goes with allow ID; ${USAGE}`);
  let output: ApprovalsOutput;
  try {
    if (action === 'list') output = listApprovals(controlDir);
    else if (action === 'show') output = showApproval(controlDir, id!, folderFlags(values, controlDir));
    else output = decideApproval(controlDir, id!, decisionOf(action, values));
  } catch (error) {
    if (!(error instanceof ApprovalError)) throw error;
    process.stderr.write(`bulkhead: ${error.message}\n`);
    return 1;
  }
  for (const line of output.stderr) process.stderr.write(`bulkhead: ${line}\n`);
  for (const line of output.stdout) process.stdout.write(`${line}\n`);
  return 0;
}
