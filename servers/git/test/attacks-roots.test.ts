import { cpSync, mkdirSync, readdirSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { basename, dirname, join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { tempWorkspace, type TempWorkspace } from '@bulkhead/core/testing';
import { everyReadCall, refused, repoState, startAttackServer, type AttackServer } from './attack-kit.js';
import { commit, git, initRepo } from './helpers.js';

/**
 * A repository outside the roots (or any part of one: its git directory, common directory, object
 * store, refs, reflogs) must never be read or written. Each attack builds its repository, then
 * calls every tool on it (commit_changeset included) and expects the exact refusal from each; the
 * outside repository must be byte-identical afterwards and its secret never shown.
 */
describe('a repository, or a part of one, outside the roots', () => {
  let h: AttackServer;
  let outside: TempWorkspace;
  /** A repository outside the roots; HEAD has secret.txt. */
  let secret: string;
  let secretHead: string;
  let root: string;

  beforeEach(async () => {
    h = await startAttackServer({ policy: { allow_write: true } });
    root = h.ws.root;
    outside = tempWorkspace({}, 'bulkhead-git-outside-');
    secret = initRepo(outside.path('secret'));
    secretHead = commit(secret, 'outside commit', { 'secret.txt': 'TOP SECRET\n', 'a.txt': 'outside a\n' });
  });
  afterEach(async () => {
    await h.close();
    outside.cleanup();
  });

  /** Every tool on `repo` gets exactly `text` back, and nothing outside changed or showed. */
  async function refusedByEveryTool(repo: string, text: string): Promise<void> {
    const before = repoState(secret);
    const calls: [string, Record<string, unknown>][] = [
      ...everyReadCall(repo),
      ['git_diff', { repo, from: 'HEAD~1', to: 'HEAD' }],
      ['git_show_file', { repo, rev: secretHead, path: 'secret.txt' }],
      ['commit_changeset', { repo, branch: 'main', expected_head: secretHead, message: 'planted', files: [{ path: 'planted.txt', content: 'x\n' }] }],
    ];
    for (const [name, args] of calls) {
      expect(await h.outcome(name, args), `${name} ${JSON.stringify(args)}`).toEqual(refused(text));
    }
    expect(repoState(secret)).toEqual(before);
  }

  const outsideText = (input: string) => `${input} is outside the allowed roots (${root}); give a path inside them`;
  const partOutside = (shown: string, what: string, real: string) => `${shown}: ${what} is ${real}, outside the allowed roots (${root}); the repository is refused`;

  it('refuses an absolute path to a repository outside', async () => {
    await refusedByEveryTool(secret, outsideText(secret));
    await refusedByEveryTool(join(secret, '.git'), outsideText(join(secret, '.git')));
  });

  it('refuses a relative path that climbs out with ..', async () => {
    const climb = `../${basename(outside.root)}/secret`;
    await refusedByEveryTool(climb, outsideText(climb));
    await refusedByEveryTool('sub/../../x', outsideText('sub/../../x'));
    await refusedByEveryTool('..', outsideText('..'));
  });

  it('refuses a sibling folder whose name starts with the root name (/root_evil)', async () => {
    const evil = `${root}_evil`;
    try {
      initRepo(evil);
      commit(evil, 'evil', { 'a.txt': 'evil\n' });
      await refusedByEveryTool(evil, outsideText(evil));
      await refusedByEveryTool(`../${basename(evil)}`, outsideText(`../${basename(evil)}`));
    } finally {
      rmSync(evil, { recursive: true, force: true });
    }
  });

  it('refuses a symlink inside the roots to a repository outside (to its top, and to its .git)', async () => {
    symlinkSync(secret, h.ws.path('link'));
    symlinkSync(join(secret, '.git'), h.ws.path('gitlink'));
    await refusedByEveryTool('link', `link resolves through a symlink to ${secret}, which is outside the allowed roots (${root})`);
    await refusedByEveryTool('gitlink', `gitlink resolves through a symlink to ${secret}/.git, which is outside the allowed roots (${root})`);
  });

  it('refuses a repository whose .git is a symlink to a git directory outside', async () => {
    mkdirSync(h.ws.path('repo'));
    symlinkSync(join(secret, '.git'), h.ws.path('repo/.git'));
    await refusedByEveryTool('repo', partOutside('repo', 'its git directory (.git)', join(secret, '.git')));
  });

  it('refuses a .git file whose gitdir points outside, absolute or relative', async () => {
    h.ws.write('abs/.git', `gitdir: ${secret}/.git\n`);
    await refusedByEveryTool('abs', partOutside('abs', 'its git directory (named by .git)', join(secret, '.git')));
    h.ws.write('rel/.git', `gitdir: ../../${basename(outside.root)}/secret/.git\n`);
    await refusedByEveryTool('rel', partOutside('rel', 'its git directory (named by .git)', join(secret, '.git')));
  });

  it('refuses a .git that is a symlink to a gitdir file (inside the roots) pointing outside', async () => {
    h.ws.write('pointer.txt', `gitdir: ${secret}/.git\n`);
    mkdirSync(h.ws.path('repo'));
    symlinkSync(h.ws.path('pointer.txt'), h.ws.path('repo/.git'));
    await refusedByEveryTool('repo', partOutside('repo', 'its git directory (named by .git)', join(secret, '.git')));
  });

  it('refuses a gitdir that names a file (another gitdir pointer, which git would follow outside)', async () => {
    h.ws.write('pointer.txt', `gitdir: ${secret}/.git\n`);
    h.ws.write('repo/.git', `gitdir: ${h.ws.path('pointer.txt')}\n`);
    await refusedByEveryTool('repo', `repo: its git directory ${h.ws.path('pointer.txt')} (named by .git) is not a folder; the repository is broken`);
  });

  it('refuses a linked worktree whose commondir points outside, absolute or relative', async () => {
    const main = initRepo(h.ws.path('main'));
    commit(main, 'inside', { 'a.txt': 'inside\n' });
    git(main, ['worktree', 'add', '-q', '../wt']);
    writeFileSync(join(main, '.git/worktrees/wt/commondir'), `${secret}/.git\n`);
    await refusedByEveryTool('wt', partOutside('wt', 'its common git directory (named by commondir)', join(secret, '.git')));
    const relative = `../../../../../${basename(outside.root)}/secret/.git`;
    writeFileSync(join(main, '.git/worktrees/wt/commondir'), `${relative}\n`);
    await refusedByEveryTool('wt', partOutside('wt', 'its common git directory (named by commondir)', join(secret, '.git')));
  });

  it('refuses a commondir that is a symlink to a file (inside the roots) naming a directory outside', async () => {
    const repo = initRepo(h.ws.path('repo'));
    commit(repo, 'inside', { 'a.txt': 'inside\n' });
    h.ws.write('common.txt', `${secret}/.git\n`);
    symlinkSync(h.ws.path('common.txt'), join(repo, '.git/commondir'));
    await refusedByEveryTool('repo', partOutside('repo', 'its common git directory (named by commondir)', join(secret, '.git')));
  });

  it('reads commondir as git does: a trailing space is part of the name', async () => {
    // git strips only line ends: "decoy.git " (with the space) is the symlink to the outside repository.
    const repo = initRepo(h.ws.path('repo'));
    commit(repo, 'inside', { 'a.txt': 'inside\n' });
    cpSync(join(repo, '.git'), h.ws.path('decoy.git'), { recursive: true });
    symlinkSync(join(secret, '.git'), h.ws.path('decoy.git '));
    writeFileSync(join(repo, '.git/commondir'), `${h.ws.path('decoy.git ')}\n`);
    await refusedByEveryTool('repo', partOutside('repo', 'its common git directory (named by commondir)', join(secret, '.git')));
  });

  it('resolves a relative commondir through symlinks as git does (.. after a symlink climbs from its target)', async () => {
    // Read as text, d/link/../../secret/.git is inside the root; git resolves link first, and ..
    // then climbs from its target outside.
    const repo = initRepo(h.ws.path('repo'));
    commit(repo, 'inside', { 'a.txt': 'inside\n' });
    cpSync(join(repo, '.git'), h.ws.path('secret/.git'), { recursive: true });
    mkdirSync(outside.path('x/y'), { recursive: true });
    mkdirSync(h.ws.path('d'));
    symlinkSync(outside.path('x/y'), h.ws.path('d/link'));
    writeFileSync(join(repo, '.git/commondir'), `${h.ws.path('d/link')}/../../secret/.git\n`);
    await refusedByEveryTool('repo', partOutside('repo', 'its common git directory (named by commondir)', join(secret, '.git')));
  });

  describe('objects borrowed from outside (objects/info/alternates)', () => {
    let repo: string;
    const alternates = () => join(repo, '.git/objects/info/alternates');
    const borrowed = (real: string) => partOutside('repo', 'an object store it borrows from (objects/info/alternates)', real);
    beforeEach(() => {
      repo = initRepo(h.ws.path('repo'));
      commit(repo, 'inside', { 'a.txt': 'inside\n' });
    });

    it('refuses an absolute path outside', async () => {
      writeFileSync(alternates(), `${secret}/.git/objects\n`);
      await refusedByEveryTool('repo', borrowed(`${secret}/.git/objects`));
    });

    it('refuses a relative path that climbs outside', async () => {
      writeFileSync(alternates(), `../../../../${basename(outside.root)}/secret/.git/objects\n`);
      await refusedByEveryTool('repo', borrowed(`${secret}/.git/objects`));
    });

    it('refuses an object store inside the roots that itself borrows from outside', async () => {
      const middle = initRepo(h.ws.path('middle'));
      writeFileSync(join(middle, '.git/objects/info/alternates'), `${secret}/.git/objects\n`);
      writeFileSync(alternates(), `${middle}/.git/objects\n`);
      await refusedByEveryTool('repo', borrowed(`${secret}/.git/objects`));
    });

    it('follows a chain as deep as git does (six stores)', async () => {
      // git reads alternates files to a nesting depth of 5: the sixth store in a chain is used.
      let previous = alternates();
      for (let i = 1; i <= 5; i++) {
        const store = h.ws.mkdir(`store${i}/info`).replace(/\/info$/, '');
        writeFileSync(previous, `${store}\n`);
        previous = join(store, 'info/alternates');
      }
      writeFileSync(previous, `${secret}/.git/objects\n`);
      await refusedByEveryTool('repo', borrowed(`${secret}/.git/objects`));
    });

    it('reads a C-quoted entry as git does ("\\057..." is a slash)', async () => {
      const quoted = `${secret}/.git/objects`.replaceAll('/', '\\057');
      writeFileSync(alternates(), `"${quoted}"\n`);
      await refusedByEveryTool('repo', borrowed(`${secret}/.git/objects`));
    });

    it('reads an entry as git does: a trailing space is part of the name', async () => {
      mkdirSync(h.ws.path('decoy'));
      symlinkSync(join(secret, '.git/objects'), h.ws.path('decoy '));
      writeFileSync(alternates(), `${h.ws.path('decoy ')}\n`);
      await refusedByEveryTool('repo', borrowed(`${secret}/.git/objects`));
    });

    it('refuses an alternates file that is a symlink to a file (inside the roots) listing a store outside', async () => {
      h.ws.write('alternates.txt', `${secret}/.git/objects\n`);
      symlinkSync(h.ws.path('alternates.txt'), alternates());
      await refusedByEveryTool('repo', borrowed(`${secret}/.git/objects`));
    });

    it('refuses an alternates file too long to check whole (a store outside on its last line)', async () => {
      writeFileSync(alternates(), `${'#'.repeat(100_000)}\n${secret}/.git/objects\n`);
      await refusedByEveryTool('repo', `repo: ${alternates()} is larger than 64 KiB, too large to check; the repository is refused`);
    });

    it('resolves a relative entry from the real object store, as git does, when objects is a symlink', async () => {
      // objects -> <root>/o: git reads ../../<outside>/... from <root>/o, which climbs out of the root.
      const store = h.ws.path('o');
      cpSync(join(repo, '.git/objects'), store, { recursive: true });
      rmSync(join(repo, '.git/objects'), { recursive: true });
      symlinkSync(store, join(repo, '.git/objects'));
      writeFileSync(join(store, 'info/alternates'), `../../${basename(outside.root)}/secret/.git/objects\n`);
      await refusedByEveryTool('repo', borrowed(`${secret}/.git/objects`));
    });
  });

  describe('parts of the git directory that are symlinks to outside', () => {
    let repo: string;
    beforeEach(() => {
      repo = initRepo(h.ws.path('repo'));
      commit(repo, 'inside', { 'a.txt': 'inside\n' });
    });
    const swap = (part: string, target: string) => {
      rmSync(join(repo, '.git', part), { recursive: true, force: true });
      symlinkSync(target, join(repo, '.git', part));
    };
    const symlinked = (part: string, real: string) => partOutside('repo', `its git directory's ${part} (a symlink)`, real);

    it('refuses objects and refs taken from a repository outside (its history would be read, commits written there)', async () => {
      swap('objects', join(secret, '.git/objects'));
      swap('refs', join(secret, '.git/refs'));
      await refusedByEveryTool('repo', symlinked('objects', join(secret, '.git/objects')));
    });

    it('refuses refs alone taken from outside', async () => {
      swap('refs', join(secret, '.git/refs'));
      await refusedByEveryTool('repo', symlinked('refs', join(secret, '.git/refs')));
    });

    it('refuses refs/heads taken from outside', async () => {
      swap('refs/heads', join(secret, '.git/refs/heads'));
      await refusedByEveryTool('repo', symlinked('refs/heads', join(secret, '.git/refs/heads')));
    });

    it('refuses reflogs kept outside (commit_changeset would append to them)', async () => {
      mkdirSync(outside.path('logs'));
      swap('logs', outside.path('logs'));
      await refusedByEveryTool('repo', symlinked('logs', outside.path('logs')));
    });

    it('refuses packed-refs taken from outside', async () => {
      git(secret, ['pack-refs', '--all']);
      swap('packed-refs', join(secret, '.git/packed-refs'));
      await refusedByEveryTool('repo', symlinked('packed-refs', join(secret, '.git/packed-refs')));
    });

    it('refuses a pack file taken from outside', async () => {
      git(secret, ['repack', '-q', '-a', '-d']);
      const pack = join(secret, '.git/objects/pack');
      for (const name of readdirSync(pack)) symlinkSync(join(pack, name), join(repo, '.git/objects/pack', name));
      const first = readdirSync(pack).sort()[0]!;
      await refusedByEveryTool('repo', symlinked(`objects/pack/${first}`, join(pack, first)));
    });

    it('refuses a loose-object folder taken from outside', async () => {
      const blob = git(secret, ['rev-parse', 'HEAD:secret.txt']).trim();
      swap(`objects/${blob.slice(0, 2)}`, join(secret, '.git/objects', blob.slice(0, 2)));
      await refusedByEveryTool('repo', symlinked(`objects/${blob.slice(0, 2)}`, join(secret, '.git/objects', blob.slice(0, 2))));
    });

    it('refuses a config taken from outside', async () => {
      swap('config', join(secret, '.git/config'));
      await refusedByEveryTool('repo', symlinked('config', join(secret, '.git/config')));
    });

    it('refuses a HEAD taken from outside', async () => {
      swap('HEAD', join(secret, '.git/HEAD'));
      await refusedByEveryTool('repo', symlinked('HEAD', join(secret, '.git/HEAD')));
    });
  });

  it('never looks above the root for a repository: a root inside an outside repository is no repository', async () => {
    const inner = join(secret, 'inner');
    mkdirSync(join(inner, 'sub'), { recursive: true });
    writeFileSync(join(inner, 'sub/a.txt'), 'a\n');
    const before = repoState(secret);
    const server = await startAttackServer({ root: inner, policy: { allow_write: true } });
    try {
      for (const repo of [undefined, '.', 'sub']) {
        const shown = repo === 'sub' ? 'sub' : '.';
        const text = `${shown} is not in a git repository: there is no .git in it or in the folders above it up to the root ${inner}`;
        for (const [name, args] of [...everyReadCall(repo), ['commit_changeset', { repo, branch: 'main', expected_head: secretHead, message: 'm', files: [{ path: 'x', content: 'x' }] }] as const]) {
          expect(await server.outcome(name, args), `${name} ${repo}`).toEqual(refused(text));
        }
      }
    } finally {
      await server.close();
    }
    expect(repoState(secret)).toEqual(before);
  });

  it('takes GIT_DIR-like repo arguments as folder names, never as git options or variables', async () => {
    const repo = initRepo(h.ws.path('repo'));
    commit(repo, 'inside', { 'a.txt': 'inside\n' });
    // A repo argument is a path: git never sees it, only the real path of a folder proven inside.
    for (const value of [`--git-dir=${secret}/.git`, `--work-tree=${secret}`, `GIT_DIR=${secret}/.git`, '$GIT_DIR', '-C', '-c core.fsmonitor=x']) {
      expect(await h.outcome('git_log', { repo: value }), value).toEqual(refused(`${root}/${value} does not exist`));
    }
    expect(await h.outcome('git_log', { repo: '~/repo' })).toEqual(refused(`"~" is not expanded: give a path relative to the root (${root}) or an absolute path inside it`));
    expect(await h.outcome('git_log', { repo: `repo\0${secret}` })).toEqual(refused('path contains a NUL byte; remove it'));
    // Its own .git is a repository too (read as a bare one), and it is inside.
    expect((await h.outcome('git_log', { repo: 'repo/.git' })).isError).toBe(false);
    expect(dirname(secret)).toBe(outside.root);
  });
});
