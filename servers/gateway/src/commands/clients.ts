import { homedir } from 'node:os';
import { posix, win32, type PlatformPath } from 'node:path';
import { fileURLToPath } from 'node:url';

/**
 * The MCP clients `bulkhead setup` can configure: where each keeps its servers, per OS and scope,
 * and the JSON shape of an entry. The locations are the ones each client documents (Claude Code,
 * Cursor, VS Code, Windsurf) or uses (Claude Desktop on Linux has only community builds; they,
 * like every Electron app there, keep their data under $XDG_CONFIG_HOME).
 */
export const CLIENTS = ['claude-desktop', 'claude-code', 'cursor', 'vscode', 'windsurf'] as const;
export type ClientId = (typeof CLIENTS)[number];
export type Scope = 'user' | 'project';

/** A stdio server as every client understands it, before the client's own shape is applied. */
export interface ServerEntry {
  readonly command: string;
  readonly args: readonly string[];
}

/**
 * The gateway's CLI script. This module lies two levels under the package in src/ (tests) and in
 * dist/ (the build) alike, so the built script is found from either.
 */
export const GATEWAY_SCRIPT = fileURLToPath(new URL('../../dist/cli.js', import.meta.url));
/** What users install; its bin is `bulkhead`. */
const PACKAGE = '@bulkhead/gateway';

/**
 * The entry that runs `bulkhead start` over `roots` (absolute). From an npx cache the script's
 * path changes with every version npx fetches, so npx is named instead; otherwise both the node
 * binary and the script are absolute, since Claude Desktop on macOS starts servers with a minimal
 * PATH on which neither `node` nor `bulkhead` may be found.
 */
export function gatewayEntry(roots: readonly string[], script: string = GATEWAY_SCRIPT, execPath: string = process.execPath): ServerEntry {
  const start = ['start', ...roots.flatMap((root) => ['--root', root])];
  if (script.replaceAll('\\', '/').includes('/_npx/')) return { command: 'npx', args: ['-y', PACKAGE, ...start] };
  return { command: execPath, args: [script, ...start] };
}

/** What the paths depend on, so that every OS can be computed (and tested) on any OS. */
export interface Host {
  readonly platform: NodeJS.Platform;
  readonly env: Readonly<Record<string, string | undefined>>;
  /** Used when HOME (USERPROFILE on Windows) is unset. */
  readonly homedir: string;
}

export function currentHost(): Host {
  return { platform: process.platform, env: process.env, homedir: homedir() };
}

export interface ClientSpec {
  readonly id: ClientId;
  readonly title: string;
  /** The key of the object that holds the servers by name. */
  readonly serversKey: 'mcpServers' | 'servers';
  /** VS Code's mcp.json is JSONC; the others are read as strict JSON by their clients. */
  readonly jsonc: boolean;
  /** The user-scope file. */
  userFile(host: Host): string;
  /** The project-scope file as path segments under the project folder, where the client has one. */
  readonly projectFile?: readonly string[];
  /** The client's form of an entry. */
  shape(entry: ServerEntry): Record<string, unknown>;
  /** What the user does next, once the entry `name` is written. */
  next(scope: Scope, project: string, name: string): string;
}

function pathsOf(host: Host): PlatformPath {
  return host.platform === 'win32' ? win32 : posix;
}

function home(host: Host): string {
  return (host.platform === 'win32' ? host.env['USERPROFILE'] : host.env['HOME']) || host.homedir;
}

/** The per-user application data folder that Electron apps (Claude Desktop, VS Code) use. */
function appData(host: Host): string {
  const path = pathsOf(host);
  if (host.platform === 'darwin') return path.join(home(host), 'Library', 'Application Support');
  if (host.platform === 'win32') return host.env['APPDATA'] || path.join(home(host), 'AppData', 'Roaming');
  // The XDG spec says a relative XDG_CONFIG_HOME is to be ignored.
  const xdg = host.env['XDG_CONFIG_HOME'];
  return xdg && path.isAbsolute(xdg) ? xdg : path.join(home(host), '.config');
}

const stdio = (entry: ServerEntry) => ({ type: 'stdio', command: entry.command, args: [...entry.args] });
const plain = (entry: ServerEntry) => ({ command: entry.command, args: [...entry.args] });

export const CLIENT_SPECS: Readonly<Record<ClientId, ClientSpec>> = {
  'claude-desktop': {
    id: 'claude-desktop',
    title: 'Claude Desktop',
    serversKey: 'mcpServers',
    jsonc: false,
    userFile: (host) => pathsOf(host).join(appData(host), 'Claude', 'claude_desktop_config.json'),
    shape: plain,
    next: (_scope, _project, name) => `Quit Claude Desktop completely (closing its window is not enough) and open it again; ${name} then appears in the chat's tools menu.`,
  },
  'claude-code': {
    id: 'claude-code',
    title: 'Claude Code',
    serversKey: 'mcpServers',
    jsonc: false,
    // CLAUDE_CONFIG_DIR moves ~/.claude.json into that folder.
    userFile: (host) => pathsOf(host).join(host.env['CLAUDE_CONFIG_DIR'] || home(host), '.claude.json'),
    projectFile: ['.mcp.json'],
    // `claude mcp add` writes an empty env itself; the same shape keeps the entry as Claude Code would.
    shape: (entry) => ({ ...stdio(entry), env: {} }),
    next: (scope, project, name) =>
      scope === 'project'
        ? `Start \`claude\` in ${project}; it asks once whether to use the servers of .mcp.json (approve ${name}), then /mcp shows it.`
        : `Start a new \`claude\` session (in any folder); \`claude mcp list\` or /mcp shows ${name}.`,
  },
  cursor: {
    id: 'cursor',
    title: 'Cursor',
    serversKey: 'mcpServers',
    jsonc: false,
    userFile: (host) => pathsOf(host).join(home(host), '.cursor', 'mcp.json'),
    projectFile: ['.cursor', 'mcp.json'],
    shape: plain,
    next: (scope, project, name) => `Restart Cursor${scope === 'project' ? ` and open ${project}` : ''}, then check that ${name} is listed and switched on in Cursor Settings > MCP.`,
  },
  vscode: {
    id: 'vscode',
    title: 'VS Code',
    serversKey: 'servers',
    jsonc: true,
    // The default profile's folder; another profile keeps its own mcp.json under User/profiles/.
    userFile: (host) => pathsOf(host).join(appData(host), 'Code', 'User', 'mcp.json'),
    projectFile: ['.vscode', 'mcp.json'],
    shape: stdio,
    next: (scope, project, name) =>
      `${scope === 'project' ? `Open ${project} in VS Code` : 'In VS Code (default profile)'}: run "MCP: List Servers" and start ${name} (it asks once whether to trust it); its tools are offered in Copilot Chat's agent mode.`,
  },
  windsurf: {
    id: 'windsurf',
    title: 'Windsurf',
    serversKey: 'mcpServers',
    jsonc: false,
    userFile: (host) => pathsOf(host).join(home(host), '.codeium', 'windsurf', 'mcp_config.json'),
    shape: plain,
    next: (_scope, _project, name) => `In Windsurf, open Cascade's MCP servers panel and press refresh (or restart Windsurf); ${name} is then listed.`,
  },
};

export function isClientId(name: string): name is ClientId {
  return (CLIENTS as readonly string[]).includes(name);
}

/** The scopes a client has, the one used without --scope first. */
export function scopesOf(spec: ClientSpec): Scope[] {
  return spec.projectFile ? ['project', 'user'] : ['user'];
}

/** The file of a scope the client has; `project` is the absolute project folder. */
export function configFile(spec: ClientSpec, scope: Scope, host: Host, project: string): string {
  if (scope === 'user' || !spec.projectFile) return spec.userFile(host);
  return pathsOf(host).join(project, ...spec.projectFile);
}

/** The whole file a client would need if bulkhead were its only server. */
export function snippetOf(spec: ClientSpec, name: string, entry: ServerEntry): string {
  return `${JSON.stringify({ [spec.serversKey]: { [name]: spec.shape(entry) } }, null, 2)}\n`;
}

export interface ClientSnippet {
  readonly client: ClientId;
  readonly title: string;
  /** The user-scope file on this machine. */
  readonly file: string;
  /** The project-scope file, relative to the project folder, where the client has one. */
  readonly projectFile?: string;
  readonly json: string;
}

/** One snippet per client, for `bulkhead start` to print (or a user to paste). */
export function clientSnippets(entry: ServerEntry, name = 'bulkhead', host: Host = currentHost()): ClientSnippet[] {
  return CLIENTS.map((id) => {
    const spec = CLIENT_SPECS[id];
    return {
      client: id,
      title: spec.title,
      file: spec.userFile(host),
      ...(spec.projectFile ? { projectFile: pathsOf(host).join(...spec.projectFile) } : {}),
      json: snippetOf(spec, name, entry),
    };
  });
}
