// The official MCP conformance suite's resources, prompts and completion scenarios
// (@modelcontextprotocol/conformance, `conformance server --scenario …`) run against the gateway
// started as a user starts it, over Streamable HTTP, in front of two real servers over stdio: the
// suite's reference server (its resources, prompts and completions, ported: the npm package does
// not ship it) and @modelcontextprotocol/server-everything. Each server is run through the same
// scenarios directly too, so a check that fails through the gateway but passes directly is the
// gateway's. Every check's outcome and message is compared with test/conformance/expected.ts: a
// relay that regresses fails here, and so does a scenario that starts passing, to be written down.
// The suite's client sends no Authorization header, so the gateway runs with --no-auth, its
// documented loopback-only way to serve without a bearer token.
import { spawn, type ChildProcess } from 'node:child_process';
import { createServer } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { GetPromptResult } from '@modelcontextprotocol/sdk/types.js';
import { connectHttp, startHttpServer, tempWorkspace, type HttpServerProcess, type TempWorkspace } from '@bulkhead/core/testing';
import { EVERYTHING, GATEWAY_CLI } from './helpers.js';
import { progress, scratchDir, seconds } from './packing.js';
import { DIRECT_EVERYTHING, DIRECT_REFERENCE, THROUGH_GATEWAY } from '../conformance/expected.js';
import { conformanceNode, REFERENCE_SERVER, runScenarios, SCENARIOS, type Check, type Scenario } from '../conformance/suite.js';

const LABEL = 'conformance';
type Results = Record<Scenario, Check[]>;

let ws: TempWorkspace;
const scratch = scratchDir('bulkhead-conformance-');
let node: string | undefined;
let skipped: string | undefined;
let gateway: HttpServerProcess | undefined;
const children: ChildProcess[] = [];
let referenceUrl = '';

function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const probe = createServer();
    probe.once('error', reject);
    probe.listen(0, '127.0.0.1', () => {
      const { port } = probe.address() as { port: number };
      probe.close(() => resolve(port));
    });
  });
}

/** Starts `node <script> streamableHttp` with PORT, as each server's README says, and waits for its listening line. */
async function startHttpChild(script: string, listening: RegExp): Promise<string> {
  const port = await freePort();
  const child = spawn(process.execPath, [script, 'streamableHttp'], { env: { PATH: process.env['PATH'] ?? '', PORT: String(port) }, stdio: ['ignore', 'pipe', 'pipe'], detached: true });
  children.push(child);
  let output = '';
  await new Promise<void>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`${script} did not start listening within 15 s:\n${output.slice(-2000)}`)), 15_000);
    const seen = (chunk: Buffer) => {
      output += chunk.toString();
      if (listening.test(output)) {
        clearTimeout(timer);
        resolve();
      }
    };
    child.stdout!.on('data', seen);
    child.stderr!.on('data', seen);
    child.once('exit', (code) => {
      clearTimeout(timer);
      reject(new Error(`${script} exited with code ${code}:\n${output.slice(-2000)}`));
    });
  });
  return `http://127.0.0.1:${port}/mcp`;
}

function summary(results: Results): string {
  return SCENARIOS.map((scenario) => `${scenario}: ${results[scenario].map((check) => check.status).join(', ')}`).join('; ');
}

/** Each target's run, started as soon as its server is up so that the three overlap; settled, so none is left unhandled. */
const runs: Partial<Record<'reference' | 'everything' | 'gateway', Promise<{ results: Results } | { error: unknown }>>> = {};

function startRun(target: keyof typeof runs, url: string): void {
  const started = performance.now();
  runs[target] = runScenarios(node!, url, `${scratch.path}/${target}`).then(
    (results) => {
      progress(LABEL, `${target}: ${SCENARIOS.length} scenarios in ${seconds(performance.now() - started)}: ${summary(results)}`);
      return { results };
    },
    (error: unknown) => ({ error }),
  );
}

async function resultsOf(target: keyof typeof runs): Promise<Results> {
  const run = await runs[target];
  if (!run) throw new Error(`the ${target} run never started (see the errors of beforeAll)`);
  if ('error' in run) throw run.error;
  return run.results;
}

beforeAll(async () => {
  const got = await conformanceNode(LABEL);
  if ('skip' in got) {
    skipped = got.skip;
    return;
  }
  node = got.node;
  const [everything, reference] = await Promise.all([startHttpChild(EVERYTHING, /listening on port \d+/), startHttpChild(REFERENCE_SERVER, /listening on http:/)]);
  startRun('everything', everything);
  startRun('reference', reference);
  referenceUrl = reference;
  // The bulkhead.yaml a user writes for two servers from npm: no trust, no permissions.yaml.
  ws = tempWorkspace({
    '.bulkhead/bulkhead.yaml': `servers:\n  everything:\n    command: ${process.execPath}\n    args: [${EVERYTHING}, stdio]\n  reference:\n    command: ${process.execPath}\n    args: [${REFERENCE_SERVER}, stdio]\n`,
  });
  gateway = await startHttpServer({ script: GATEWAY_CLI, args: ['start', '--root', ws.root, '--no-auth'], cwd: ws.root });
  // Both downstreams up before any scenario connects: the gateway reports each on stderr.
  const deadline = Date.now() + 20_000;
  while (!(/reference is up/.test(gateway.stderr()) && /everything is up/.test(gateway.stderr()))) {
    if (Date.now() > deadline) throw new Error(`the gateway did not report both servers up within 20 s:\n${gateway.stderr().slice(-2000)}`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  startRun('gateway', gateway.url);
}, 120_000);

afterAll(async () => {
  await Promise.all(Object.values(runs));
  await gateway?.close();
  for (const child of children) {
    if (child.pid !== undefined && child.exitCode === null && child.signalCode === null) process.kill(-child.pid, 'SIGKILL');
  }
  ws?.cleanup();
  scratch.remove();
});

describe('the MCP conformance suite, resources, prompts and completion scenarios', () => {
  it('the reference server passes every one directly', async (ctx) => {
    if (skipped) return ctx.skip(skipped);
    expect(await resultsOf('reference')).toEqual(DIRECT_REFERENCE);
  });

  it('server-everything directly passes those its names allow', async (ctx) => {
    if (skipped) return ctx.skip(skipped);
    expect(await resultsOf('everything')).toEqual(DIRECT_EVERYTHING);
  });

  it('through the gateway, in front of both over stdio', async (ctx) => {
    if (skipped) return ctx.skip(skipped);
    expect(await resultsOf('gateway')).toEqual(THROUGH_GATEWAY);
  });
});

// The scenarios that fail through the gateway ask for a prompt by its bare name. Their requests,
// with the name the gateway lists, get what the reference server answers directly, its text
// wrapped as a third-party server's (bulkhead.yaml does not trust its results) and an embedded
// resource's URI in the form that reads back from it: the name is the only reason they fail.
describe('the requests of the scenarios that fail through the gateway, with the names it lists', () => {
  const wrapped = (text: string) => `<untrusted_external_content source="reference (third-party MCP server)">\n${text}\n</untrusted_external_content>`;
  /**
   * A direct answer as the gateway gives it: each text, and each embedded text resource's text,
   * wrapped; images as they are. The one embedded resource, the scenario's test://example-resource,
   * is not one the reference server lists, so it reads back by its bulkhead://reference/ form.
   */
  const asRelayed = (result: GetPromptResult): GetPromptResult => ({
    messages: result.messages.map((message) => {
      const content = message.content;
      if (content.type === 'text') return { ...message, content: { ...content, text: wrapped(content.text) } };
      if (content.type === 'resource' && 'text' in content.resource) {
        return { ...message, content: { ...content, resource: { ...content.resource, uri: `bulkhead://reference/${content.resource.uri}`, text: wrapped(content.resource.text) } } };
      }
      return message;
    }),
  });
  const requests: [Scenario, string, Record<string, string> | undefined][] = [
    ['prompts-get-simple', 'test_simple_prompt', undefined],
    ['prompts-get-with-args', 'test_prompt_with_arguments', { arg1: 'testValue1', arg2: 'testValue2' }],
    ['prompts-get-embedded-resource', 'test_prompt_with_embedded_resource', { resourceUri: 'test://example-resource' }],
    ['prompts-get-with-image', 'test_prompt_with_image', undefined],
  ];

  it('prompts/get of reference__<name> answers as the reference server does, and completion/complete of it too', async (ctx) => {
    if (skipped) return ctx.skip(skipped);
    const direct = await connectHttp(referenceUrl);
    try {
      for (const [scenario, name, args] of requests) {
        const expected = asRelayed(await direct.getPrompt({ name, ...(args ? { arguments: args } : {}) }));
        expect(await gateway!.client.getPrompt({ name: `reference__${name}`, ...(args ? { arguments: args } : {}) }), scenario).toEqual(expected);
      }
      const argument = { name: 'arg1', value: 'test' };
      expect(await gateway!.client.complete({ ref: { type: 'ref/prompt', name: 'reference__test_prompt_with_arguments' }, argument })).toEqual(
        await direct.complete({ ref: { type: 'ref/prompt', name: 'test_prompt_with_arguments' }, argument }),
      );
    } finally {
      await direct.close();
    }
  });
});
