import { describe, expect, it } from 'vitest';
import { CODE_ENTRIES, PathGlobSet, PERSISTENCE_ENTRIES, PERSISTENCE_GLOBS, SANDBOX_HELD_ENTRIES, WRITE_PROTECTED_GLOBS } from '@bulkhead/core';

const writeProtected = new PathGlobSet(WRITE_PROTECTED_GLOBS, { ignoreCase: true });

describe('the protected set: one list of entries for fs_write and the shell sandbox', () => {
  it('holds the persistence points of a home folder and what becomes code', () => {
    const paths = SANDBOX_HELD_ENTRIES.map((entry) => entry.path);
    for (const path of ['.bashrc', '.profile', '.bash_profile', '.bash_login', '.bash_logout', '.zshrc', '.zprofile', '.config/fish', '.gitconfig', '.config/git', '.npmrc', '.yarnrc', '.yarnrc.yml', '.pypirc', '.config/autostart', '.config/systemd', '.local/share/applications', '.gitmodules', '.mcp.json', '.claude', '.vscode', '.cursor', '.github']) {
      expect(paths).toContain(path);
    }
    expect(SANDBOX_HELD_ENTRIES).toEqual([...CODE_ENTRIES, ...PERSISTENCE_ENTRIES]);
    expect(new Set(paths).size).toBe(paths.length);
  });

  it('refuses writes to every entry and everything under a folder entry; a bare name at any depth, a path from the root', () => {
    for (const entry of SANDBOX_HELD_ENTRIES) {
      expect(writeProtected.match(entry.path), entry.path).toBeDefined();
      if (entry.kind === 'folder') expect(writeProtected.match(`${entry.path}/a/b`), entry.path).toBeDefined();
    }
    expect(writeProtected.match('pkg/.bashrc')).toBe('.bashrc');
    expect(writeProtected.match('pkg/.vim/plugin/x.vim')).toBe('.vim/');
    expect(writeProtected.match('.config/git/attributes')).toBe('.config/git');
    expect(writeProtected.match('.ZSHRC')).toBe('.zshrc');
    expect(PERSISTENCE_GLOBS).toContain('.config/autostart');
  });

  it('leaves ordinary files and look-alike names writable', () => {
    for (const path of ['src/profile.ts', 'bashrc.md', '.config/app.json', '.local/share/app/data', 'docs/.gitconfig.md', 'npmrc', 'config/git/config', 'bin/tool']) {
      expect(writeProtected.match(path), path).toBeUndefined();
    }
  });
});
