import { execFile } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import { promisify } from 'node:util';
import { afterEach, describe, expect, it } from 'vitest';
import { startStdioServer, tempWorkspace, type ServerProcess, type TempWorkspace } from '@bulkhead/core/testing';
import { FS_CLI, AUDIT_CLI, text, alive } from './helpers.js';


const run = promisify(execFile);
let ws: TempWorkspace;
let server: ServerProcess | undefined;

afterEach(async () => {
  await server?.close();
  server = undefined;
  ws?.cleanup();
});


describe('bulkhead-fs over stdio, as Claude Desktop starts it', () => {
  it('lists its four read-only tools and reads a file', async () => {
    ws = tempWorkspace({ 'notes/todo.md': '# Todo\n- ship\n' });
    server = await startStdioServer({ script: FS_CLI, args: ['--root', ws.root] });
    const tools = (await server.client.listTools()).tools;
    expect(tools.map((t) => t.name)).toEqual(['read_file', 'grep', 'glob_files', 'list_files']);
    expect(tools.every((t) => t.annotations?.readOnlyHint === true)).toBe(true);
    expect(text(await server.client.callTool({ name: 'read_file', arguments: { path: 'notes/todo.md' } }))).toBe('     1\t# Todo\n     2\t- ship');
    expect(server.stderr()).toContain(`bulkhead-fs: serving 4 tools over stdio (roots: ${ws.root})`);
  });

  it('defaults --root to the current folder and --config to <root>/.bulkhead', async () => {
    ws = tempWorkspace({ 'a.txt': 'cwd\n', '.bulkhead/fs_policy.yaml': 'tools:\n  grep:\n    enabled: false\n' });
    server = await startStdioServer({ script: FS_CLI, cwd: ws.root });
    expect((await server.client.listTools()).tools.map((t) => t.name)).toEqual(['read_file', 'glob_files', 'list_files']);
    expect(text(await server.client.callTool({ name: 'read_file', arguments: { path: 'a.txt' } }))).toBe('     1\tcwd');
    await expect(server.client.callTool({ name: 'grep', arguments: { pattern: 'cwd' } })).rejects.toThrow(
      'MCP error -32602: Unknown tool grep. Available tools: read_file, glob_files, list_files.',
    );
  });

  it('applies permissions.yaml from --config', async () => {
    ws = tempWorkspace({ 'src/a.ts': 'a\n', 'docs/b.md': 'b\n', 'policy/permissions.yaml': 'deny:\n  - fs:read_file(src/*)\n' });
    server = await startStdioServer({ script: FS_CLI, args: ['--root', ws.root, '--config', ws.path('policy')] });
    const denied = await server.client.callTool({ name: 'read_file', arguments: { path: 'src/a.ts' } });
    expect(text(denied)).toBe(`Permission denied: fs:read_file is denied by ${ws.path('policy/permissions.yaml')} line 2 (\`fs:read_file(src/*)\`). Nothing was run. To allow it: remove or narrow that deny entry.`);
    expect(text(await server.client.callTool({ name: 'read_file', arguments: { path: 'docs/b.md' } }))).toBe('     1\tb');
  });

  it('writes an audit log that bulkhead-audit verifies, and detects tampering', async () => {
    ws = tempWorkspace({ 'a.txt': 'x\n' });
    server = await startStdioServer({ script: FS_CLI, args: ['--root', ws.root] });
    await server.client.callTool({ name: 'read_file', arguments: { path: 'a.txt' } });
    await server.client.callTool({ name: 'read_file', arguments: { path: '../escape' } });
    await server.client.callTool({ name: 'list_files', arguments: {} });
    await server.close();
    server = undefined;
    const file = ws.path('.bulkhead/audit/fs.jsonl');
    const ok = await run(process.execPath, [AUDIT_CLI, 'verify', '--config', ws.path('.bulkhead')]);
    expect(ok.stdout).toBe(`OK ${file}: 3 entries, chain intact\n`);
    const lines = readFileSync(file, 'utf8').split('\n');
    lines[1] = lines[1]!.replace('"outcome":"error"', '"outcome":"ok"');
    writeFileSync(file, lines.join('\n'));
    const failed = await run(process.execPath, [AUDIT_CLI, 'verify', file]).catch((error: { code: number; stdout: string }) => error);
    expect(failed).toMatchObject({ code: 1, stdout: `FAIL ${file} line 2: content does not match its hash (the line was edited)\n` });
  });

  it('exits when the client closes stdin', async () => {
    ws = tempWorkspace();
    server = await startStdioServer({ script: FS_CLI, args: ['--root', ws.root] });
    const pid = server.pid!;
    await server.close();
    server = undefined;
    await expect.poll(() => alive(pid)).toBe(false);
  });
});

describe('bulkhead-fs command line', () => {
  it('prints usage for --help', async () => {
    const { stdout } = await run(process.execPath, [FS_CLI, '--help']);
    expect(stdout).toContain('usage: bulkhead-fs [--root DIR]... [--config DIR] [--http HOST:PORT] [--token-file FILE | --no-auth]');
  });

  it('rejects an unknown flag with exit code 2', async () => {
    const failure = await run(process.execPath, [FS_CLI, '--rooot', '/tmp']).catch((error: { code: number; stderr: string }) => error);
    expect(failure).toMatchObject({ code: 2 });
    expect((failure as { stderr: string }).stderr).toBe('bulkhead-fs: bulkhead-fs does not take --rooot (see bulkhead-fs --help)\n');
  });

  it('names the file, line and allowed values of a bad policy and exits 2', async () => {
    ws = tempWorkspace({ '.bulkhead/fs_policy.yaml': 'enabled: true\nsearch_engine: fastest\n' });
    const failure = await run(process.execPath, [FS_CLI, '--root', ws.root]).catch((error: { code: number; stderr: string }) => error);
    expect(failure).toMatchObject({ code: 2 });
    expect((failure as { stderr: string }).stderr).toBe(
      `bulkhead-fs: ${ws.path('.bulkhead/fs_policy.yaml')}: invalid configuration\n  - \`search_engine\` (line 2): must be one of "auto", "ripgrep", "builtin"\n`,
    );
  });

  it('refuses a root that does not exist', async () => {
    const failure = await run(process.execPath, [FS_CLI, '--root', '/nonexistent/bulkhead-root']).catch((error: { code: number; stderr: string }) => error);
    expect(failure).toMatchObject({ code: 2, stderr: 'bulkhead-fs: --root /nonexistent/bulkhead-root does not exist; create it or give an existing folder (see bulkhead-fs --help)\n' });
  });
});
