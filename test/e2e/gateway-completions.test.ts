import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { CompleteRequest } from '@modelcontextprotocol/sdk/types.js';
import { startStdioServer, tempWorkspace, type ServerProcess, type TempWorkspace } from '@bulkhead/core/testing';
import { EVERYTHING, GATEWAY_CLI } from './helpers.js';

const PROMPT_SERVER = fileURLToPath(new URL('../fixtures/prompt-server.mjs', import.meta.url));
const TEXT_TEMPLATE = 'demo://resource/dynamic/text/{resourceId}';
const BLOB_TEMPLATE = 'demo://resource/dynamic/blob/{resourceId}';

const errorOf = async (promise: Promise<unknown>): Promise<string> => {
  try {
    await promise;
  } catch (error) {
    return (error as Error).message;
  }
  throw new Error('expected an error');
};

describe('completion/complete through the gateway', () => {
  let ws: TempWorkspace;
  let direct: ServerProcess;
  let gateway: ServerProcess;
  beforeAll(async () => {
    // `twin` is server-everything again: its templates have the same strings, so each is named bulkhead://<ns>/<template>.
    const fixture = (name: string, extra: string[]) => `  ${name}:\n    command: ${process.execPath}\n    args: ${JSON.stringify([PROMPT_SERVER, 'description.txt', ...extra])}\n`;
    ws = tempWorkspace({
      'description.txt': 'Greets someone.\n',
      '.bulkhead/permissions.yaml': `deny:\n  - twin:prompts/get(completable-prompt)\n  - twin:resources/read(${BLOB_TEMPLATE})\n`,
      '.bulkhead/bulkhead.yaml': `servers:\n  everything:\n    command: ${process.execPath}\n    args: [${EVERYTHING}, stdio]\n  twin:\n    command: ${process.execPath}\n    args: [${EVERYTHING}, stdio]\n${fixture('quiet', [])}${fixture('chatty', ['--complete', '150'])}${fixture('brief', ['--complete', '100'])}`,
    });
    [direct, gateway] = await Promise.all([startStdioServer({ script: EVERYTHING, args: ['stdio'] }), startStdioServer({ script: GATEWAY_CLI, args: ['start', '--root', ws.root] })]);
  });
  afterAll(async () => {
    await Promise.all([direct?.close(), gateway?.close()]);
    ws?.cleanup();
  });

  const both = async (own: CompleteRequest['params'], through: CompleteRequest['params']) => [await direct.client.complete(own), await gateway.client.complete(through)];

  it("advertises completions and completes server-everything's completable prompt arguments as a direct connection does", async () => {
    expect(gateway.client.getServerCapabilities()?.completions).toEqual({});
    const cases: Omit<CompleteRequest['params'], 'ref'>[] = [
      { argument: { name: 'department', value: '' } },
      { argument: { name: 'department', value: 'S' } },
      { argument: { name: 'department', value: 'Nothing' } },
      { argument: { name: 'name', value: '' }, context: { arguments: { department: 'Sales' } } },
      { argument: { name: 'name', value: 'A' }, context: { arguments: { department: 'Engineering' } } },
    ];
    for (const params of cases) {
      const [own, through] = await both({ ...params, ref: { type: 'ref/prompt', name: 'completable-prompt' } }, { ...params, ref: { type: 'ref/prompt', name: 'everything__completable-prompt' } });
      expect(through).toEqual(own);
    }
    const [own] = await both({ ref: { type: 'ref/prompt', name: 'completable-prompt' }, argument: { name: 'department', value: 'Ma' } }, { ref: { type: 'ref/prompt', name: 'everything__completable-prompt' }, argument: { name: 'department', value: 'Ma' } });
    expect(own!.completion.values).toEqual(['Marketing']);
  });

  it('completes a resource template argument by the template as the gateway lists it', async () => {
    const listed = (await gateway.client.listResourceTemplates()).resourceTemplates.map((template) => template.uriTemplate);
    expect(listed).toContain(`bulkhead://everything/${TEXT_TEMPLATE}`);
    for (const value of ['7', 'x']) {
      const argument = { name: 'resourceId', value };
      const [own, through] = await both({ ref: { type: 'ref/resource', uri: TEXT_TEMPLATE }, argument }, { ref: { type: 'ref/resource', uri: `bulkhead://everything/${TEXT_TEMPLATE}` }, argument });
      expect(through).toEqual(own);
    }
    // The same template string of two servers names neither.
    expect(await errorOf(gateway.client.complete({ ref: { type: 'ref/resource', uri: TEXT_TEMPLATE }, argument: { name: 'resourceId', value: '7' } }))).toBe(
      `MCP error -32602: ${TEXT_TEMPLATE} is offered by everything and twin; name one as bulkhead://everything/${TEXT_TEMPLATE}, as resources/templates/list does`,
    );
  });

  it('cuts an answer of more than 100 values to 100 with hasMore, and passes one of 100 as it is', async () => {
    const chatty = await gateway.client.complete({ ref: { type: 'ref/prompt', name: 'chatty__greeting' }, argument: { name: 'who', value: 'a' } });
    expect(chatty.completion).toEqual({ values: Array.from({ length: 100 }, (_, i) => `a${i}`), total: 150, hasMore: true });
    const brief = await gateway.client.complete({ ref: { type: 'ref/prompt', name: 'brief__greeting' }, argument: { name: 'who', value: 'b' } });
    expect(brief.completion).toEqual({ values: Array.from({ length: 100 }, (_, i) => `b${i}`), total: 100 });
  });

  it('refuses a server without completions, an unknown ref, a quarantined or denied one, each with why', async () => {
    const complete = (ref: CompleteRequest['params']['ref']) => errorOf(gateway.client.complete({ ref, argument: { name: 'x', value: '' } }));
    expect(await complete({ type: 'ref/prompt', name: 'quiet__greeting' })).toBe('MCP error -32601: quiet does not offer completions (its server declares no completions capability)');
    for (const name of ['everything__nope', 'completable-prompt', 'everything:completable-prompt', 'quiet__bad name']) {
      expect(await complete({ type: 'ref/prompt', name })).toBe(`MCP error -32602: Unknown prompt ${name}; prompts/list lists the prompts there are`);
    }
    for (const uri of ['demo://resource/dynamic/nowhere/{id}', 'bulkhead://nowhere/demo://resource/dynamic/text/{resourceId}', 'bulkhead://everything']) {
      expect(await complete({ type: 'ref/resource', uri })).toBe(`MCP error -32602: Unknown resource or resource template ${uri}; resources/list and resources/templates/list list the ones there are`);
    }
    const permissions = ws.path('.bulkhead/permissions.yaml');
    expect(await complete({ type: 'ref/prompt', name: 'twin__completable-prompt' })).toBe(
      `MCP error -32600: Permission denied: twin:prompts/get is denied by ${permissions} line 2 (\`twin:prompts/get(completable-prompt)\`). To allow it: remove or narrow that deny entry.`,
    );
    expect(await complete({ type: 'ref/resource', uri: `bulkhead://twin/${BLOB_TEMPLATE}` })).toBe(
      `MCP error -32600: Permission denied: twin:resources/read is denied by ${permissions} line 3 (\`twin:resources/read(${BLOB_TEMPLATE})\`). To allow it: remove or narrow that deny entry.`,
    );
    // The rule names one prompt and one template: the others of the same server complete.
    expect((await gateway.client.complete({ ref: { type: 'ref/resource', uri: `bulkhead://twin/${TEXT_TEMPLATE}` }, argument: { name: 'resourceId', value: '3' } })).completion.values).toEqual(['3']);
  });

  it('writes no audit line for completions (a client completes on every keystroke), while a get of the same prompt is audited', async () => {
    await gateway.client.complete({ ref: { type: 'ref/prompt', name: 'everything__completable-prompt' }, argument: { name: 'department', value: 'E' } });
    await gateway.client.getPrompt({ name: 'everything__completable-prompt', arguments: { department: 'Sales', name: 'Eve' } });
    const tools = readFileSync(ws.path('.bulkhead/audit/gateway.jsonl'), 'utf8').trimEnd().split('\n').map((line) => (JSON.parse(line) as { tool: string }).tool);
    expect(tools).toEqual(['everything:prompts/get']);
  });
});
