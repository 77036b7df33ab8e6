// Running the official MCP conformance suite (@modelcontextprotocol/conformance, its `conformance
// server` command) against a server over Streamable HTTP and reading back the checks each scenario
// made. The suite needs Node 22 (it calls fs.globSync at import), so
// its CLI runs under a Node 22 from the registry, kept in node_modules/.cache between runs.
import { spawn } from 'node:child_process';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { node22, REPO, type Node22 } from '../e2e/packing.js';

const require = createRequire(import.meta.url);

export const CONFORMANCE_CLI = join(dirname(require.resolve('@modelcontextprotocol/conformance/package.json')), 'dist', 'index.js');
export const CONFORMANCE_VERSION = (JSON.parse(readFileSync(join(dirname(CONFORMANCE_CLI), '..', 'package.json'), 'utf8')) as { version: string }).version;
/** The resources, prompts and completions part of the suite's reference server, ported (see its header). */
export const REFERENCE_SERVER = fileURLToPath(new URL('./reference-server.mjs', import.meta.url));

/**
 * The suite's server scenarios about resources, prompts and completions (`conformance list
 * --server`), and the three of the session itself that any server passes: initialize, ping and
 * logging/setLevel (the gateway answers the first two and forwards the third).
 */
export const SCENARIOS = [
  'server-initialize',
  'ping',
  'logging-set-level',
  'resources-list',
  'resources-read-text',
  'resources-read-binary',
  'resources-templates-read',
  'resources-subscribe',
  'resources-unsubscribe',
  'prompts-list',
  'prompts-get-simple',
  'prompts-get-with-args',
  'prompts-get-embedded-resource',
  'prompts-get-with-image',
  'completion-complete',
] as const;
export type Scenario = (typeof SCENARIOS)[number];

const STATUSES = ['SUCCESS', 'FAILURE', 'WARNING', 'SKIPPED', 'INFO'] as const;
export type CheckStatus = (typeof STATUSES)[number];

/** One check of a scenario, as the suite wrote it in checks.json: its id, status and error message. */
export interface Check {
  readonly id: string;
  readonly status: CheckStatus;
  readonly errorMessage?: string;
}

/** The checks.json the suite writes, narrowed to what the tests compare; anything else in it is a changed suite. */
function parseChecks(json: unknown, file: string): Check[] {
  if (!Array.isArray(json)) throw new Error(`${file} is not a list of checks`);
  return json.map((entry: unknown, index) => {
    const check = entry as { id?: unknown; status?: unknown; errorMessage?: unknown } | null;
    if (typeof check?.id !== 'string') throw new Error(`${file}: check ${index} has no id`);
    if (!STATUSES.includes(check.status as CheckStatus)) throw new Error(`${file}: check ${check.id} has status ${String(check.status)}`);
    if (check.errorMessage !== undefined && typeof check.errorMessage !== 'string') throw new Error(`${file}: check ${check.id} has an errorMessage that is not text`);
    return { id: check.id, status: check.status as CheckStatus, ...(check.errorMessage === undefined ? {} : { errorMessage: check.errorMessage }) };
  });
}

/** The runner's output kept for an error message: its last part, as each failing scenario prints its whole description. */
const OUTPUT_KEPT = 4000;
const RUNNER = fileURLToPath(new URL('./run-scenarios.mjs', import.meta.url));

/**
 * Every scenario against `url`, by `conformance server --url <url> --scenario <scenario> -o <dir>`
 * (all in one process under `node`, see run-scenarios.mjs); the checks each saved, by scenario. The
 * exit code says only whether some check failed, so the checks are what counts; a scenario that
 * saved none (the runner could not start, or was killed at the timeout) throws with the end of the
 * output.
 */
export async function runScenarios(node: string, url: string, outputDir: string, timeoutMs = 60_000): Promise<Record<Scenario, Check[]>> {
  const output = await new Promise<string>((resolve, reject) => {
    const child = spawn(node, [RUNNER, CONFORMANCE_CLI, url, outputDir, ...SCENARIOS], { stdio: ['ignore', 'pipe', 'pipe'] });
    let kept = '';
    const keep = (chunk: Buffer) => (kept = (kept + chunk.toString()).slice(-OUTPUT_KEPT));
    child.stdout.on('data', keep);
    child.stderr.on('data', keep);
    const timer = setTimeout(() => child.kill('SIGKILL'), timeoutMs);
    child.once('error', (error) => {
      clearTimeout(timer);
      reject(error);
    });
    child.once('close', (code, signal) => {
      clearTimeout(timer);
      resolve(`exit ${code ?? signal}:\n${kept}`);
    });
  });
  const checks = (scenario: Scenario): Check[] => {
    // The suite saves into a folder named after the scenario and the time: the only one in its folder.
    const dir = join(outputDir, scenario);
    const saved = existsSync(dir) ? readdirSync(dir).map((name) => join(dir, name, 'checks.json')).filter((file) => existsSync(file)) : [];
    if (saved.length !== 1) throw new Error(`conformance ${scenario} against ${url} saved ${saved.length} checks files (${output})`);
    return parseChecks(JSON.parse(readFileSync(saved[0]!, 'utf8')), saved[0]!);
  };
  return Object.fromEntries(SCENARIOS.map((scenario) => [scenario, checks(scenario)])) as Record<Scenario, Check[]>;
}

/** The Node 22 the suite runs under: this one when it is 22, else node-<platform>-<arch>@22, fetched once into node_modules/.cache. */
export function conformanceNode(label: string): Promise<Node22> {
  return node22(join(REPO, 'node_modules', '.cache', 'bulkhead-node22'), label);
}
