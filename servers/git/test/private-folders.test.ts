import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { tempWorkspace, type TempWorkspace } from '@bulkhead/core/testing';
import { commit, initRepo, startGit, writeFiles, type GitHarness } from './helpers.js';

const approvalsRefusal = (path: string) => `${path} is in the control-plane folder's approvals (pending approvals are decided by a human, not read by tools); it cannot be read`;
const keysRefusal = (path: string) => `${path} is in the control-plane folder's keys (bearer tokens, signing keys); it cannot be read`;
const LEAKS = /SECRET|ap-1|ap-2|console\.secret|http\.token/;

describe('a repository whose work tree holds the control-plane folder', () => {
  let ws: TempWorkspace;
  let git: GitHarness;
  beforeAll(async () => {
    ws = tempWorkspace({}, 'bulkhead-git-private-');
    initRepo(ws.root);
    // Committed by mistake (no .gitignore for the folder yet), then changed and added to.
    commit(ws.root, 'all of it', {
      'a.txt': 'a\n',
      '.bulkhead/permissions.yaml': 'allow:\n  - git\n',
      '.bulkhead/keys/console.secret': 'CONSOLE_SECRET\n',
      '.bulkhead/approvals/ap-1.json': '{"arguments":"APPROVAL_SECRET"}\n',
    });
    writeFiles(ws.root, {
      'a.txt': 'a changed\n',
      '.bulkhead/keys/console.secret': 'CONSOLE_SECRET rotated\n',
      '.bulkhead/keys/bulkhead.http.token': 'TOKEN_SECRET\n',
      '.bulkhead/approvals/ap-1.json': '{"arguments":"APPROVAL_SECRET","decision":"once"}\n',
      '.bulkhead/approvals/ap-2.json': '{"arguments":"APPROVAL_SECRET two"}\n',
      '.bulkhead/notes.md': 'untracked, ordinary\n',
    });
    git = await startGit({ ws, controlInside: true });
  });
  afterAll(async () => {
    await git.close();
    ws.cleanup();
  });

  it('git_status lists the rest of the work tree and nothing in keys/ or approvals/', async () => {
    const status = await git.call<{ unstaged: { path: string }[]; untracked: string[] }>('git_status');
    expect(status.structured.unstaged.map((entry) => entry.path)).toEqual(['a.txt']);
    expect(status.structured.untracked).toEqual(['.bulkhead/notes.md']);
    expect(status.text).not.toMatch(LEAKS);
  });

  it('git_show_file and git_blame refuse them, at HEAD and by a path written another way', async () => {
    for (const tool of ['git_show_file', 'git_blame']) {
      expect(await git.call(tool, { rev: 'HEAD', path: '.bulkhead/approvals/ap-1.json' }), tool).toMatchObject({ isError: true, text: approvalsRefusal('.bulkhead/approvals/ap-1.json') });
      expect(await git.call(tool, { rev: 'HEAD', path: './.bulkhead/keys/console.secret' }), tool).toMatchObject({ isError: true, text: keysRefusal('.bulkhead/keys/console.secret') });
    }
    expect((await git.call('git_show_file', { rev: 'HEAD', path: '.bulkhead/permissions.yaml' })).text).toBe('     1\tallow:\n     2\t  - git');
  });

  it('git_diff and git_show leave them out altogether, names included', async () => {
    const worktree = await git.call<{ files: { path: string }[] }>('git_diff');
    expect(worktree.structured.files.map((file) => file.path)).toEqual(['a.txt']);
    const named = await git.call<{ files: { path: string }[] }>('git_diff', { from: 'HEAD', path: '.bulkhead/approvals' });
    expect(named.structured.files).toEqual([]);
    const show = await git.call<{ files: { path: string }[] }>('git_show', { rev: 'HEAD' });
    expect(show.structured.files.map((file) => file.path)).toEqual(['.bulkhead/permissions.yaml', 'a.txt']);
    for (const text of [worktree.text, named.text, show.text]) expect(text).not.toMatch(LEAKS);
  });
});
