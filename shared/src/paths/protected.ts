import { PathGlobSet } from './globs.js';

/** Files whose content is a credential: never read by default, never written. */
export const SECRET_GLOBS: readonly string[] = [
  '.env*',
  '*.pem',
  '*.key',
  '*.p12',
  '*.pfx',
  'id_rsa*',
  'id_dsa*',
  'id_ecdsa*',
  'id_ed25519*',
  '.ssh/',
  '.gnupg/',
  '.aws/',
  '.netrc',
  // Another workspace's control-plane folder under a root (`--root ~`): its tokens, console secret and pending approvals. A server's own is refused apart, whatever its name.
  '**/.bulkhead/keys',
  '**/.bulkhead/approvals',
];

/** A file or folder, relative to a root, that something outside the agent later runs or loads as configuration. */
export interface ProtectedEntry {
  readonly path: string;
  readonly kind: 'file' | 'folder';
  /** Where it is read: in any folder a tool works in (a project's .npmrc), or only in a home folder (.bashrc). */
  readonly read: 'anywhere' | 'home';
}

const entries =
  (kind: ProtectedEntry['kind'], read: ProtectedEntry['read']) =>
  (...paths: string[]): ProtectedEntry[] =>
    paths.map((path) => ({ path, kind, read }));
const files = entries('file', 'home');
const folders = entries('folder', 'home');
const projectFiles = entries('file', 'anywhere');
const projectFolders = entries('folder', 'anywhere');

/** Agent, editor and CI configuration that becomes code (hooks, MCP servers, tasks, workflows), and git's submodule list. */
export const CODE_ENTRIES: readonly ProtectedEntry[] = [...projectFolders('.github', '.claude', '.vscode', '.cursor'), ...projectFiles('.mcp.json', '.gitmodules')];

/**
 * Persistence points: what a shell, a desktop session, git, a package manager or an editor of the user runs or
 * obeys later, when a root is (or holds) a home folder. After MITRE ATT&CK T1546.004 (shell configuration),
 * T1547.013 (XDG autostart), T1543.002 (systemd user units), T1574 (hijacked search paths: ~/.local/bin) and
 * the configuration files through which git, npm, yarn, bun, pip, cargo, docker, kubectl, maven and gradle run programs.
 */
export const PERSISTENCE_ENTRIES: readonly ProtectedEntry[] = [
  // Shells (bash, sh, zsh, ksh, csh), the login session, X sessions, direnv.
  ...files('.profile', '.bashrc', '.bash_profile', '.bash_login', '.bash_logout', '.bash_aliases'),
  ...files('.zshenv', '.zprofile', '.zshrc', '.zlogin', '.zlogout', '.kshrc', '.mkshrc', '.cshrc', '.tcshrc', '.login', '.logout'),
  ...files('.pam_environment', '.xprofile', '.xinitrc', '.xsession', '.xsessionrc'),
  // direnv runs a folder's .envrc on entering it.
  ...projectFiles('.envrc'),
  ...folders('.config/fish', '.config/environment.d', '.local/bin'),
  // Autostart: desktop entries, systemd user units, KDE session scripts.
  ...folders('.config/autostart', '.config/systemd', '.local/share/systemd', '.local/share/applications', '.config/plasma-workspace'),
  // git and package managers whose configuration names programs to run.
  ...files('.gitconfig', '.git-credentials'),
  ...folders('.config/git'),
  // A project's own .npmrc (node-options, script-shell), .yarnrc.yml (yarnPath), bunfig.toml (preload) and .cargo/config.toml (rustc-wrapper) run programs too.
  ...projectFiles('.npmrc', '.yarnrc', '.yarnrc.yml', '.bunfig.toml', 'bunfig.toml', '.cargo/config', '.cargo/config.toml'),
  ...files('.pypirc', '.pydistutils.cfg', '.condarc', '.gemrc'),
  ...folders('.config/pip', '.pip'),
  ...files('.docker/config.json', '.kube/config', '.m2/settings.xml', '.mavenrc', '.gradle/gradle.properties'),
  ...folders('.gradle/init.d'),
  // Keys and the configuration that runs programs (ssh's ProxyCommand and authorized_keys, gpg-agent's pinentry, aws's credential_process): secrets too, held in the sandbox as well.
  ...folders('.ssh', '.gnupg', '.aws'),
  // Editors and terminal multiplexers that run commands from their start-up files.
  ...files('.vimrc', '.gvimrc', '.emacs', '.tmux.conf', '.screenrc'),
  // vim with `exrc` reads the current folder's .exrc.
  ...projectFiles('.exrc'),
  ...folders('.vim', '.config/nvim', '.emacs.d'),
];

/**
 * The glob of an entry: a bare name matches at any depth (a folder with everything under it), a path with `/`
 * from the root (where a home folder keeps it).
 */
function entryGlob(entry: ProtectedEntry): string {
  return entry.kind === 'folder' && !entry.path.includes('/') ? `${entry.path}/` : entry.path;
}

/** Files and folders that become code or configuration an agent must not rewrite. */
export const CODE_GLOBS: readonly string[] = ['.git/', ...CODE_ENTRIES.map(entryGlob)];

/** Persistence points (see PERSISTENCE_ENTRIES), as globs. */
export const PERSISTENCE_GLOBS: readonly string[] = PERSISTENCE_ENTRIES.map(entryGlob);

/**
 * What the shell sandbox holds read-only at the top of every root when it exists, and, when it does not, in every
 * root (`read: 'anywhere'`) or in every home folder (`read: 'home'`). A `.git` is handled on its own: most of it
 * must stay writable. Policy files are not in it: a repository may keep a policy file as an ordinary file.
 */
export const SANDBOX_HELD_ENTRIES: readonly ProtectedEntry[] = [...CODE_ENTRIES, ...PERSISTENCE_ENTRIES];

/** Bulkhead's own policy files, wherever they sit: a tool must not loosen the rules it runs under. */
export const POLICY_GLOBS: readonly string[] = ['*_policy.yaml', 'permissions.yaml', 'hooks.yaml', 'bulkhead.yaml'];

/** What no write, move or delete may touch, whatever a policy says; policies can only add to it. */
export const WRITE_PROTECTED_GLOBS: readonly string[] = [...SECRET_GLOBS, ...CODE_GLOBS, ...PERSISTENCE_GLOBS, ...POLICY_GLOBS];

export const secretGlobs = new PathGlobSet(SECRET_GLOBS);
