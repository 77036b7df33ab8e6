import { existsSync, mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { createToolServer, DEFAULT_OUTPUT_LIMITS, errorMessage, loadYamlFile, PRIVATE_CONTROL_FOLDERS, privateControlFolderPaths, Roots, ToolError, type CommonOptions, type RiskAssessment, type RiskAssessor, type ToolServer } from '@bulkhead/core';
import { CommandClassifier, type Classification } from './classify/classify.js';
import type { ShellCapabilities } from './context.js';
import { checkoutMaker } from './lib/checkout.js';
import { commandEnvironment } from './lib/environment.js';
import { workingDirectory } from './lib/working-directory.js';
import { SHELL_POLICY_FILE, shellPolicySchema, type ShellPolicy } from './policy.js';
import { describeContainment } from './run/containment.js';
import { probeSandbox } from './run/sandbox.js';
import { startCommand } from './run/start.js';
import type { SandboxSpec } from './run/types.js';
import { TaskManager } from './tasks/task-manager.js';
import { listTasks } from './tools/list_tasks.js';
import { runInSandbox } from './tools/run_in_sandbox.js';
import { runShell } from './tools/run_shell.js';
import { shellKill } from './tools/shell_kill.js';
import { taskOutput } from './tools/task_output.js';
import { waitTask } from './tools/wait_task.js';

export const SHELL_VERSION = '0.1.0';
export const shellTools = [runShell, taskOutput, waitTask, shellKill, listTasks, runInSandbox];
const BACKGROUND_TOOLS = new Set(['task_output', 'wait_task', 'shell_kill', 'list_tasks']);

/** Finished background tasks remembered (with their logs) after they end. */
const FINISHED_TASKS_KEPT = 200;

export type ShellServerOptions = Pick<CommonOptions, 'roots' | 'controlDir' | 'gate' | 'audit'> & {
  /** Overrides shell_policy.yaml (tests build policies in code). */
  readonly policy?: ShellPolicy;
  /** Replaces the server's environment as the source of PATH, HOME, LANG, … and of where bwrap is found (tests). */
  readonly environment?: NodeJS.ProcessEnv;
};

export function loadShellPolicy(controlDir: string): ShellPolicy {
  return loadYamlFile(controlDir, SHELL_POLICY_FILE, shellPolicySchema).value;
}

/** What git runs by itself from a repository (hooks, config naming programs, attributes): a command may not plant it for later. */
const GIT_PROGRAM_SOURCES = ['config', 'hooks', 'info'];

function sandboxSpec(policy: ShellPolicy, roots: readonly string[], controlDir: string): SandboxSpec {
  const gitParts = roots.flatMap((root) => GIT_PROGRAM_SOURCES.map((part) => join(root, '.git', part))).filter((path) => existsSync(path));
  const secret = [...new Set(privateControlFolderPaths(controlDir).map((form) => form.path))];
  return { kind: policy.sandbox, network: policy.network, writable: roots, readOnly: [controlDir, ...gitParts], secret, tmpfsBytes: policy.limits.tmpfs_max_bytes };
}

/**
 * Makes the private folders (mode 0700) of an existing control-plane folder before a sandboxed
 * command starts: one made later (the first pending approval, the console's first start) would
 * otherwise show through the folder's read-only bind while the command runs, where no empty
 * folder was mounted over it.
 */
function makePrivateFolders(controlDir: string): void {
  if (!existsSync(controlDir)) return;
  for (const { name } of Object.values(PRIVATE_CONTROL_FOLDERS)) {
    try {
      mkdirSync(join(controlDir, name), { mode: 0o700 });
    } catch {
      // There already, or a control-plane folder this user cannot write: then the gate, run as the
      // same user, cannot make the folder either, and the command runs all the same.
    }
  }
}

/** How this server contains commands, in one line (start-up message and instructions). */
export function shellContainment(policy: ShellPolicy, roots: readonly string[], controlDir: string): string {
  return describeContainment(sandboxSpec(policy, roots, controlDir), policy.limits.max_processes);
}

function shellRoots(roots: readonly string[], controlDir: string): Roots {
  return new Roots(roots, { controlDir, denyRead: [], protectWrite: [], protectWriteSource: SHELL_POLICY_FILE });
}

/** Loads the classifier once, on first use: the grammar is WebAssembly and takes a moment. */
function classifierLoader(paths: Roots, policy: ShellPolicy): () => Promise<CommandClassifier> {
  let classifier: Promise<CommandClassifier> | undefined;
  return () => (classifier ??= CommandClassifier.load({ roots: paths.real, allowCommands: policy.allow_commands, denyCommands: policy.deny_commands, projectCommands: policy.project_commands }));
}

/** The classification in words for the approval prompt: "classified medium: writes files (…); containment: …". */
function classificationText(classification: Classification): string {
  return `classified ${classification.tier}: ${classification.reasons.length > 0 ? classification.reasons.join('; ') : 'only reads'}`;
}

function riskAssessors(paths: Roots, loadClassifier: () => Promise<CommandClassifier>, containment: () => string): Record<string, RiskAssessor> {
  // A command that cannot be placed or parsed is as risky as it gets; the tool itself then says why.
  const assess = async (command: unknown, cwd: unknown): Promise<RiskAssessment> => {
    try {
      const folder = await workingDirectory(paths, typeof cwd === 'string' ? cwd : undefined);
      const classification = (await loadClassifier()).classify(String(command), folder);
      return { risk: classification.tier, reason: classificationText(classification) };
    } catch (error) {
      return { risk: 'high', reason: `classified high: the command cannot be placed or read (${errorMessage(error)})` };
    }
  };
  return {
    run_shell: async (args) => {
      const assessed = await assess(args['command'], args['cwd']);
      return { ...assessed, reason: `${assessed.reason}; containment: ${containment()}` };
    },
    run_in_sandbox: (args) => assess(args['command'], undefined),
  };
}

/** Worked out on first use: it probes for bubblewrap and cgroups. */
function containmentOnce(describe: () => string): () => string {
  let described: string | undefined;
  return () => (described ??= describe());
}

/**
 * The per-call risk of the shell tools, for a gateway in front of a shell server: the tier of the
 * parsed command under the same roots and shell_policy.yaml the server uses.
 */
export function shellRiskAssessors(setup: { readonly roots: readonly string[]; readonly controlDir: string }): Record<string, RiskAssessor> {
  const policy = loadShellPolicy(setup.controlDir);
  const paths = shellRoots(setup.roots, setup.controlDir);
  return riskAssessors(paths, classifierLoader(paths, policy), containmentOnce(() => shellContainment(policy, paths.real, paths.controlDir)));
}

/** The shell server: commands parsed and tiered, run contained, with bounded output and background tasks. */
export function createShellServer(options: ShellServerOptions): ToolServer {
  const policy = options.policy ?? loadShellPolicy(options.controlDir);
  const paths = shellRoots(options.roots, options.controlDir);
  const loadClassifier = classifierLoader(paths, policy);
  const environment = options.environment ?? process.env;
  const spec = sandboxSpec(policy, paths.real, paths.controlDir);
  // Built per call: a repository made since the last command gets its .git parts held read-only too.
  const sandbox = (): SandboxSpec => {
    const probe = probeSandbox(spec.kind, environment['PATH']);
    if (!probe.available) throw new ToolError(`Refused: shell_policy.yaml asks for the bubblewrap sandbox, which is unavailable here: ${probe.reason}. To fix: ${probe.fix}. Nothing was run.`, 'sandbox_unavailable');
    if (spec.kind === 'bubblewrap') makePrivateFolders(paths.controlDir);
    return sandboxSpec(policy, paths.real, paths.controlDir);
  };
  let server: ToolServer | undefined;
  const tasks = new TaskManager({
    stateDir: join(paths.controlDir, 'shell'),
    start: startCommand,
    maxTasks: policy.limits.max_background_tasks,
    maxFinishedTasks: FINISHED_TASKS_KEPT,
    maxLogBytes: policy.limits.task_log_max_bytes,
    onTaskEnd: (ended) => void server?.sendLog('info', { event: 'background task ended', task_id: ended.task.id, state: ended.task.state, exit_code: ended.task.exitCode }),
  });
  const capabilities: ShellCapabilities = {
    paths,
    limits: policy.limits,
    classifier: loadClassifier,
    sandbox,
    env: commandEnvironment(environment, policy.env_passthrough),
    tasks,
    checkouts: checkoutMaker(paths),
  };
  const background = policy.limits.max_background_tasks > 0;
  server = createToolServer<ShellCapabilities>({
    namespace: 'shell',
    version: SHELL_VERSION,
    instructions:
      `Runs bash commands in folders under ${paths.real.join(', ')} (default ${paths.primary}). Containment: ${describeContainment(spec, policy.limits.max_processes)}. ` +
      'Each command is parsed and tiered low/medium/high by risk before it runs; stdin is closed and only PATH, HOME, LANG, LC_*, TERM and the variables the policy lists are passed.',
    tools: background ? shellTools : shellTools.filter((tool) => !BACKGROUND_TOOLS.has(tool.name)),
    policy,
    capabilities,
    controlDir: options.controlDir,
    gate: options.gate,
    audit: options.audit,
    // The command's output has its own cap (limits.max_output_bytes); this one bounds what a whole reply carries.
    limits: { ...DEFAULT_OUTPUT_LIMITS, maxOutputBytes: policy.limits.max_output_bytes === 0 ? 0 : Math.max(DEFAULT_OUTPUT_LIMITS.maxOutputBytes, policy.limits.max_output_bytes * 2) },
    assessRisk: riskAssessors(paths, loadClassifier, containmentOnce(() => describeContainment(spec, policy.limits.max_processes))),
    onClose: () => tasks.closeAll(),
  });
  return server;
}
