import { lstatSync, mkdirSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { PERSISTENCE_ENTRIES } from '@bulkhead/core';
import { tempWorkspace } from '@bulkhead/core/testing';
import { loadFsWritePolicy } from '@bulkhead/fs-write';
import { sha256, skipAudit, snapshot, strayTemps } from './attack-kit.js';
import { startFsWrite, type FsWriteHarness } from './helpers.js';

const TOOLS = {
  write_file: (path: string) => ({ path, content: 'pwned\n' }),
  edit_file: (path: string) => ({ path, old_string: 'original', new_string: 'pwned' }),
  multi_edit: (path: string) => ({ path, edits: [{ old_string: 'original', new_string: 'pwned' }] }),
} as const;
type ToolName = keyof typeof TOOLS;

const PROTECTED_FILES = {
  '.git/config': 'original git config\n',
  '.git/hooks/pre-commit': 'original hook\n',
  '.env': 'original SECRET=1\n',
  'app/.env.local': 'original SECRET=2\n',
  'certs/server.pem': 'original pem\n',
  '.ssh/authorized_keys': 'original key\n',
  '.github/workflows/ci.yml': 'original ci\n',
  '.vscode/settings.json': 'original vscode\n',
  '.cursor/rules.md': 'original cursor\n',
  '.claude/settings.json': 'original claude\n',
  '.mcp.json': 'original mcp\n',
  'config/fs_policy.yaml': 'original policy\n',
  'fs_write_policy.yaml': 'original policy\n',
  'docs/permissions.yaml': 'original permissions\n',
  'hooks.yaml': 'original hooks\n',
  'deploy/bulkhead.yaml': 'original gateway\n',
  'notes/n.txt': 'original notes\n',
  'sub/inside.txt': 'original inside\n',
};

describe.each(Object.keys(TOOLS) as ToolName[])('%s: the protected set is refused by every route, naming the rule', (tool) => {
  let fsw: FsWriteHarness;
  let root: string;
  let control: string;
  let expected: Record<string, string>;

  beforeAll(async () => {
    fsw = await startFsWrite(PROTECTED_FILES);
    root = fsw.ws.root;
    control = fsw.controlDir;
    writeFileSync(join(control, 'hooks.yaml'), 'original hooks\n');
    symlinkSync('.bulkhead', join(root, 'cp-link'));
    symlinkSync('.bulkhead/permissions.yaml', join(root, 'perm-link'));
    symlinkSync('.git', join(root, 'git-link'));
    symlinkSync('.github/workflows', join(root, 'wf-link'));
    // Symlinks whose own names are protected, pointing at ordinary folders: the tool that reads
    // `.vscode/tasks.json` or `.git/hooks/…` follows them, so writing through them is refused too.
    mkdirSync(join(root, 'ide'));
    symlinkSync('../notes', join(root, 'ide/.vscode'));
    symlinkSync('sub', join(root, 'in-link'));
    expected = snapshot(root, skipAudit);
  });
  afterAll(async () => fsw.close());
  afterEach(() => {
    expect(snapshot(root, skipAudit)).toEqual(expected);
    expect(strayTemps(root)).toEqual([]);
  });

  const refused = async (path: string, text: string) => {
    expect(await fsw.call(tool, TOOLS[tool](path))).toEqual({ isError: true, text });
  };
  const controlPlane = (input: string) => `${input} is inside the control-plane folder ${root}/.bulkhead; tools never write there`;
  const rule = (input: string, glob: string) => `${input} is in the protected set (\`${glob}\`); tools never write there`;

  it('refuses the control-plane folder by a relative path', async () => {
    await refused('.bulkhead/permissions.yaml', controlPlane('.bulkhead/permissions.yaml'));
    await refused('.bulkhead/hooks.yaml', controlPlane('.bulkhead/hooks.yaml'));
    await refused('.bulkhead/fs_write_policy.yaml', controlPlane('.bulkhead/fs_write_policy.yaml'));
    await refused('.bulkhead/new/deeper.txt', controlPlane('.bulkhead/new/deeper.txt'));
    await refused('sub/../.bulkhead/permissions.yaml', controlPlane('sub/../.bulkhead/permissions.yaml'));
    await refused('.bulkhead/audit/fs_write.jsonl', controlPlane('.bulkhead/audit/fs_write.jsonl'));
  });

  it('refuses the control-plane folder by an absolute path', async () => {
    await refused(join(control, 'permissions.yaml'), controlPlane(join(control, 'permissions.yaml')));
    await refused(join(control, 'new.yaml'), controlPlane(join(control, 'new.yaml')));
  });

  it('refuses the control-plane folder reached through a symlinked folder or file', async () => {
    await refused('cp-link/permissions.yaml', controlPlane('cp-link/permissions.yaml'));
    await refused('cp-link/new.txt', controlPlane('cp-link/new.txt'));
    // A symlinked file is never followed, whatever it points at.
    await refused('perm-link', 'perm-link is a symlink (-> .bulkhead/permissions.yaml); it is not followed: change the file it points to by its own path');
  });

  it('refuses case variants of the protected names', async () => {
    await refused('.BULKHEAD/permissions.yaml', controlPlane('.BULKHEAD/permissions.yaml'));
    await refused('.Bulkhead/x.txt', controlPlane('.Bulkhead/x.txt'));
    await refused('.Git/config', rule('.Git/config', '.git/'));
    await refused('.ENV', rule('.ENV', '.env*'));
    await refused('.GitHub/workflows/ci.yml', rule('.GitHub/workflows/ci.yml', '.github/'));
    await refused('.Mcp.Json', rule('.Mcp.Json', '.mcp.json'));
    await refused('.VSCODE/settings.json', rule('.VSCODE/settings.json', '.vscode/'));
    await refused('CERTS/SERVER.PEM', rule('CERTS/SERVER.PEM', '*.pem'));
    await refused('Hooks.YAML', rule('Hooks.YAML', 'hooks.yaml'));
  });

  it('refuses protected paths that do not exist yet', async () => {
    await refused('.github/workflows/new.yml', rule('.github/workflows/new.yml', '.github/'));
    await refused('new/.git/hooks/x', rule('new/.git/hooks/x', '.git/'));
    await refused('a/b/.claude/settings.json', rule('a/b/.claude/settings.json', '.claude/'));
    await refused('pkg/.mcp.json', rule('pkg/.mcp.json', '.mcp.json'));
    await refused('deep/.ssh/id_ed25519', rule('deep/.ssh/id_ed25519', 'id_ed25519*'));
    await refused('deep/.ssh/config', rule('deep/.ssh/config', '.ssh/'));
    await refused('keys/new.key', rule('keys/new.key', '*.key'));
    await refused('id_rsa.pub', rule('id_rsa.pub', 'id_rsa*'));
  });

  it('refuses the .git internals, hooks and secrets that exist', async () => {
    await refused('.git/config', rule('.git/config', '.git/'));
    await refused('.git/hooks/pre-commit', rule('.git/hooks/pre-commit', '.git/'));
    await refused('.env', rule('.env', '.env*'));
    await refused('app/.env.local', rule('app/.env.local', '.env*'));
    await refused('certs/server.pem', rule('certs/server.pem', '*.pem'));
    await refused('.ssh/authorized_keys', rule('.ssh/authorized_keys', '.ssh/'));
    await refused(join(root, '.env'), rule(join(root, '.env'), '.env*'));
  });

  it('refuses policy files anywhere: *_policy.yaml, permissions.yaml, hooks.yaml, bulkhead.yaml', async () => {
    await refused('fs_write_policy.yaml', rule('fs_write_policy.yaml', '*_policy.yaml'));
    await refused('config/fs_policy.yaml', rule('config/fs_policy.yaml', '*_policy.yaml'));
    await refused('any/where/new_policy.yaml', rule('any/where/new_policy.yaml', '*_policy.yaml'));
    await refused('docs/permissions.yaml', rule('docs/permissions.yaml', 'permissions.yaml'));
    await refused('permissions.yaml', rule('permissions.yaml', 'permissions.yaml'));
    await refused('hooks.yaml', rule('hooks.yaml', 'hooks.yaml'));
    await refused('deploy/bulkhead.yaml', rule('deploy/bulkhead.yaml', 'bulkhead.yaml'));
  });

  it('refuses files that become code or agent config: .vscode/, .cursor/, .claude/, .mcp.json, .github/', async () => {
    await refused('.vscode/settings.json', rule('.vscode/settings.json', '.vscode/'));
    await refused('.vscode/tasks.json', rule('.vscode/tasks.json', '.vscode/'));
    await refused('.cursor/rules.md', rule('.cursor/rules.md', '.cursor/'));
    await refused('.cursor/mcp.json', rule('.cursor/mcp.json', '.cursor/'));
    await refused('.claude/settings.json', rule('.claude/settings.json', '.claude/'));
    await refused('.claude/commands/x.md', rule('.claude/commands/x.md', '.claude/'));
    await refused('.mcp.json', rule('.mcp.json', '.mcp.json'));
    await refused('.github/workflows/ci.yml', rule('.github/workflows/ci.yml', '.github/'));
  });

  it('refuses the persistence points of a root that is a home folder (shell start-up, autostart, git and package-manager configuration) and .gitmodules', async () => {
    await refused('.bashrc', rule('.bashrc', '.bashrc'));
    await refused('.profile', rule('.profile', '.profile'));
    await refused('.bash_profile', rule('.bash_profile', '.bash_profile'));
    await refused('.zshrc', rule('.zshrc', '.zshrc'));
    await refused('.gitconfig', rule('.gitconfig', '.gitconfig'));
    await refused('.config/git/config', rule('.config/git/config', '.config/git'));
    await refused('.npmrc', rule('.npmrc', '.npmrc'));
    await refused('.config/autostart/x.desktop', rule('.config/autostart/x.desktop', '.config/autostart'));
    await refused('.config/systemd/user/x.service', rule('.config/systemd/user/x.service', '.config/systemd'));
    await refused('.config/fish/config.fish', rule('.config/fish/config.fish', '.config/fish'));
    await refused('.local/bin/git', rule('.local/bin/git', '.local/bin'));
    await refused('.gitmodules', rule('.gitmodules', '.gitmodules'));
    await refused('vendor/lib/.gitmodules', rule('vendor/lib/.gitmodules', '.gitmodules'));
    await refused('.BashRC', rule('.BashRC', '.bashrc'));
    await refused('.Config/Autostart/x.desktop', rule('.Config/Autostart/x.desktop', '.config/autostart'));
    // Every entry of the one list the sandbox holds read-only too: a file by its name, a folder by a file in it.
    for (const entry of PERSISTENCE_ENTRIES) {
      const path = entry.kind === 'file' ? entry.path : `${entry.path}/new-entry`;
      const glob = entry.kind === 'folder' && !entry.path.includes('/') ? `${entry.path}/` : entry.path;
      // direnv's .envrc is a secret's name as well: the first rule that matches is named.
      await refused(path, rule(path, path === '.envrc' ? '.env*' : glob));
    }
  });

  it('refuses protected folders reached through a symlinked folder with an ordinary name', async () => {
    await refused('git-link/config', rule('git-link/config', '.git/'));
    await refused('git-link/hooks/post-checkout', rule('git-link/hooks/post-checkout', '.git/'));
    await refused('wf-link/ci.yml', rule('wf-link/ci.yml', '.github/'));
    await refused('wf-link/new.yml', rule('wf-link/new.yml', '.github/'));
  });

  it('refuses a symlink whose own name is protected, though it points at an ordinary folder', async () => {
    // Whatever reads ide/.vscode/tasks.json follows the link, so it is agent config there.
    await refused('ide/.vscode/tasks.json', rule('ide/.vscode/tasks.json', '.vscode/'));
    await refused('ide/.vscode/n.txt', rule('ide/.vscode/n.txt', '.vscode/'));
    expect(readFileSync(join(root, 'notes/n.txt'), 'utf8')).toBe('original notes\n');
  });

  it('writes through a symlinked folder pointing inside: the change lands at the real place, the link stays', async () => {
    const result = await fsw.call(tool, TOOLS[tool]('in-link/inside.txt'));
    expect(result.isError).toBe(false);
    expect(result.text.split('\n')[0]).toMatch(/^Updated sub\/inside\.txt \(/);
    expect(readFileSync(join(root, 'sub/inside.txt'), 'utf8')).toBe(tool === 'write_file' ? 'pwned\n' : 'pwned inside\n');
    expect(lstatSync(join(root, 'in-link')).isSymbolicLink()).toBe(true);
    writeFileSync(join(root, 'sub/inside.txt'), 'original inside\n');
    if (tool === 'write_file') {
      const created = await fsw.call(tool, TOOLS[tool]('in-link/new/deep.txt'));
      expect(created.text.split('\n')[0]).toBe(`Created sub/new/deep.txt (new file; +1 −0 lines; 6 B; sha256 ${sha256('pwned\n')})`);
      expect(readFileSync(join(root, 'sub/new/deep.txt'), 'utf8')).toBe('pwned\n');
      rmSync(join(root, 'sub/new'), { recursive: true });
    }
  });
});

describe('protect globs of fs_write_policy.yaml add to the protected set and cannot remove from it', () => {
  let fsw: FsWriteHarness;
  let expected: Record<string, string>;
  beforeAll(async () => {
    fsw = await startFsWrite(
      { '.env': 'original\n', '.git/config': 'original\n', 'secrets/a.txt': 'original\n', 'yarn.lock': 'original\n', 'deploy/prod.yaml': 'original\n', 'ok.txt': 'original\n' },
      { policy: { protect: ['secrets/', '*.lock', 'deploy/prod.yaml', '.env*', '!.env*', '!.git/', '!*'] } },
    );
    expected = snapshot(fsw.ws.root, skipAudit);
  });
  afterAll(async () => fsw.close());
  afterEach(() => {
    expect(snapshot(fsw.ws.root, skipAudit)).toEqual(expected);
  });
  const added = (input: string, glob: string) => `${input} is in the protected set (\`${glob}\` in protect of fs_write_policy.yaml); tools never write there`;

  it.each(Object.keys(TOOLS) as ToolName[])('%s refuses what a protect glob adds, naming fs_write_policy.yaml', async (tool) => {
    const call = (path: string) => fsw.call(tool, TOOLS[tool](path));
    expect(await call('secrets/a.txt')).toEqual({ isError: true, text: added('secrets/a.txt', 'secrets/') });
    expect(await call('nested/secrets/new.txt')).toEqual({ isError: true, text: added('nested/secrets/new.txt', 'secrets/') });
    expect(await call('yarn.lock')).toEqual({ isError: true, text: added('yarn.lock', '*.lock') });
    expect(await call('YARN.LOCK')).toEqual({ isError: true, text: added('YARN.LOCK', '*.lock') });
    expect(await call('deploy/prod.yaml')).toEqual({ isError: true, text: added('deploy/prod.yaml', 'deploy/prod.yaml') });
  });

  it.each(Object.keys(TOOLS) as ToolName[])('%s still refuses the defaults: a repeated glob stays built-in, a negated glob negates nothing', async (tool) => {
    const call = (path: string) => fsw.call(tool, TOOLS[tool](path));
    expect(await call('.env')).toEqual({ isError: true, text: '.env is in the protected set (`.env*`); tools never write there' });
    expect(await call('.git/config')).toEqual({ isError: true, text: '.git/config is in the protected set (`.git/`); tools never write there' });
    expect(await call('.bulkhead/permissions.yaml')).toEqual({
      isError: true,
      text: `.bulkhead/permissions.yaml is inside the control-plane folder ${fsw.controlDir}; tools never write there`,
    });
    // `!*` is a literal name, not "everything": ordinary files stay writable.
    expect((await call('ok.txt')).isError).toBe(false);
    writeFileSync(fsw.ws.path('ok.txt'), 'original\n');
  });

  it('has no key that removes a default: an unknown key in the file is refused, naming file, key and allowed keys', () => {
    const ws = tempWorkspace({ 'fs_write_policy.yaml': 'protect: []\nunprotect:\n  - .env*\n' });
    try {
      expect(() => loadFsWritePolicy(ws.root)).toThrow(
        `${ws.path('fs_write_policy.yaml')}: invalid configuration\n  - top level (line 1): unknown key \`unprotect\`; allowed keys: $schema, enabled, tools, roots, protect, limits, trash`,
      );
    } finally {
      ws.cleanup();
    }
  });
});
