import { chmodSync, readdirSync, readFileSync, statSync, symlinkSync } from 'node:fs';
import { afterEach, describe, expect, it } from 'vitest';
import { tempWorkspace, type TempWorkspace } from '@bulkhead/core/testing';
import { CLIENT_SPECS, CLIENTS, clientSnippets, configFile, gatewayEntry, type ClientId, type Host, type Scope } from '../src/commands/clients.js';
import { mergedConfig, runSetup, SETUP_USAGE } from '../src/commands/setup.js';

let ws: TempWorkspace | undefined;
afterEach(() => {
  ws?.cleanup();
  ws = undefined;
});

const ENTRY = { command: '/usr/bin/node', args: ['/opt/bulkhead/dist/cli.js', 'start', '--root', '/work/p'] };
const host = (platform: NodeJS.Platform, env: Record<string, string>): Host => ({ platform, env, homedir: '/fallback' });

describe('where each client keeps its servers', () => {
  const mac = host('darwin', { HOME: '/Users/ada' });
  const linux = host('linux', { HOME: '/home/ada', XDG_CONFIG_HOME: '/xdg' });
  const windows = host('win32', { USERPROFILE: 'C:\\Users\\Ada', APPDATA: 'C:\\Users\\Ada\\AppData\\Roaming', HOME: '/c/Users/ada-from-git-bash' });
  const cases: [ClientId, Scope, Host, string, string][] = [
    ['claude-desktop', 'user', mac, '/work/p', '/Users/ada/Library/Application Support/Claude/claude_desktop_config.json'],
    ['claude-desktop', 'user', linux, '/work/p', '/xdg/Claude/claude_desktop_config.json'],
    ['claude-desktop', 'user', windows, 'C:\\p', 'C:\\Users\\Ada\\AppData\\Roaming\\Claude\\claude_desktop_config.json'],
    ['claude-code', 'user', mac, '/work/p', '/Users/ada/.claude.json'],
    ['claude-code', 'user', linux, '/work/p', '/home/ada/.claude.json'],
    ['claude-code', 'user', windows, 'C:\\p', 'C:\\Users\\Ada\\.claude.json'],
    ['claude-code', 'project', linux, '/work/p', '/work/p/.mcp.json'],
    ['claude-code', 'project', windows, 'C:\\p', 'C:\\p\\.mcp.json'],
    ['cursor', 'user', mac, '/work/p', '/Users/ada/.cursor/mcp.json'],
    ['cursor', 'user', windows, 'C:\\p', 'C:\\Users\\Ada\\.cursor\\mcp.json'],
    ['cursor', 'project', mac, '/work/p', '/work/p/.cursor/mcp.json'],
    ['vscode', 'user', mac, '/work/p', '/Users/ada/Library/Application Support/Code/User/mcp.json'],
    ['vscode', 'user', linux, '/work/p', '/xdg/Code/User/mcp.json'],
    ['vscode', 'user', windows, 'C:\\p', 'C:\\Users\\Ada\\AppData\\Roaming\\Code\\User\\mcp.json'],
    ['vscode', 'project', linux, '/work/p', '/work/p/.vscode/mcp.json'],
    ['windsurf', 'user', linux, '/work/p', '/home/ada/.codeium/windsurf/mcp_config.json'],
    ['windsurf', 'user', windows, 'C:\\p', 'C:\\Users\\Ada\\.codeium\\windsurf\\mcp_config.json'],
  ];
  it.each(cases)('%s (%s scope) on %#', (client, scope, on, project, expected) => {
    expect(configFile(CLIENT_SPECS[client], scope, on, project)).toBe(expected);
  });

  it('falls back where a variable is unset or, for XDG_CONFIG_HOME, relative', () => {
    const spec = CLIENT_SPECS['claude-desktop'];
    expect(configFile(spec, 'user', host('linux', { HOME: '/home/ada' }), '/p')).toBe('/home/ada/.config/Claude/claude_desktop_config.json');
    expect(configFile(spec, 'user', host('linux', { HOME: '/home/ada', XDG_CONFIG_HOME: 'relative/cfg' }), '/p')).toBe('/home/ada/.config/Claude/claude_desktop_config.json');
    expect(configFile(spec, 'user', host('win32', { USERPROFILE: 'C:\\Users\\Bo' }), 'C:\\p')).toBe('C:\\Users\\Bo\\AppData\\Roaming\\Claude\\claude_desktop_config.json');
    expect(configFile(spec, 'user', host('darwin', {}), '/p')).toBe('/fallback/Library/Application Support/Claude/claude_desktop_config.json');
  });

  it('follows CLAUDE_CONFIG_DIR for Claude Code’s user file', () => {
    expect(configFile(CLIENT_SPECS['claude-code'], 'user', host('linux', { HOME: '/home/ada', CLAUDE_CONFIG_DIR: '/cfg/claude' }), '/p')).toBe('/cfg/claude/.claude.json');
  });

  it('has no project file for Claude Desktop and Windsurf: the user file is used', () => {
    expect(configFile(CLIENT_SPECS.windsurf, 'project', host('linux', { HOME: '/h' }), '/p')).toBe('/h/.codeium/windsurf/mcp_config.json');
  });
});

describe('the entry', () => {
  it('runs the built script with an absolute node', () => {
    expect(gatewayEntry(['/a', '/b c'], '/opt/bulkhead/dist/cli.js', '/usr/local/bin/node')).toEqual({
      command: '/usr/local/bin/node',
      args: ['/opt/bulkhead/dist/cli.js', 'start', '--root', '/a', '--root', '/b c'],
    });
  });

  it('names npx when the script runs from an npx cache, on any OS', () => {
    const viaNpx = { command: 'npx', args: ['-y', '@bulkhead/gateway', 'start', '--root', '/a'] };
    expect(gatewayEntry(['/a'], '/home/ada/.npm/_npx/4f1c/node_modules/@bulkhead/gateway/dist/cli.js', '/usr/bin/node')).toEqual(viaNpx);
    expect(gatewayEntry(['/a'], 'C:\\Users\\Ada\\AppData\\Local\\npm-cache\\_npx\\4f1c\\node_modules\\@bulkhead\\gateway\\dist\\cli.js', 'C:\\node.exe')).toEqual(viaNpx);
    expect(gatewayEntry(['/a'], '/home/ada/my_npx/dist/cli.js', '/usr/bin/node').command).toBe('/usr/bin/node');
  });
});

describe('clientSnippets', () => {
  it('renders each client’s own shape', () => {
    const snippets = clientSnippets(ENTRY, 'bulkhead', host('linux', { HOME: '/home/ada' }));
    expect(snippets.map((s) => [s.client, s.file, s.projectFile])).toEqual([
      ['claude-desktop', '/home/ada/.config/Claude/claude_desktop_config.json', undefined],
      ['claude-code', '/home/ada/.claude.json', '.mcp.json'],
      ['cursor', '/home/ada/.cursor/mcp.json', '.cursor/mcp.json'],
      ['vscode', '/home/ada/.config/Code/User/mcp.json', '.vscode/mcp.json'],
      ['windsurf', '/home/ada/.codeium/windsurf/mcp_config.json', undefined],
    ]);
    const json = Object.fromEntries(snippets.map((s) => [s.client, JSON.parse(s.json) as unknown]));
    expect(json['claude-desktop']).toEqual({ mcpServers: { bulkhead: ENTRY } });
    expect(json['claude-code']).toEqual({ mcpServers: { bulkhead: { type: 'stdio', ...ENTRY, env: {} } } });
    expect(json['cursor']).toEqual({ mcpServers: { bulkhead: ENTRY } });
    expect(json['vscode']).toEqual({ servers: { bulkhead: { type: 'stdio', ...ENTRY } } });
    expect(json['windsurf']).toEqual({ mcpServers: { bulkhead: ENTRY } });
    expect(snippets[0]!.json).toBe(`${JSON.stringify({ mcpServers: { bulkhead: ENTRY } }, null, 2)}\n`);
  });
});

describe('mergedConfig', () => {
  const desktop = CLIENT_SPECS['claude-desktop'];
  const vscode = CLIENT_SPECS.vscode;
  const entryLines = (indent: string, value: object) => JSON.stringify(value, null, 2).replace(/\n/g, `\n${indent}`);

  it('creates the whole file when there is none, or it is empty', () => {
    const whole = `${JSON.stringify({ mcpServers: { bulkhead: ENTRY } }, null, 2)}\n`;
    expect(mergedConfig(undefined, desktop, 'bulkhead', ENTRY, 'f')).toBe(whole);
    expect(mergedConfig(' \n', desktop, 'bulkhead', ENTRY, 'f')).toBe(whole);
  });

  it('adds the entry after the other servers and keeps every other key as written', () => {
    const before = '{\n  "mcpServers": {\n    "weather": { "command": "uvx", "args": ["mcp-weather"] }\n  },\n  "globalShortcut": "Alt+Space"\n}\n';
    expect(mergedConfig(before, desktop, 'bulkhead', ENTRY, 'f')).toBe(
      `{\n  "mcpServers": {\n    "weather": { "command": "uvx", "args": ["mcp-weather"] },\n    "bulkhead": ${entryLines('    ', ENTRY)}\n  },\n  "globalShortcut": "Alt+Space"\n}\n`,
    );
  });

  it('adds the servers key when the file has none, in the file’s own indentation and line endings', () => {
    expect(mergedConfig('{\r\n\t"theme": "dark"\r\n}', desktop, 'bulkhead', { command: 'n', args: ['a'] }, 'f')).toBe(
      '{\r\n\t"theme": "dark",\r\n\t"mcpServers": {\r\n\t\t"bulkhead": {\r\n\t\t\t"command": "n",\r\n\t\t\t"args": [\r\n\t\t\t\t"a"\r\n\t\t\t]\r\n\t\t}\r\n\t}\r\n}',
    );
    expect(mergedConfig('{}', desktop, 'bulkhead', { command: 'n', args: [] }, 'f')).toBe('{\n  "mcpServers": {\n    "bulkhead": {\n      "command": "n",\n      "args": []\n    }\n  }\n}');
  });

  it('keeps comments, trailing commas and a BOM in VS Code’s JSONC', () => {
    const before = '\uFEFF{\n  // mine\n  "servers": {\n    /* gh */ "github": { "type": "http", "url": "https://x/mcp" },\n  },\n  "inputs": [],\n}\n';
    expect(mergedConfig(before, vscode, 'bulkhead', ENTRY, 'f')).toBe(
      `\uFEFF{\n  // mine\n  "servers": {\n    /* gh */ "github": { "type": "http", "url": "https://x/mcp" },\n    "bulkhead": ${entryLines('    ', { type: 'stdio', ...ENTRY })},\n  },\n  "inputs": [],\n}\n`,
    );
  });

  it('puts the entry below a comment that ends the last server’s line, so the comment stays where it was', () => {
    const entry = { command: 'n', args: [] };
    expect(mergedConfig('{\n  "servers": {\n    "memory": { "command": "npx" } // off on Fridays\n  }\n}\n', vscode, 'bh', entry, 'f')).toBe(
      '{\n  "servers": {\n    "memory": { "command": "npx" }, // off on Fridays\n    "bh": {\n      "type": "stdio",\n      "command": "n",\n      "args": []\n    }\n  }\n}\n',
    );
    expect(mergedConfig('{\n  "servers": {\n    "a": {\n      "command": "x"\n    }, /* kept */\n  },\n}\n', vscode, 'bh', entry, 'f')).toBe(
      '{\n  "servers": {\n    "a": {\n      "command": "x"\n    }, /* kept */\n    "bh": {\n      "type": "stdio",\n      "command": "n",\n      "args": []\n    }\n  },\n}\n',
    );
  });

  it('returns the same text when the entry is already there', () => {
    const once = mergedConfig('{\n  "a": 1\n}\n', vscode, 'bulkhead', ENTRY, 'f');
    expect(mergedConfig(once, vscode, 'bulkhead', ENTRY, 'f')).toBe(once);
  });

  it('updates only the fields bulkhead owns in an existing entry, keeping the user’s env and extras, dropping a remote url', () => {
    const before = JSON.stringify({ mcpServers: { bulkhead: { type: 'stdio', url: 'http://old/mcp', command: 'old', args: ['x'], env: { TOKEN: 't' }, disabled: false } } }, null, 2);
    const after = JSON.parse(mergedConfig(before, CLIENT_SPECS['claude-code'], 'bulkhead', ENTRY, 'f')) as unknown;
    expect(after).toEqual({ mcpServers: { bulkhead: { type: 'stdio', command: ENTRY.command, args: ENTRY.args, env: { TOKEN: 't' }, disabled: false } } });
  });

  it('turns a remote entry into a local one: its url, headers and type go, the user’s other fields stay', () => {
    const remote = { type: 'sse', url: 'https://old/sse', headers: { Authorization: 'Bearer x' }, disabled: true };
    for (const id of ['cursor', 'claude-desktop', 'windsurf'] as const) {
      const before = JSON.stringify({ mcpServers: { bulkhead: remote, other: remote } }, null, 2);
      const after = JSON.parse(mergedConfig(before, CLIENT_SPECS[id], 'bulkhead', ENTRY, 'f')) as unknown;
      expect(after, id).toEqual({ mcpServers: { bulkhead: { disabled: true, command: ENTRY.command, args: ENTRY.args }, other: remote } });
    }
    const vscode = JSON.stringify({ servers: { bulkhead: { type: 'http', url: 'https://old/mcp', headers: { A: 'b' } } } });
    expect(JSON.parse(mergedConfig(vscode, CLIENT_SPECS.vscode, 'bulkhead', ENTRY, 'f'))).toEqual({ servers: { bulkhead: { type: 'stdio', command: ENTRY.command, args: ENTRY.args } } });
    // headers beside a command (no url) are the user's own and stay.
    const local = JSON.stringify({ mcpServers: { bulkhead: { command: 'old', args: [], headers: { X: '1' } } } });
    expect(JSON.parse(mergedConfig(local, CLIENT_SPECS.cursor, 'bulkhead', ENTRY, 'f'))).toEqual({ mcpServers: { bulkhead: { command: ENTRY.command, args: ENTRY.args, headers: { X: '1' } } } });
  });

  it('replaces an entry that is not an object', () => {
    expect(JSON.parse(mergedConfig('{"mcpServers": {"bulkhead": "broken"}}', desktop, 'bulkhead', ENTRY, 'f'))).toEqual({ mcpServers: { bulkhead: ENTRY } });
  });

  it('refuses what it cannot edit safely, saying where and why', () => {
    const refused = (text: string, spec = desktop) => {
      try {
        mergedConfig(text, spec, 'bulkhead', ENTRY, '/c.json');
      } catch (error) {
        return (error as Error).message;
      }
      throw new Error('not refused');
    };
    expect(refused('{\n  "mcpServers": {,\n}')).toBe('/c.json is not valid JSON (line 2, column 18: a value expected (a trailing comma?)); nothing was written. Fix it, or move it away to start afresh.');
    expect(refused('{\n  // note\n  "mcpServers": {}\n}')).toBe('/c.json is not valid JSON (line 2, column 3: a comment, which this client does not accept in its JSON); nothing was written. Fix it, or move it away to start afresh.');
    expect(refused('{"mcpServers": {"a": {}},}')).toContain('a property name expected (a trailing comma?)');
    expect(refused('{"servers": [1, 2]}', vscode)).toBe('/c.json: its "servers" is an array, not an object of servers; nothing was written');
    expect(refused('{"mcpServers": null}')).toBe('/c.json: its "mcpServers" is null, not an object of servers; nothing was written');
    expect(refused('[]')).toBe('/c.json: its top level is an array, not an object; nothing was written');
    expect(refused('"x"')).toBe('/c.json: its top level is a string, not an object; nothing was written');
  });
});

describe('runSetup in-process', () => {
  const run = async (argv: string[], context: Parameters<typeof runSetup>[1] = {}) => {
    let stdout = '';
    let stderr = '';
    const code = await runSetup(argv, { script: '/opt/b/dist/cli.js', execPath: '/usr/bin/node', stdout: (t) => (stdout += t), stderr: (t) => (stderr += t), ...context });
    return { code, stdout, stderr };
  };

  it('prints its usage for --help', async () => {
    expect(await run(['--help'])).toEqual({ code: 0, stdout: `${SETUP_USAGE}\n`, stderr: '' });
    expect(SETUP_USAGE).toContain(`clients: ${CLIENTS.join(', ')}`);
  });

  it('refuses bad arguments with exit 2 and one line', async () => {
    ws = tempWorkspace();
    const cases: [string[], string][] = [
      [[], 'bulkhead: setup needs a client: claude-desktop, claude-code, cursor, vscode, windsurf\n'],
      [['zed'], 'bulkhead: unknown client zed; the clients are claude-desktop, claude-code, cursor, vscode, windsurf\n'],
      [['cursor', 'vscode'], 'bulkhead: setup takes one client, not also vscode\n'],
      [['windsurf', '--scope', 'project'], 'bulkhead: Windsurf has only a user configuration; --scope project does not apply to it\n'],
      [['cursor', '--scope', 'global'], 'bulkhead: --scope is user or project, not global\n'],
      [['cursor', '--name', 'my server'], 'bulkhead: --name "my server" may hold only letters, digits, _ and - (1 to 64 of them)\n'],
      [['cursor', '--root', ''], 'bulkhead: --root is empty (an unset variable in the client config?); give the folder to serve, for example --root /home/me/project\n'],
      [['cursor', '--root', 'missing'], `bulkhead: --root ${ws.path('missing')} does not exist; create it or give an existing folder\n`],
      [['cursor', '--config-file', ''], 'bulkhead: --config-file needs a path\n'],
      [['cursor', '--bogus'], 'bulkhead: bulkhead setup does not take --bogus\n'],
    ];
    for (const [argv, message] of cases) {
      const result = await run(argv, { cwd: ws.root });
      expect(result, argv.join(' ')).toEqual({ code: 2, stdout: '', stderr: message.replace(/\n$/, ' (see `bulkhead setup --help`)\n') });
    }
    expect(readdirSync(ws.root)).toEqual([]);
  });

  it('writes the client’s default file for the host it is given, backs up, and is idempotent', async () => {
    ws = tempWorkspace({ 'project/keep.txt': 'x' });
    const mac = host('darwin', { HOME: ws.path('home') });
    const file = ws.path('home/Library/Application Support/Claude/claude_desktop_config.json');
    const first = await run(['claude-desktop'], { host: mac, cwd: ws.path('project') });
    expect(first).toEqual({
      code: 0,
      stdout:
        `Claude Desktop: created ${file} with the bulkhead entry\n  command: /usr/bin/node\n  args: ["/opt/b/dist/cli.js","start","--root","${ws.path('project')}"]\n` +
        "next: Quit Claude Desktop completely (closing its window is not enough) and open it again; bulkhead then appears in the chat's tools menu.\n",
      stderr: '',
    });
    expect(readdirSync(ws.path('home/Library/Application Support/Claude'))).toEqual(['claude_desktop_config.json']);
    const again = await run(['claude-desktop'], { host: mac, cwd: ws.path('project') });
    expect(again.stdout).toBe(`Claude Desktop: ${file} already has this bulkhead entry; already up to date, nothing was written.\n`);
    const other = await run(['claude-desktop', '--name', 'bh2', '--root', ws.root], { host: mac, cwd: ws.path('project') });
    expect(other.code).toBe(0);
    const backups = readdirSync(ws.path('home/Library/Application Support/Claude')).filter((name) => name.includes('.bak-'));
    expect(backups).toHaveLength(1);
    expect(backups[0]).toMatch(/^claude_desktop_config\.json\.bak-\d{8}T\d{6}Z$/);
    expect(other.stdout).toContain(`  the previous file is kept in ${ws.path(`home/Library/Application Support/Claude/${backups[0]}`)}\n`);
    expect(Object.keys((JSON.parse(readFileSync(file, 'utf8')) as { mcpServers: object }).mcpServers)).toEqual(['bulkhead', 'bh2']);
  });

  it('keeps the file mode, edits a symlink’s target and leaves no temp file', async () => {
    ws = tempWorkspace({ 'dotfiles/cursor.json': '{\n  "mcpServers": {}\n}\n' });
    chmodSync(ws.path('dotfiles/cursor.json'), 0o600);
    ws.mkdir('home/.cursor');
    symlinkSync(ws.path('dotfiles/cursor.json'), ws.path('home/.cursor/mcp.json'));
    const result = await run(['cursor', '--scope', 'user', '--root', ws.root], { host: host('linux', { HOME: ws.path('home') }) });
    expect(result.code).toBe(0);
    expect(result.stdout).toContain(`Cursor: updated ${ws.path('home/.cursor/mcp.json')} with the bulkhead entry (through the symlink, in ${ws.path('dotfiles/cursor.json')})\n`);
    expect(readdirSync(ws.path('home/.cursor'))).toEqual(['mcp.json']);
    const files = readdirSync(ws.path('dotfiles')).sort();
    expect(files).toHaveLength(2);
    expect(files[0]).toBe('cursor.json');
    expect(statSync(ws.path('dotfiles/cursor.json')).mode & 0o777).toBe(0o600);
    expect(statSync(ws.path(`dotfiles/${files[1]}`)).mode & 0o777).toBe(0o600);
    expect(readFileSync(ws.path(`dotfiles/${files[1]}`), 'utf8')).toBe('{\n  "mcpServers": {}\n}\n');
    expect(JSON.parse(readFileSync(ws.path('home/.cursor/mcp.json'), 'utf8'))).toEqual({ mcpServers: { bulkhead: { command: '/usr/bin/node', args: ['/opt/b/dist/cli.js', 'start', '--root', ws.root] } } });
  });

  it('refuses with exit 1 and leaves the file as it was', async () => {
    ws = tempWorkspace({ 'c.json': '{"mcpServers": {"a": {}},}' });
    const result = await run(['claude-desktop', '--config-file', 'c.json'], { cwd: ws.root });
    expect(result).toEqual({
      code: 1,
      stdout: '',
      stderr: `bulkhead: ${ws.path('c.json')} is not valid JSON (line 1, column 26: a property name expected (a trailing comma?)); nothing was written. Fix it, or move it away to start afresh.\n`,
    });
    expect(readFileSync(ws.path('c.json'), 'utf8')).toBe('{"mcpServers": {"a": {}},}');
    expect(readdirSync(ws.root)).toEqual(['c.json']);
    ws.mkdir('dir.json');
    expect((await run(['cursor', '--config-file', 'dir.json'], { cwd: ws.root })).stderr).toBe(`bulkhead: ${ws.path('dir.json')} is not a regular file; nothing was written\n`);
  });
});
