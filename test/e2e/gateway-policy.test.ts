import { readFileSync } from 'node:fs';
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { afterEach, describe, expect, it } from 'vitest';
import { startStdioServer, tempWorkspace, type ServerProcess, type TempWorkspace } from '@bulkhead/core/testing';
import { BIG_RESULTS_SERVER, GATEWAY_CLI, EVERYTHING_ENTRY, ODD_NAMES_SERVER, text } from './helpers.js';

const run = promisify(execFile);

let ws: TempWorkspace;
let gateway: ServerProcess | undefined;

afterEach(async () => {
  await gateway?.close();
  gateway = undefined;
  ws?.cleanup();
});

const auditLines = (file: string) => readFileSync(file, 'utf8').trimEnd().split('\n').map((line) => JSON.parse(line) as Record<string, unknown>);

describe('elicitation through the gateway', () => {
  it('runs a medium-risk call the human approves and not one the human declines', async () => {
    ws = tempWorkspace({ '.bulkhead/bulkhead.yaml': `servers:\n${EVERYTHING_ENTRY}` });
    const answers = ['accept', 'decline'] as const;
    const asked: string[] = [];
    gateway = await startStdioServer({
      script: GATEWAY_CLI,
      args: ['start', '--root', ws.root],
      elicit: (message) => {
        asked.push(message);
        const answer = answers[asked.length - 1]!;
        return answer === 'accept' ? { action: 'accept', content: { approve: true } } : { action: 'decline' };
      },
    });
    const approved = await gateway.client.callTool({ name: 'call_tool', arguments: { name: 'everything__toggle-simulated-logging', arguments: {} } });
    expect(approved.isError).toBeFalsy();
    expect(asked[0]).toContain('Allow everything:toggle-simulated-logging?');
    const declined = await gateway.client.callTool({ name: 'call_tool', arguments: { name: 'everything__toggle-simulated-logging', arguments: {} } });
    expect(text(declined)).toBe('Permission denied: the user declined everything:toggle-simulated-logging. Nothing was run.');
    const decisions = auditLines(ws.path('.bulkhead/audit/gateway.jsonl')).filter((e) => e['tool'] === 'everything:toggle-simulated-logging').map((e) => [e['decision'], e['outcome']]);
    expect(decisions).toEqual([
      ['ask:approved', 'ok'],
      ['ask:declined', 'denied'],
    ]);
  });
});

describe('hooks.yaml', () => {
  it('blocks a call when a pre_tool hook exits 2, with its stderr as the reason', async () => {
    ws = tempWorkspace({
      'notes.txt': 'x\n',
      '.bulkhead/bulkhead.yaml': 'servers:\n  fs: {}\n',
      '.bulkhead/hooks.yaml': 'pre_tool:\n  - matcher: "fs:read_file"\n    command: "echo no reading on Fridays >&2; exit 2"\n',
    });
    gateway = await startStdioServer({ script: GATEWAY_CLI, args: ['start', '--root', ws.root] });
    const blocked = await gateway.client.callTool({ name: 'fs__read_file', arguments: { path: 'notes.txt' } });
    expect(text(blocked)).toBe('Blocked by a pre_tool hook (fs:read_file): no reading on Fridays. Nothing was run.');
    const grep = await gateway.client.callTool({ name: 'fs__grep', arguments: { pattern: 'x' } });
    expect(text(grep)).toBe('notes.txt');
    const hookLines = auditLines(ws.path('.bulkhead/audit/gateway.jsonl')).filter((e) => e['tool'] === 'hook:pre_tool');
    expect(hookLines).toHaveLength(1);
    expect(hookLines[0]).toMatchObject({ outcome: 'denied', error: 'no reading on Fridays' });
  });

  it('lets a pre_tool hook rewrite the arguments, which are validated again, and runs post_tool hooks with the result', async () => {
    ws = tempWorkspace({
      'public.txt': 'public\n',
      'private.txt': 'private\n',
      '.bulkhead/bulkhead.yaml': 'servers:\n  fs: {}\n',
      '.bulkhead/hooks.yaml': [
        'pre_tool:',
        '  - matcher: "fs:read_file"',
        `    command: "echo '{\\"arguments\\": {\\"path\\": \\"public.txt\\"}}'"`,
        '  - matcher: "fs:grep"',
        `    command: "echo '{\\"arguments\\": {\\"pattern\\": 42}}'"`,
        'post_tool:',
        '  - matcher: "fs"',
        '    command: "cat > post.json"',
        '',
      ].join('\n'),
    });
    gateway = await startStdioServer({ script: GATEWAY_CLI, args: ['start', '--root', ws.root] });
    expect(text(await gateway.client.callTool({ name: 'fs__read_file', arguments: { path: 'private.txt' } }))).toBe('     1\tpublic');
    const post = JSON.parse(readFileSync(ws.path('post.json'), 'utf8')) as { event: string; tool: string; arguments: unknown; result: { content: { text: string }[] } };
    expect(post).toMatchObject({ event: 'post_tool', tool: 'fs:read_file', arguments: { path: 'public.txt' } });
    expect(post.result.content[0]!.text).toBe('     1\tpublic');
    const rewritten = await gateway.client.callTool({ name: 'fs__grep', arguments: { pattern: 'public' } });
    expect(rewritten.isError).toBe(true);
    expect(text(rewritten)).toMatch(/^Invalid arguments for fs:grep: `pattern` must be string\. Expected: /);
  });
});

describe('tool_policy.yaml', () => {
  it('keeps the list stable in stable mode and serves everything through call_tool', async () => {
    ws = tempWorkspace({ 'a.txt': 'a\n', '.bulkhead/bulkhead.yaml': 'servers:\n  fs: {}\n', '.bulkhead/tool_policy.yaml': 'mode: stable\ncore_tools: []\n' });
    gateway = await startStdioServer({ script: GATEWAY_CLI, args: ['start', '--root', ws.root] });
    expect((await gateway.client.listTools()).tools.map((t) => t.name)).toEqual(['tool_search', 'call_tool', 'list_tools']);
    expect(text(await gateway.client.callTool({ name: 'call_tool', arguments: { name: 'fs:read_file', arguments: { path: 'a.txt' } } }))).toBe('     1\ta');
  });

  it('evicts the least recently used loaded tool past max_active', async () => {
    ws = tempWorkspace({ '.bulkhead/bulkhead.yaml': 'servers:\n  fs: {}\n', '.bulkhead/tool_policy.yaml': 'core_tools: []\nmax_active: 2\n' });
    gateway = await startStdioServer({ script: GATEWAY_CLI, args: ['start', '--root', ws.root] });
    await gateway.client.callTool({ name: 'load_tools', arguments: { names: ['fs__read_file', 'fs__grep'] } });
    await gateway.client.callTool({ name: 'fs__read_file', arguments: { path: '.' } });
    const third = await gateway.client.callTool({ name: 'load_tools', arguments: { names: ['fs__list_files'] } });
    expect(text(third)).toBe('Loaded: fs__list_files\nUnloaded to stay within the active limit: fs:grep');
    expect((await gateway.client.listTools()).tools.map((t) => t.name).filter((n) => n.startsWith('fs__')).sort()).toEqual(['fs__list_files', 'fs__read_file']);
  });
});

describe('profiles', () => {
  const config = `servers:\n  fs: {}\n${EVERYTHING_ENTRY}profiles:\n  readonly:\n    namespaces: [fs]\n    autonomy: read_only\n  everything_only:\n    tools: ["everything:*"]\n    autonomy: full\n`;

  it('exposes only what the profile names', async () => {
    ws = tempWorkspace({ 'a.txt': 'a\n', '.bulkhead/bulkhead.yaml': config, '.bulkhead/permissions.yaml': 'allow:\n  - everything\n' });
    gateway = await startStdioServer({ script: GATEWAY_CLI, args: ['start', '--root', ws.root, '--profile', 'readonly'] });
    expect(text(await gateway.client.callTool({ name: 'tool_search', arguments: { query: 'echo a message back' } }))).not.toContain('everything');
    const call = await gateway.client.callTool({ name: 'call_tool', arguments: { name: 'everything__echo', arguments: { message: 'x' } } });
    expect(text(call)).toBe('Unknown tool everything__echo; use tool_search to find tools (names look like fs__read_file or fs:read_file)');
    expect(text(await gateway.client.callTool({ name: 'fs__read_file', arguments: { path: 'a.txt' } }))).toBe('     1\ta');
  });

  it('cannot widen the autonomy of permissions.yaml', async () => {
    ws = tempWorkspace({ '.bulkhead/bulkhead.yaml': config, '.bulkhead/permissions.yaml': 'autonomy: read_only\n' });
    gateway = await startStdioServer({ script: GATEWAY_CLI, args: ['start', '--root', ws.root, '--profile', 'everything_only'] });
    const call = await gateway.client.callTool({ name: 'call_tool', arguments: { name: 'everything__toggle-simulated-logging', arguments: {} } });
    expect(text(call)).toBe('Unknown tool everything__toggle-simulated-logging; use tool_search to find tools (names look like fs__read_file or fs:read_file)');
    expect(text(await gateway.client.callTool({ name: 'call_tool', arguments: { name: 'everything__echo', arguments: { message: 'ro' } } }))).toBe('Echo: ro');
  });

  it('refuses an unknown profile', async () => {
    ws = tempWorkspace({ '.bulkhead/bulkhead.yaml': config });
    const failure = await run(process.execPath, [GATEWAY_CLI, 'start', '--root', ws.root, '--profile', 'admin']).catch((error: { code: number; stderr: string }) => error);
    expect(failure).toMatchObject({ code: 2, stderr: 'bulkhead: unknown profile admin; profiles in bulkhead.yaml: readonly, everything_only\n' });
  });
});

describe('tool names a policy glob could not match', () => {
  it('leaves them out and says so', async () => {
    ws = tempWorkspace({ '.bulkhead/bulkhead.yaml': `servers:\n  odd:\n    command: ${process.execPath}\n    args: [${ODD_NAMES_SERVER}]\n`, '.bulkhead/permissions.yaml': 'deny:\n  - odd\n' });
    gateway = await startStdioServer({ script: GATEWAY_CLI, args: ['start', '--root', ws.root] });
    const call = await gateway.client.callTool({ name: 'call_tool', arguments: { name: 'odd:a/b', arguments: {} } });
    expect(gateway.stderr()).toContain('bulkhead: odd:a/b is left out: tool names may hold only letters, digits, _ and - (at most 64)\n');
    expect(text(call)).toBe('Unknown tool odd:a/b; use tool_search to find tools (names look like fs__read_file or fs:read_file)');
    expect(text(await gateway.client.callTool({ name: 'call_tool', arguments: { name: 'odd__ok', arguments: {} } }))).toMatch(/^Unknown tool odd__ok/);
  });
});

describe('output caps on third-party results', () => {
  it('bounds text, structured content, images and blobs whatever the server sends', async () => {
    ws = tempWorkspace({ '.bulkhead/bulkhead.yaml': `servers:\n  big:\n    command: ${process.execPath}\n    args: [${BIG_RESULTS_SERVER}]\n    trust: annotations\n` });
    gateway = await startStdioServer({ script: GATEWAY_CLI, args: ['start', '--root', ws.root] });
    const call = (name: string) => gateway!.client.callTool({ name: 'call_tool', arguments: { name, arguments: {} } });

    const long = await call('big:long_text');
    const longText = text(long);
    expect(Buffer.byteLength(longText)).toBeLessThanOrEqual(512 * 1024);
    // Wrapped as untrusted content first, then capped: head and tail keep both tags.
    expect(longText.startsWith('<untrusted_external_content source="big (third-party MCP server)">\nSTARTxxx')).toBe(true);
    expect(longText.endsWith('xxxEND\n</untrusted_external_content>')).toBe(true);
    expect(longText).toMatch(/\n…\(1\d{6} bytes truncated\)…\n/);

    const rows = await call('big:large_rows');
    expect(rows.isError).toBe(true);
    expect(rows.structuredContent).toBeUndefined();
    expect(text(rows)).toMatch(/^\[structured result of 2\.0 MiB dropped: over this result's output cap of 512\.0 KiB; the text below is capped too\./);
    expect(Buffer.byteLength(text(rows))).toBeLessThanOrEqual(512 * 1024 + 200);

    const image = await call('big:large_image');
    const blocks = image.content as { type: string; data?: string; text?: string }[];
    expect(blocks[0]).toMatchObject({ type: 'image', mimeType: 'image/png' });
    expect(blocks[0]!.data).toHaveLength(1368);
    expect(blocks[1]).toEqual({ type: 'text', text: "[image image/png of 12.0 MiB omitted: over this result's cap of 6.0 MiB for images, audio and binary data]" });

    const blob = await call('big:large_blob');
    expect(blob.content).toEqual([{ type: 'text', text: "[resource bulkhead://big/file:///dump.bin of 12.0 MiB omitted: over this result's cap of 6.0 MiB for images, audio and binary data]" }]);
  });

  it('stops a server whose reply is past the message limit, and the gateway goes on', async () => {
    ws = tempWorkspace({ '.bulkhead/bulkhead.yaml': `servers:\n  big:\n    command: ${process.execPath}\n    args: [${BIG_RESULTS_SERVER}]\n    trust: annotations\n` });
    gateway = await startStdioServer({ script: GATEWAY_CLI, args: ['start', '--root', ws.root] });
    const call = (name: string) => gateway!.client.callTool({ name: 'call_tool', arguments: { name, arguments: {} } });
    const runaway = await call('big:runaway');
    expect(runaway.isError).toBe(true);
    expect(text(runaway)).toBe(
      "big sent a message larger than 64 MiB, the gateway's limit for one message, so it was stopped while running runaway; the call was not completed; restarting in 1 s (restart 1 of at most 8). Try again shortly.",
    );
    await new Promise((resolve) => setTimeout(resolve, 2500));
    expect(text(await call('big:long_text'))).toMatch(/^<untrusted_external_content source="big \(third-party MCP server\)">\nSTARTxxx/);
  }, 30_000);
});

describe('bulkhead.yaml', () => {
  it('rejects duplicate namespaces with the line', async () => {
    ws = tempWorkspace({ '.bulkhead/bulkhead.yaml': 'servers:\n  fs: {}\n  fs: {}\n' });
    const failure = await run(process.execPath, [GATEWAY_CLI, 'start', '--root', ws.root]).catch((error: { code: number; stderr: string }) => error);
    expect(failure).toMatchObject({ code: 2 });
    expect((failure as { stderr: string }).stderr).toBe(`bulkhead: ${ws.path('.bulkhead/bulkhead.yaml')} line 3: not valid YAML: Map keys must be unique\n`);
  });

  it('refuses a namespace with __ and the reserved gateway namespace', async () => {
    ws = tempWorkspace({ '.bulkhead/bulkhead.yaml': 'servers:\n  a__b:\n    command: x\n  gateway:\n    command: y\n' });
    const failure = await run(process.execPath, [GATEWAY_CLI, 'start', '--root', ws.root]).catch((error: { code: number; stderr: string }) => error);
    expect(failure).toMatchObject({ code: 2 });
    const stderr = (failure as { stderr: string }).stderr;
    expect(stderr).toContain('a namespace may not contain __ (it separates namespace and tool on the wire)');
    expect(stderr).toContain('gateway is reserved for the meta tools');
  });

  it('names a third-party entry without command or url', async () => {
    ws = tempWorkspace({ '.bulkhead/bulkhead.yaml': 'servers:\n  weather: {}\n' });
    gateway = await startStdioServer({ script: GATEWAY_CLI, args: ['start', '--root', ws.root] });
    expect(gateway.stderr()).toContain('bulkhead: weather: not a built-in compartment (fs, fs_write, shell, web, git, ladder), so it needs command (stdio) or url (HTTP)');
  });
});
