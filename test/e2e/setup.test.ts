import { execFile } from 'node:child_process';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { basename, dirname, join } from 'node:path';
import { promisify } from 'node:util';
import { afterEach, describe, expect, it } from 'vitest';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { getDefaultEnvironment, StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { tempWorkspace, type TempWorkspace } from '@bulkhead/core/testing';
import { alive, childrenOf, GATEWAY_CLI, text } from './helpers.js';

const execFileAsync = promisify(execFile);

let ws: TempWorkspace | undefined;
let client: Client | undefined;
afterEach(async () => {
  await client?.close();
  client = undefined;
  ws?.cleanup();
  ws = undefined;
});

interface Run {
  readonly code: number;
  readonly stdout: string;
  readonly stderr: string;
}

/** The built CLI with a home of its own: HOME, APPDATA and XDG_CONFIG_HOME all inside `home`. */
async function setup(w: TempWorkspace, args: readonly string[], cwd = w.path('project')): Promise<Run> {
  const home = w.path('home');
  const env = { PATH: process.env['PATH'] ?? '', HOME: home, APPDATA: join(home, 'AppData', 'Roaming'), XDG_CONFIG_HOME: join(home, '.config') };
  try {
    const { stdout, stderr } = await execFileAsync(process.execPath, [GATEWAY_CLI, 'setup', ...args], { cwd, env });
    return { code: 0, stdout, stderr };
  } catch (error) {
    const failed = error as { code: number; stdout: string; stderr: string };
    return { code: failed.code, stdout: failed.stdout, stderr: failed.stderr };
  }
}

function backupsOf(file: string): string[] {
  if (!existsSync(dirname(file))) return [];
  return readdirSync(dirname(file)).filter((name) => name.startsWith(`${basename(file)}.bak-`));
}

/** `text` with `insert` put right after the one place `anchor` stands in it. */
function insertedAfter(text: string, anchor: string, insert: string): string {
  const at = text.indexOf(anchor);
  if (at === -1 || text.indexOf(anchor, at + 1) !== -1) throw new Error(`the anchor ${JSON.stringify(anchor)} must stand in the text once`);
  return text.slice(0, at + anchor.length) + insert + text.slice(at + anchor.length);
}

/** JSON.stringify's layout of `value`, every line after the first indented by `indent`, as the entry is inserted. */
const block = (indent: string, value: unknown) => JSON.stringify(value, null, 2).replace(/\n/g, `\n${indent}`);

interface Case {
  readonly client: string;
  readonly scope: 'user' | 'project';
  /** Relative to the workspace (home/… or project/…). */
  readonly file: string;
  /** Undefined: there is no file yet. */
  readonly before: string | undefined;
  readonly after: (entry: { command: string; args: string[] }, before: string | undefined) => string;
  readonly next: string;
}

const CASES: Case[] = [
  {
    client: 'claude-desktop',
    scope: 'user',
    file: 'home/.config/Claude/claude_desktop_config.json',
    before: `{
  "mcpServers": {
    "weather": {
      "command": "uvx",
      "args": ["mcp-weather"],
      "env": { "UNITS": "metric" }
    }
  },
  "globalShortcut": "Alt+Space"
}
`,
    after: (entry) => `{
  "mcpServers": {
    "weather": {
      "command": "uvx",
      "args": ["mcp-weather"],
      "env": { "UNITS": "metric" }
    },
    "bulkhead": ${block('    ', entry)}
  },
  "globalShortcut": "Alt+Space"
}
`,
    next: "Quit Claude Desktop completely (closing its window is not enough) and open it again; bulkhead then appears in the chat's tools menu.",
  },
  {
    client: 'claude-code',
    scope: 'user',
    file: 'home/.claude.json',
    // As Claude Code writes it: much more than servers, and no final newline.
    before: `{
  "numStartups": 12,
  "projects": {
    "/elsewhere": {
      "mcpServers": {},
      "allowedTools": []
    }
  },
  "mcpServers": {
    "github": {
      "type": "stdio",
      "command": "npx",
      "args": ["-y", "@modelcontextprotocol/server-github"],
      "env": {}
    }
  },
  "userID": "0123abcd"
}`,
    after: (entry, before) => insertedAfter(before!, '"env": {}\n    }', `,\n    "bulkhead": ${block('    ', { type: 'stdio', ...entry, env: {} })}`),
    next: 'Start a new `claude` session (in any folder); `claude mcp list` or /mcp shows bulkhead.',
  },
  {
    client: 'claude-code',
    scope: 'project',
    file: 'project/.mcp.json',
    before: '{\n  "mcpServers": {\n    "sentry": {\n      "type": "http",\n      "url": "https://mcp.sentry.dev/mcp"\n    }\n  }\n}\n',
    after: (entry) => `{\n  "mcpServers": {\n    "sentry": {\n      "type": "http",\n      "url": "https://mcp.sentry.dev/mcp"\n    },\n    "bulkhead": ${block('    ', { type: 'stdio', ...entry, env: {} })}\n  }\n}\n`,
    next: 'Start `claude` in <project>; it asks once whether to use the servers of .mcp.json (approve bulkhead), then /mcp shows it.',
  },
  {
    client: 'cursor',
    scope: 'user',
    file: 'home/.cursor/mcp.json',
    before: '{\n  "mcpServers": {\n    "context7": {\n      "url": "https://mcp.context7.com/mcp"\n    }\n  },\n  "theme": "dark"\n}\n',
    after: (entry) => `{\n  "mcpServers": {\n    "context7": {\n      "url": "https://mcp.context7.com/mcp"\n    },\n    "bulkhead": ${block('    ', entry)}\n  },\n  "theme": "dark"\n}\n`,
    next: 'Restart Cursor, then check that bulkhead is listed and switched on in Cursor Settings > MCP.',
  },
  {
    client: 'cursor',
    scope: 'project',
    file: 'project/.cursor/mcp.json',
    before: undefined,
    after: (entry) => `${JSON.stringify({ mcpServers: { bulkhead: entry } }, null, 2)}\n`,
    next: 'Restart Cursor and open <project>, then check that bulkhead is listed and switched on in Cursor Settings > MCP.',
  },
  {
    client: 'vscode',
    scope: 'user',
    file: 'home/.config/Code/User/mcp.json',
    before: `// User MCP servers
{
  "servers": {
    // the GitHub server, signed in through VS Code
    "github": {
      "type": "http",
      "url": "https://api.githubcopilot.com/mcp/",
    },
  },
  "inputs": [
    /* none yet */
  ],
}
`,
    after: (entry) => `// User MCP servers
{
  "servers": {
    // the GitHub server, signed in through VS Code
    "github": {
      "type": "http",
      "url": "https://api.githubcopilot.com/mcp/",
    },
    "bulkhead": ${block('    ', { type: 'stdio', ...entry })},
  },
  "inputs": [
    /* none yet */
  ],
}
`,
    next: `In VS Code (default profile): run "MCP: List Servers" and start bulkhead (it asks once whether to trust it); its tools are offered in Copilot Chat's agent mode.`,
  },
  {
    client: 'vscode',
    scope: 'project',
    file: 'project/.vscode/mcp.json',
    before: '{\n  "servers": {\n    "memory": { "command": "npx", "args": ["-y", "@modelcontextprotocol/server-memory"] } // notes\n  }\n}\n',
    after: (entry) =>
      `{\n  "servers": {\n    "memory": { "command": "npx", "args": ["-y", "@modelcontextprotocol/server-memory"] }, // notes\n    "bulkhead": ${block('    ', { type: 'stdio', ...entry })}\n  }\n}\n`,
    next: `Open <project> in VS Code: run "MCP: List Servers" and start bulkhead (it asks once whether to trust it); its tools are offered in Copilot Chat's agent mode.`,
  },
  {
    client: 'windsurf',
    scope: 'user',
    file: 'home/.codeium/windsurf/mcp_config.json',
    before: '{\n  "mcpServers": {\n    "github": {\n      "command": "docker",\n      "args": ["run", "-i", "--rm", "ghcr.io/github/github-mcp-server"],\n      "disabled": false\n    }\n  }\n}\n',
    after: (entry) =>
      `{\n  "mcpServers": {\n    "github": {\n      "command": "docker",\n      "args": ["run", "-i", "--rm", "ghcr.io/github/github-mcp-server"],\n      "disabled": false\n    },\n    "bulkhead": ${block('    ', entry)}\n  }\n}\n`,
    next: "In Windsurf, open Cascade's MCP servers panel and press refresh (or restart Windsurf); bulkhead is then listed.",
  },
];

describe('bulkhead setup, the built CLI, every client and scope', () => {
  it.each(CASES)('$client ($scope scope): dry run, merge with a backup, then already up to date', async (c) => {
    ws = tempWorkspace({ 'project/README.md': '# a project\n', ...(c.before === undefined ? {} : { [c.file]: c.before }) });
    const file = ws.path(c.file);
    const project = ws.path('project');
    const entry = { command: process.execPath, args: [GATEWAY_CLI, 'start', '--root', project] };
    const after = c.after(entry, c.before);
    const args = [c.client, '--scope', c.scope];

    const dry = await setup(ws, [...args, '--dry-run']);
    expect(dry.code).toBe(0);
    expect(dry.stderr).toBe('');
    const diff = dry.stdout.split('\n');
    expect(diff.slice(0, 2)).toEqual([`--- ${c.before === undefined ? '/dev/null' : file}`, `+++ ${file}`]);
    expect(diff).toContain('+    "bulkhead": {');
    expect(diff).toContain(`+        "${GATEWAY_CLI}",`);
    expect(dry.stdout.endsWith(`dry run: nothing was written; without --dry-run ${file} would be ${c.before === undefined ? 'created' : 'changed (the previous file kept as a backup beside it)'}.\n`)).toBe(true);
    if (c.before === undefined) expect(existsSync(dirname(file))).toBe(false);
    else expect(readFileSync(file, 'utf8')).toBe(c.before);
    expect(backupsOf(file)).toEqual([]);

    const first = await setup(ws, args);
    expect(first.code).toBe(0);
    expect(first.stderr).toBe('');
    expect(readFileSync(file, 'utf8')).toBe(after);
    const backups = backupsOf(file);
    if (c.before === undefined) {
      expect(backups).toEqual([]);
    } else {
      expect(backups).toHaveLength(1);
      expect(backups[0]).toMatch(new RegExp(`^${basename(file).replace(/\./g, '\\.')}\\.bak-\\d{8}T\\d{6}Z$`));
      expect(readFileSync(join(dirname(file), backups[0]!), 'utf8')).toBe(c.before);
    }
    const title = { 'claude-desktop': 'Claude Desktop', 'claude-code': 'Claude Code', cursor: 'Cursor', vscode: 'VS Code', windsurf: 'Windsurf' }[c.client];
    expect(first.stdout).toBe(
      `${title}: ${c.before === undefined ? 'created' : 'updated'} ${file} with the bulkhead entry\n` +
        (c.before === undefined ? '' : `  the previous file is kept in ${join(dirname(file), backups[0]!)}\n`) +
        `  command: ${process.execPath}\n  args: ${JSON.stringify(entry.args)}\n` +
        `next: ${c.next.replace('<project>', project)}\n`,
    );

    const again = await setup(ws, args);
    expect(again).toEqual({ code: 0, stdout: `${title}: ${file} already has this bulkhead entry; already up to date, nothing was written.\n`, stderr: '' });
    expect(readFileSync(file, 'utf8')).toBe(after);
    expect(backupsOf(file)).toEqual(backups);
  });

  it('shows the exact diff of a dry run on an existing file', async () => {
    ws = tempWorkspace({ 'project/.mcp.json': '{\n  "mcpServers": {}\n}\n' });
    const project = ws.path('project');
    const dry = await setup(ws, ['claude-code', '--root', project, '--root', ws.root, '--dry-run']);
    expect(dry.stdout).toBe(
      `--- ${project}/.mcp.json\n+++ ${project}/.mcp.json\n@@ -1,3 +1,17 @@\n {\n-  "mcpServers": {}\n+  "mcpServers": {\n+    "bulkhead": {\n+      "type": "stdio",\n` +
        `+      "command": "${process.execPath}",\n+      "args": [\n+        "${GATEWAY_CLI}",\n+        "start",\n+        "--root",\n+        "${project}",\n+        "--root",\n+        "${ws.root}"\n+      ],\n+      "env": {}\n+    }\n+  }\n }\n` +
        `dry run: nothing was written; without --dry-run ${project}/.mcp.json would be changed (the previous file kept as a backup beside it).\n`,
    );
    expect(readdirSync(project)).toEqual(['.mcp.json']);
  });

  it('writes --config-file instead and names the entry with --name', async () => {
    ws = tempWorkspace({ 'project/keep': '' });
    const result = await setup(ws, ['windsurf', '--config-file', 'elsewhere/config.json', '--name', 'bh-work']);
    expect(result.code).toBe(0);
    expect(JSON.parse(readFileSync(ws.path('project/elsewhere/config.json'), 'utf8'))).toEqual({
      mcpServers: { 'bh-work': { command: process.execPath, args: [GATEWAY_CLI, 'start', '--root', ws.path('project')] } },
    });
    expect(existsSync(ws.path('home/.codeium'))).toBe(false);
  });

  it('refuses a file that is not valid JSON, or whose servers are not an object, and leaves it as it was', async () => {
    const broken = '{\n  "mcpServers": {\n    "weather": { "command": "uvx" },\n  }\n}\n';
    const notObject = '{\n  "servers": ["github"]\n}\n';
    ws = tempWorkspace({ 'project/keep': '', 'home/.config/Claude/claude_desktop_config.json': broken, 'project/.vscode/mcp.json': notObject });
    const desktop = ws.path('home/.config/Claude/claude_desktop_config.json');
    expect(await setup(ws, ['claude-desktop'])).toEqual({
      code: 1,
      stdout: '',
      stderr: `bulkhead: ${desktop} is not valid JSON (line 4, column 3: a property name expected (a trailing comma?)); nothing was written. Fix it, or move it away to start afresh.\n`,
    });
    expect(readFileSync(desktop, 'utf8')).toBe(broken);
    expect(readdirSync(dirname(desktop))).toEqual(['claude_desktop_config.json']);
    const vscode = ws.path('project/.vscode/mcp.json');
    expect(await setup(ws, ['vscode'])).toEqual({ code: 1, stdout: '', stderr: `bulkhead: ${vscode}: its "servers" is an array, not an object of servers; nothing was written\n` });
    expect(readFileSync(vscode, 'utf8')).toBe(notObject);
    expect(readdirSync(dirname(vscode))).toEqual(['mcp.json']);
  });

  it('refuses an unknown client and an empty root with exit 2, writing nothing', async () => {
    ws = tempWorkspace({ 'project/keep': '' });
    const unknown = await setup(ws, ['zed']);
    expect(unknown.code).toBe(2);
    expect(unknown.stdout).toBe('');
    expect(unknown.stderr).toBe('bulkhead: unknown client zed; the clients are claude-desktop, claude-code, cursor, vscode, windsurf (see `bulkhead setup --help`)\n');
    const empty = await setup(ws, ['cursor', '--root', '']);
    expect(empty.code).toBe(2);
    expect(empty.stderr).toBe('bulkhead: --root is empty (an unset variable in the client config?); give the folder to serve, for example --root /home/me/project (see `bulkhead setup --help`)\n');
    const missing = await setup(ws, ['cursor', '--root', 'gone']);
    expect(missing.code).toBe(2);
    expect(missing.stderr).toBe(`bulkhead: --root ${ws.path('project/gone')} does not exist; create it or give an existing folder (see \`bulkhead setup --help\`)\n`);
    expect(readdirSync(ws.path('project'))).toEqual(['keep']);
    expect(existsSync(ws.path('home'))).toBe(false);
  });

  it('prints its usage with --help', async () => {
    ws = tempWorkspace({ 'project/keep': '' });
    const help = await setup(ws, ['--help']);
    expect(help.code).toBe(0);
    expect(help.stdout.split('\n')[0]).toBe('usage: bulkhead setup <client> [options]');
    expect(help.stdout).toContain('clients: claude-desktop, claude-code, cursor, vscode, windsurf\n');
  });
});

describe('the entry setup writes works', () => {
  it('starts the gateway from Claude Desktop’s entry, in an empty folder with a minimal PATH, and serves the root', async () => {
    ws = tempWorkspace({ 'project/notes.txt': 'written by setup’s gateway\n', 'empty/.keep': '' });
    expect((await setup(ws, ['claude-desktop'])).code).toBe(0);
    const config = JSON.parse(readFileSync(ws.path('home/.config/Claude/claude_desktop_config.json'), 'utf8')) as { mcpServers: { bulkhead: { command: string; args: string[] } } };
    const { command, args } = config.mcpServers.bulkhead;
    expect(args).toEqual([GATEWAY_CLI, 'start', '--root', ws.path('project')]);
    const transport = new StdioClientTransport({ command, args, cwd: ws.path('empty'), env: { ...getDefaultEnvironment(), HOME: ws.path('home'), PATH: '/usr/bin:/bin' }, stderr: 'pipe' });
    client = new Client({ name: 'setup-test', version: '1.0.0' });
    await client.connect(transport);
    const pid = transport.pid!;
    expect((await client.listTools()).tools.map((tool) => tool.name)).toEqual(['fs__read_file', 'fs__grep', 'fs__glob_files', 'tool_search', 'call_tool', 'list_tools', 'load_tools', 'unload_tools']);
    const found = (await client.callTool({ name: 'tool_search', arguments: { query: 'read a file' } })) as { structuredContent?: { results: { name: string }[] } };
    expect(found.structuredContent?.results.map((result) => result.name)).toContain('fs__read_file');
    const read = await client.callTool({ name: 'call_tool', arguments: { name: 'fs__read_file', arguments: { path: 'notes.txt' } } });
    expect(read.isError).toBeFalsy();
    expect(text(read)).toBe('     1\twritten by setup’s gateway');
    const children = childrenOf(pid).map((child) => child.pid);
    expect(children.length).toBeGreaterThan(0);
    await client.close();
    client = undefined;
    await expect.poll(() => [pid, ...children].filter(alive), { timeout: 10_000, interval: 100 }).toEqual([]);
    expect(readdirSync(ws.path('empty'))).toEqual(['.keep']);
  });
});
