import { execFileSync } from 'node:child_process';
import { appendFileSync, chmodSync, chownSync, cpSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { tempWorkspace, type TempWorkspace } from '@bulkhead/core/testing';
import { evilProgram, markers, REAL_GIT, startAttackServer, type AttackServer } from './attack-kit.js';
import { commit, git, initRepo } from './helpers.js';

/**
 * A hostile repository: its .git/config (directly, through include.path or includeIf, or in
 * config.worktree), its .gitattributes and .git/info/attributes, its hooks and its submodules name
 * programs that write a marker file. One attack per test: plain git first proves the attack is
 * live (the marker appears), then every tool runs against the repository, commit_changeset
 * included, and the marker must never appear.
 */

interface Vector {
  readonly name: string;
  /** Makes `repo` hostile; `evil(name)` gives a program that writes `name` to the marker. */
  readonly setup: (repo: string, evil: (name: string, then?: 'cat' | 'fail') => string, outside: TempWorkspace) => void;
  /** Plain git commands that run the program (some fail after it ran; the marker is what counts). */
  readonly proof: readonly (readonly string[])[];
  /** The proof needs a terminal (a pager runs only on one). */
  readonly proofOnTerminal?: boolean;
  readonly policy?: Record<string, unknown>;
  /** The exact refusal of the tools that cannot work safely on this repository, when there is one. */
  readonly refusal?: { readonly tools: readonly string[]; readonly text: string | RegExp };
}

const ALL_TOOLS = ['git_status', 'git_log', 'git_diff', 'git_show', 'git_show_file', 'git_blame', 'git_refs', 'commit_changeset'];

const set = (repo: string, key: string, value: string) => git(repo, ['config', key, value]);
const attributes = (repo: string, text: string) => appendFileSync(join(repo, '.git/info/attributes'), text);

const VECTORS: Vector[] = [
  {
    name: 'core.fsmonitor',
    setup: (repo, evil) => set(repo, 'core.fsmonitor', evil('fsmonitor')),
    proof: [['status']],
  },
  {
    name: 'core.fsmonitor through include.path (a file outside the roots: the repository is refused)',
    setup: (repo, evil, outside) => {
      writeFileSync(outside.path('included.cfg'), `[core]\n\tfsmonitor = ${evil('include')}\n`);
      set(repo, 'include.path', outside.path('included.cfg'));
    },
    proof: [['status']],
    refusal: { tools: ALL_TOOLS, text: /^repo: include\.path in \S+\/\.git\/config names "\S+included\.cfg", which is \S+, outside the allowed roots \(.*\); git would read it as configuration, so the repository is refused$/ },
  },
  {
    name: 'core.fsmonitor through includeIf gitdir (a file outside the roots: the repository is refused)',
    setup: (repo, evil, outside) => {
      writeFileSync(outside.path('included.cfg'), `[core]\n\tfsmonitor = ${evil('includeif')}\n`);
      set(repo, 'includeIf.gitdir:/**.path', outside.path('included.cfg'));
    },
    proof: [['status']],
    refusal: { tools: ALL_TOOLS, text: /^repo: includeif\.gitdir:\/\*\*\.path in \S+ names "\S+included\.cfg", which is \S+, outside the allowed roots/ },
  },
  {
    name: 'core.fsmonitor through include.path and includeIf onbranch of files inside the roots (read, and the overrides still win)',
    setup: (repo, evil) => {
      writeFileSync(join(repo, '.git/included.cfg'), `[core]\n\tfsmonitor = ${evil('include-inside')}\n[include]\n\tpath = nested.cfg\n`);
      writeFileSync(join(repo, '.git/nested.cfg'), `[diff]\n\texternal = ${evil('include-nested')}\n`);
      set(repo, 'include.path', 'included.cfg');
      set(repo, 'includeIf.onbranch:main.path', join(repo, '.git/nested.cfg'));
    },
    proof: [['status'], ['diff']],
  },
  {
    name: 'core.fsmonitor and core.hooksPath in config.worktree',
    setup: (repo, evil) => {
      set(repo, 'core.repositoryformatversion', '1');
      set(repo, 'extensions.worktreeConfig', 'true');
      git(repo, ['config', '--worktree', 'core.fsmonitor', evil('worktree-config')]);
      const hooks = join(repo, '.git/wt-hooks');
      mkdirSync(hooks);
      cpSync(evil('worktree-hook'), join(hooks, 'reference-transaction'));
      git(repo, ['config', '--worktree', 'core.hooksPath', hooks]);
    },
    proof: [['status']],
  },
  {
    name: 'diff.external',
    setup: (repo, evil) => set(repo, 'diff.external', evil('external')),
    proof: [['diff']],
  },
  {
    name: 'a diff driver command assigned in .gitattributes',
    setup: (repo, evil) => {
      writeFileSync(join(repo, '.gitattributes'), '*.txt diff=evil\n');
      set(repo, 'diff.evil.command', evil('diff-command'));
    },
    proof: [['diff']],
  },
  {
    name: 'a textconv driver assigned in .gitattributes',
    setup: (repo, evil) => {
      writeFileSync(join(repo, '.gitattributes'), '*.txt diff=evil\n');
      set(repo, 'diff.evil.textconv', evil('textconv'));
    },
    proof: [['log', '-p', '-1'], ['blame', 'f.txt']],
  },
  {
    name: 'a textconv driver assigned in .git/info/attributes',
    setup: (repo, evil) => {
      attributes(repo, '* diff=evil\n');
      set(repo, 'diff.evil.textconv', evil('info-textconv'));
      set(repo, 'diff.evil.cachetextconv', 'true');
    },
    proof: [['show', 'HEAD']],
  },
  {
    name: 'clean and smudge filters assigned in .gitattributes',
    setup: (repo, evil) => {
      writeFileSync(join(repo, '.gitattributes'), '*.txt filter=evil\n');
      set(repo, 'filter.evil.clean', evil('clean'));
      set(repo, 'filter.evil.smudge', evil('smudge'));
      set(repo, 'filter.evil.required', 'true');
    },
    proof: [['status'], ['diff']],
  },
  {
    name: 'a filter process assigned in .git/info/attributes',
    setup: (repo, evil) => {
      attributes(repo, '* filter=evil\n');
      set(repo, 'filter.evil.process', evil('process'));
    },
    proof: [['status'], ['diff']],
  },
  {
    name: 'a filter whose name holds "=", "." and spaces (-c could not name it)',
    setup: (repo, evil) => {
      attributes(repo, '* filter=a=b.c\\ d\n');
      writeFileSync(join(repo, '.git/info/attributes'), '*.txt filter=a=b.c\n');
      appendFileSync(join(repo, '.git/config'), `[filter "a=b.c"]\n\tclean = ${evil('odd-filter')}\n\tsmudge = ${evil('odd-filter')}\n`);
    },
    proof: [['status'], ['diff']],
  },
  {
    name: 'a filter defined after more config than the server reads of a process (max_read_bytes)',
    policy: { limits: { max_read_bytes: 1024 * 1024 } },
    // Every tool that may read the working tree (where filters run) refuses; the others work.
    refusal: {
      tools: ['git_status', 'git_diff', 'git_show', 'git_blame'],
      text: 'repo: its config is larger than limits.max_read_bytes, so its filter drivers cannot all be found and switched off; the working tree is not read',
    },
    setup: (repo, evil) => {
      // 1.2 MB of key names first: a listing of the config cut at 1 MiB would miss the filter.
      let junk = '[junk]\n';
      for (let i = 0; i < 1200; i++) junk += `\tkey${i}${'x'.repeat(1000)} = 1\n`;
      appendFileSync(join(repo, '.git/config'), junk);
      writeFileSync(join(repo, '.gitattributes'), '*.txt filter=late\n');
      appendFileSync(join(repo, '.git/config'), `[filter "late"]\n\tclean = ${evil('late-filter')}\n\tsmudge = ${evil('late-filter')}\n`);
    },
    proof: [['status']],
  },
  {
    name: 'core.pager and pager.<command>',
    setup: (repo, evil) => {
      set(repo, 'core.pager', evil('pager'));
      for (const command of ['log', 'diff', 'show', 'blame', 'status', 'cat-file', 'for-each-ref']) set(repo, `pager.${command}`, evil('pager'));
    },
    proof: [['log', '-1']],
    proofOnTerminal: true,
  },
  {
    name: 'hooks in .git/hooks and in core.hooksPath (reference-transaction, post-index-change, commit hooks)',
    setup: (repo, evil) => {
      const hooks = join(repo, '.git/evil-hooks');
      mkdirSync(hooks);
      for (const hook of ['reference-transaction', 'post-index-change', 'pre-commit', 'commit-msg', 'post-commit', 'post-checkout', 'post-rewrite', 'pre-auto-gc', 'fsmonitor-watchman']) {
        cpSync(evil(`hook-${hook}`), join(repo, '.git/hooks', hook));
        cpSync(evil(`hooks-path-${hook}`), join(hooks, hook));
      }
      set(repo, 'core.hooksPath', hooks);
    },
    proof: [['update-ref', 'refs/heads/proof', 'HEAD']],
  },
  {
    name: 'gpg.program with log.showSignature, commit.gpgSign and a signed commit',
    setup: (repo, evil) => {
      const tree = git(repo, ['rev-parse', 'HEAD^{tree}']).trim();
      const parent = git(repo, ['rev-parse', 'HEAD']).trim();
      const signed = `tree ${tree}\nparent ${parent}\nauthor A <a@x> 1700000000 +0000\ncommitter A <a@x> 1700000000 +0000\ngpgsig -----BEGIN PGP SIGNATURE-----\n \n iQEzBAABCAAdFiEE\n -----END PGP SIGNATURE-----\n\nsigned\n`;
      git(repo, ['update-ref', 'refs/heads/signed', git(repo, ['hash-object', '-t', 'commit', '-w', '--stdin'], { input: signed }).trim()]);
      for (const key of ['gpg.program', 'gpg.openpgp.program', 'gpg.ssh.program', 'gpg.x509.program']) set(repo, key, evil('gpg'));
      set(repo, 'log.showSignature', 'true');
      set(repo, 'commit.gpgSign', 'true');
      set(repo, 'tag.gpgSign', 'true');
    },
    proof: [['log', '-1', 'signed']],
  },
  {
    name: 'a promisor remote whose upload-pack is a program (lazy fetch of a missing object), with core.sshCommand',
    setup: (repo, evil, outside) => {
      initRepo(outside.path('remote'));
      set(repo, 'core.repositoryformatversion', '1');
      set(repo, 'extensions.partialClone', 'origin');
      set(repo, 'remote.origin.url', outside.path('remote'));
      set(repo, 'remote.origin.promisor', 'true');
      set(repo, 'remote.origin.uploadpack', evil('upload-pack', 'fail'));
      set(repo, 'protocol.allow', 'always');
      set(repo, 'protocol.file.allow', 'always');
      set(repo, 'core.sshCommand', evil('ssh', 'fail'));
      set(repo, 'remote.ssh.url', 'ssh://example.invalid/x');
      set(repo, 'remote.ssh.promisor', 'true');
      // The committed f.txt is gone from the object store: reading it would fetch it.
      const blob = git(repo, ['rev-parse', 'HEAD:f.txt']).trim();
      execFileSync('rm', [join(repo, '.git/objects', blob.slice(0, 2), blob.slice(2))]);
    },
    proof: [['cat-file', '-p', 'HEAD:f.txt']],
  },
  {
    name: 'an ext:: remote (a shell command as transport) for a promisor',
    setup: (repo, evil) => {
      set(repo, 'core.repositoryformatversion', '1');
      set(repo, 'extensions.partialClone', 'origin');
      set(repo, 'remote.origin.url', `ext::${evil('ext-transport', 'fail')} %S`);
      set(repo, 'remote.origin.promisor', 'true');
      set(repo, 'protocol.allow', 'always');
      set(repo, 'protocol.ext.allow', 'always');
      const blob = git(repo, ['rev-parse', 'HEAD:f.txt']).trim();
      execFileSync('rm', [join(repo, '.git/objects', blob.slice(0, 2), blob.slice(2))]);
    },
    proof: [['cat-file', '-p', 'HEAD:f.txt']],
  },
  {
    name: 'uploadpack.packObjectsHook, core.alternateRefsCommand, credential.helper, core.askPass, core.editor',
    setup: (repo, evil) => {
      set(repo, 'uploadpack.packObjectsHook', evil('pack-objects-hook'));
      set(repo, 'core.alternateRefsCommand', evil('alternate-refs'));
      set(repo, 'credential.helper', `!${evil('credential')}`);
      set(repo, 'core.askPass', evil('askpass'));
      set(repo, 'core.editor', evil('editor'));
      set(repo, 'sequence.editor', evil('editor'));
      set(repo, 'safe.directory', '*');
    },
    // No command the tools run reads these; the proof is that git accepts them as configured.
    proof: [['-c', 'alias.x=!true', 'config', 'core.alternateRefsCommand']],
  },
  {
    name: 'a submodule whose own .git/config has core.fsmonitor (status or diff recursing into it)',
    setup: (repo, evil) => {
      const sub = initRepo(join(repo, 'sub'));
      commit(sub, 'sub one', { 's.txt': 's\n' });
      git(repo, ['-c', 'protocol.file.allow=always', 'submodule', 'add', '-q', './sub', 'sub']);
      git(repo, ['commit', '-qm', 'add sub']);
      set(sub, 'core.fsmonitor', evil('submodule-fsmonitor'));
      writeFileSync(join(sub, 's.txt'), 'S\n');
      set(repo, 'diff.ignoreSubmodules', 'none');
      set(repo, 'status.submoduleSummary', 'true');
      set(repo, 'submodule.recurse', 'true');
    },
    proof: [['status']],
  },
];

/** The working state every vector starts from: two commits, a same-size edit, a staged edit, an untracked file. */
function baseRepo(repo: string): void {
  initRepo(repo);
  commit(repo, 'one', { 'f.txt': 'hello\n', 'g.txt': 'one\n' });
  commit(repo, 'two', { 'f.txt': 'hallo\n', 'g.txt': 'one\ntwo\n' });
}

function dirty(repo: string): void {
  writeFileSync(join(repo, 'f.txt'), 'HALLO\n');
  writeFileSync(join(repo, 'g.txt'), 'one\ntwo\nthree\n');
  // Staged with plumbing that reads no attributes, so none of the programs runs here.
  const safe = ['-c', 'core.fsmonitor=false', '-c', 'core.hooksPath=/dev/null'];
  const blob = git(repo, [...safe, 'hash-object', '-w', '--no-filters', 'g.txt']).trim();
  git(repo, [...safe, 'update-index', '--cacheinfo', `100644,${blob},g.txt`]);
  writeFileSync(join(repo, 'new.txt'), 'untracked\n');
}

describe('a hostile repository runs no program through any tool', () => {
  let h: AttackServer | undefined;
  let outside: TempWorkspace;
  let marker: string;
  beforeEach(() => {
    outside = tempWorkspace({}, 'bulkhead-git-hostile-');
    marker = outside.path('MARKER');
  });
  afterEach(async () => {
    await h?.close();
    h = undefined;
    outside.cleanup();
  });

  for (const vector of VECTORS) {
    it(vector.name, async () => {
      h = await startAttackServer({ policy: { allow_write: true, ...vector.policy } });
      const repo = h.ws.path('repo');
      baseRepo(repo);
      const made = new Set<string>();
      const evil = (name: string, then: 'cat' | 'fail' = 'cat') => {
        made.add(name);
        return evilProgram(outside.path('bin'), name, marker, then);
      };
      vector.setup(repo, evil, outside);
      dirty(repo);

      // Live: plain git runs it.
      for (const args of vector.proof) {
        const [command, argv] = vector.proofOnTerminal ? ['script', ['-qec', [REAL_GIT, ...args].join(' '), '/dev/null']] : [REAL_GIT, args];
        try {
          execFileSync(command, argv, { cwd: repo, env: { PATH: process.env['PATH'] ?? '', HOME: outside.root, GIT_CONFIG_NOSYSTEM: '1', GIT_CONFIG_GLOBAL: '/dev/null', TERM: 'dumb' }, stdio: 'ignore', timeout: 10_000 });
        } catch {
          // ran, then failed
        }
      }
      const proven = markers(marker);
      if (!vector.name.startsWith('uploadpack.')) expect(proven.length, `plain git ran none of ${[...made].join(', ')}`).toBeGreaterThan(0);
      writeFileSync(marker, '');

      // Every tool, each in a way that reads what the attack targets.
      const head = git(repo, ['rev-parse', 'HEAD']).trim();
      const calls: [string, Record<string, unknown>][] = [
        ['git_status', {}],
        ['git_log', { path: 'f.txt', grep: 'o' }],
        ['git_diff', {}],
        ['git_diff', { staged: true }],
        ['git_diff', { from: 'HEAD~1' }],
        ['git_diff', { from: 'HEAD~1', to: 'HEAD' }],
        ['git_show', { rev: 'HEAD' }],
        ['git_show_file', { rev: 'HEAD', path: 'g.txt' }],
        ['git_blame', { path: 'g.txt' }],
        ['git_refs', { kind: 'all' }],
        ['commit_changeset', { branch: 'main', expected_head: head, message: 'by the tool', files: [{ path: 'g.txt', content: 'changed\n' }, { path: 'f.txt', delete: true }] }],
        ['commit_changeset', { branch: 'created', create: true, expected_head: head, message: 'new branch', files: [{ path: 'h.txt', content: 'h\n' }] }],
      ];
      const failures: string[] = [];
      for (const [name, args] of calls) {
        const result = await h.call(name, { repo: 'repo', ...args });
        if (result.isError) failures.push(`${name} ${JSON.stringify(args)}: ${result.text}`);
        expect(markers(marker), `${name} ${JSON.stringify(args)}`).toEqual([]);
      }
      // A missing object (the promisor vectors) is an error, never a fetch; otherwise everything works.
      if (vector.name.includes('promisor')) expect(failures.length).toBeGreaterThan(0);
      else if (vector.refusal) {
        const refusal = vector.refusal;
        const expected = calls.filter(([name]) => refusal.tools.includes(name)).map(([name, args]) => `${name} ${JSON.stringify(args)}: `);
        if (typeof refusal.text === 'string') expect(failures).toEqual(expected.map((start) => `${start}${refusal.text}`));
        else {
          expect(failures.map((failure, i) => failure.slice(0, expected[i]?.length))).toEqual(expected);
          for (const [i, failure] of failures.entries()) expect(failure.slice(expected[i]!.length)).toMatch(refusal.text);
        }
      } else expect(failures).toEqual([]);
      expect(markers(marker)).toEqual([]);
    });
  }

  it('a filter driver whose name is not UTF-8 (cannot be switched off): reads of the working tree are refused, the rest works', async () => {
    h = await startAttackServer({ policy: { allow_write: true } });
    const repo = h.ws.path('repo');
    baseRepo(repo);
    const program = evilProgram(outside.path('bin'), 'latin1-filter', marker);
    appendFileSync(join(repo, '.git/config'), Buffer.concat([Buffer.from('[filter "caf'), Buffer.from([0xe9]), Buffer.from(`"]\n\tclean = ${program}\n\tsmudge = ${program}\n`)]));
    writeFileSync(join(repo, '.git/info/attributes'), Buffer.concat([Buffer.from('*.txt filter=caf'), Buffer.from([0xe9]), Buffer.from('\n')]));
    dirty(repo);
    writeFileSync(marker, '');
    const refusal = `repo: its config defines a filter driver whose name is not UTF-8, which cannot be switched off; the working tree is not read`;
    expect(await h.outcome('git_status', { repo: 'repo' })).toEqual({ isError: true, text: refusal });
    expect(await h.outcome('git_diff', { repo: 'repo' })).toEqual({ isError: true, text: refusal });
    expect(markers(marker)).toEqual([]);
  });

  it('a bare repository whose config names a working tree outside the roots (core.bare false, core.worktree), with a filter and fsmonitor', async () => {
    h = await startAttackServer({ policy: { allow_write: true } });
    const source = initRepo(h.ws.path('source'));
    commit(source, 'one', { 'a.txt': 'one\n' });
    commit(source, 'two', { 'a.txt': 'two\n' });
    git(h.ws.root, ['clone', '-q', '--bare', 'source', 'fake.git']);
    const fake = h.ws.path('fake.git');
    const program = evilProgram(outside.path('bin'), 'worktree-filter', marker);
    // A checkout outside the roots, recorded in fake.git's own index, stat-clean.
    const worktree = outside.mkdir('worktree');
    const root = h.ws.root;
    const plain = (args: string[]) => git(root, ['--git-dir=fake.git', `--work-tree=${worktree}`, ...args]);
    plain(['config', 'core.bare', 'false']);
    plain(['config', 'core.worktree', worktree]);
    plain(['checkout', '-q', '-f', 'main']);
    writeFileSync(join(worktree, 'outside-secret-name.txt'), 'secret\n');
    plain(['config', 'filter.evil.clean', program]);
    plain(['config', 'filter.evil.smudge', program]);
    plain(['config', 'core.fsmonitor', program]);
    writeFileSync(join(fake, 'info/attributes'), '* filter=evil\n');
    // Live: plain git in that repository runs the programs.
    execFileSync(REAL_GIT, ['--git-dir', fake, 'status'], { env: { PATH: process.env['PATH'] ?? '', HOME: outside.root, GIT_CONFIG_NOSYSTEM: '1', GIT_CONFIG_GLOBAL: '/dev/null' }, stdio: 'ignore' });
    expect(markers(marker)).toEqual(['worktree-filter']);
    writeFileSync(marker, '');

    const head = git(fake, ['rev-parse', 'HEAD']).trim();
    const bare = (what: string) => ({ isError: true, text: `fake.git is a bare repository: it has no working tree, so ${what} does not apply` });
    expect(await h.outcome('git_status', { repo: 'fake.git' })).toEqual(bare('git_status'));
    expect(await h.outcome('git_diff', { repo: 'fake.git' })).toEqual(bare('a diff against the working tree'));
    expect(await h.outcome('git_diff', { repo: 'fake.git', staged: true })).toEqual(bare('a diff of the staged changes (the index)'));
    for (const [name, args] of [
      ['git_log', {}],
      ['git_diff', { from: 'HEAD~1', to: 'HEAD' }],
      ['git_show', { rev: 'HEAD' }],
      ['git_show', { rev: 'HEAD~1' }],
      ['git_show_file', { rev: 'HEAD', path: 'a.txt' }],
      ['git_blame', { path: 'a.txt' }],
      ['git_refs', { kind: 'all' }],
      ['commit_changeset', { branch: 'main', expected_head: head, message: 'm', files: [{ path: 'a.txt', content: 'three\n' }] }],
    ] as const) {
      const result = await h.call(name, { repo: 'fake.git', ...args });
      expect(result.isError, `${name}: ${result.text}`).toBe(false);
      expect(result.text).not.toContain('outside-secret-name');
      expect(markers(marker), name).toEqual([]);
    }
    expect(readFileSync(join(worktree, 'a.txt'), 'utf8')).toBe('two\n');
  });

  it('a repository owned by another user (git would refuse to discover it) is read with the same protections', async () => {
    if (process.getuid?.() !== 0) return;
    h = await startAttackServer({ policy: { allow_write: true } });
    const repo = h.ws.path('repo');
    baseRepo(repo);
    set(repo, 'core.fsmonitor', evilProgram(outside.path('bin'), 'fsmonitor', marker));
    set(repo, 'safe.directory', '*');
    dirty(repo);
    const own = (path: string) => {
      chownSync(path, 65534, 65534);
      for (const entry of execFileSync('find', [path, '-mindepth', '1'], { encoding: 'utf8' }).split('\n').filter(Boolean)) chownSync(entry, 65534, 65534);
    };
    own(repo);
    chmodSync(repo, 0o755);
    const plain = (() => {
      try {
        return execFileSync(REAL_GIT, ['status'], { cwd: repo, env: { PATH: process.env['PATH'] ?? '', HOME: outside.root, GIT_CONFIG_NOSYSTEM: '1', GIT_CONFIG_GLOBAL: '/dev/null' }, encoding: 'utf8', stdio: 'pipe' });
      } catch (error) {
        return String((error as { stderr?: string }).stderr);
      }
    })();
    expect(plain).toContain('dubious ownership');
    for (const [name, args] of [
      ['git_status', {}],
      ['git_diff', {}],
      ['git_log', {}],
    ] as const) {
      const result = await h.call(name, { repo: 'repo', ...args });
      expect(result.isError, result.text).toBe(false);
    }
    expect(markers(marker)).toEqual([]);
    expect(readFileSync(join(repo, 'f.txt'), 'utf8')).toBe('HALLO\n');
  });
});
