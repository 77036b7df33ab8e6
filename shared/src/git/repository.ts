import { isUtf8 } from 'node:buffer';
import { realpath, stat } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { ToolError } from '../errors.js';
import type { Roots } from '../paths/roots.js';
import { checkRevision } from './arguments.js';
import { gitEnvironment, HARDENED_GIT_OPTIONS } from './hardening.js';
import { findRepository, type RepositoryLayout } from './layout.js';
import { decodeGitName } from './names.js';
import { runGitProcess, subcommandOf, type GitProcessResult } from './process.js';
import type { TokenVerdict } from './tokens.js';

export interface GitRunLimits {
  /** Each git process is killed after this long. */
  readonly timeoutMs: number;
  /** Most stdout bytes read from one git process. */
  readonly maxOutputBytes: number;
}

export interface GitRunOptions {
  readonly signal?: AbortSignal;
  readonly stdin?: Uint8Array;
  /** More environment for this command only: a temporary index, an author. */
  readonly env?: Readonly<Record<string, string>>;
  /** Gets stdout as it arrives (see runGitProcess); `'stop'` ends git early without an error. */
  readonly onStdout?: (chunk: Buffer) => TokenVerdict;
  /**
   * The command may read files of the working tree: status, any diff (git reuses a checked-out
   * file in place of a blob when it can), blame. There, filter drivers named in .gitattributes
   * would run programs from the repository's config, so they are switched off for this command.
   */
  readonly mayReadWorkTree?: boolean;
  /** Exit codes besides 0 that are answers, not failures. */
  readonly okExitCodes?: readonly number[];
  /** A lower output cap for this command. */
  readonly maxOutputBytes?: number;
}

export interface RevisionRequest {
  /** The revision as the model wrote it. */
  readonly value: string;
  /** The argument it came in, for the error message. */
  readonly argument: string;
}

export interface HeadState {
  /** The checked-out branch (`main`), undefined when HEAD is detached. */
  readonly branch: string | undefined;
  /** The commit HEAD points at, undefined in a repository with no commits yet. */
  readonly oid: string | undefined;
}

/**
 * A revision as git gets it: peeled to a commit (`v1.0^{commit}`), so a tag resolves to its commit
 * and a tree or a blob is refused by git itself. `:/text` searches commit messages, where a suffix
 * would become part of the text; it names a commit anyway.
 */
export function commitRevision(value: string): string {
  return value.startsWith(':/') ? value : `${value}^{commit}`;
}

/** git follows include.path and includeIf.<condition>.path to this depth (config.c, MAX_INCLUDE_DEPTH). */
const MAX_INCLUDE_DEPTH = 10;
const INCLUDE_KEY = '^include(if\\..*)?\\.path$';

const FILTER_KEY = /^filter\.(.+)\.(clean|smudge|process|required)$/s;

function withoutNewline(bytes: Buffer): Buffer {
  return bytes.at(-1) === 0x0a ? bytes.subarray(0, -1) : bytes;
}

function firstLines(text: string, count = 4): string {
  return text.trim().split('\n').slice(0, count).join(' / ');
}

/**
 * One repository inside the roots, and the only way to run git on it: every command gets the
 * hardened options, an environment built from nothing, explicit `--git-dir` and `--work-tree`
 * (so `core.worktree` in a hostile config cannot point elsewhere), a deadline and an output cap.
 *
 * Ownership (`safe.directory`): git refuses to discover a repository owned by another user,
 * because its config could run programs. An explicit `--git-dir` is not discovery, so git runs;
 * the protection it stands for is given here instead, by the hardened options.
 */
export class GitRepository {
  private constructor(
    readonly layout: RepositoryLayout,
    /** How the repository is named to the model. */
    readonly shownAs: string,
    private readonly limits: GitRunLimits,
    private readonly roots: Roots,
  ) {}

  /** The include check, done once, before the first command (so arguments are refused before any git runs). */
  private includesConfined: Promise<void> | undefined;

  /** Opens the repository that holds `input` (default: the first root), refused unless every part lies inside the roots. */
  static async open(roots: Roots, input: string | undefined, limits: GitRunLimits): Promise<GitRepository> {
    const start = await roots.confine(input ?? '.', 'read');
    const layout = await findRepository(roots, start, roots.display(start));
    const top = layout.workTree ?? layout.gitDir;
    const shown = roots.display(top);
    return new GitRepository(layout, shown === '.' ? top : shown, limits, roots);
  }

  /**
   * include.path and includeIf.<condition>.path make git read another config file, and no
   * command-line option turns that off. Every target named by the repository's config (and by
   * the files it includes, to git's depth) must be a regular file inside the roots, or be missing
   * from a folder inside them; whatever the condition says, since a condition (onbranch:,
   * gitdir:, hasconfig:) can come true later. The targets are listed with git's own parser
   * (`--no-includes`, so the check itself follows none). Config inside the roots is untrusted
   * like the repository's own: the hardened options still win over it.
   */
  private async confineIncludes(roots: Roots, signal: AbortSignal | undefined): Promise<void> {
    const files = [join(this.layout.commonDir, 'config'), join(this.layout.gitDir, 'config.worktree')];
    const seen = new Set<string>();
    const visit = async (file: string, depth: number): Promise<void> => {
      if (depth > MAX_INCLUDE_DEPTH || seen.has(file)) return;
      seen.add(file);
      const listed = await this.runChecked(['config', '--file', file, '--no-includes', '--null', '--get-regexp', INCLUDE_KEY], { okExitCodes: [1], ...(signal ? { signal } : {}) });
      if (listed.truncated) throw new ToolError(`${this.shownAs}: ${file} is larger than limits.max_read_bytes, so the files it includes cannot all be checked; the repository is refused`, 'hostile_config');
      for (const record of listed.stdout.toString('utf8').split('\0')) {
        const newline = record.indexOf('\n');
        if (newline === -1) continue;
        const key = record.slice(0, newline);
        const target = await this.includeTarget(roots, file, key, record.slice(newline + 1));
        if (target !== undefined) await visit(target, depth + 1);
      }
    };
    for (const file of files) {
      const info = await stat(file).catch(() => undefined);
      if (info?.isFile()) await visit(await realpath(file), 0);
    }
  }

  /** The real path of an include target inside the roots (undefined when it does not exist); a refusal otherwise. */
  private async includeTarget(roots: Roots, from: string, key: string, value: string): Promise<string | undefined> {
    const refuse = (why: string) => new ToolError(`${this.shownAs}: ${key} in ${from} names ${JSON.stringify(value)}, ${why}; git would read it as configuration, so the repository is refused`, 'outside_roots');
    if (value.startsWith('~') || value.startsWith('%(prefix)')) throw refuse('a path from a home folder or git\'s install prefix, outside the roots');
    // As git: a relative target from the including file's folder, joined as text (the kernel resolves `..` after symlinks).
    const path = value.startsWith('/') ? value : `${dirname(from)}/${value}`;
    const real = await realpath(path).catch(() => undefined);
    if (real === undefined) {
      // Missing: git skips it, but it could be created. The folder it would be created in must lie inside the roots.
      for (let folder = dirname(path); ; folder = dirname(folder)) {
        const parent = await realpath(folder).catch(() => undefined);
        if (parent !== undefined) {
          if (!roots.rootOf(parent)) throw refuse(`which would be created outside the allowed roots (in ${parent})`);
          return undefined;
        }
        if (dirname(folder) === folder) return undefined;
      }
    }
    if (!roots.rootOf(real)) throw refuse(`which is ${real}, outside the allowed roots (${roots.real.join(', ')})`);
    if (!(await stat(real)).isFile()) throw refuse(`which is ${real}, not a regular file`);
    return real;
  }

  get bare(): boolean {
    return this.layout.workTree === undefined;
  }

  /** The working tree's top folder; a clear refusal for a bare repository. */
  requireWorkTree(what: string): string {
    if (this.layout.workTree === undefined) throw new ToolError(`${this.shownAs} is a bare repository: it has no working tree, so ${what} does not apply`, 'bare_repository');
    return this.layout.workTree;
  }

  /** Runs `git <args>`; a non-zero exit (not listed in okExitCodes) is a ToolError with git's message. */
  async run(args: readonly string[], options: GitRunOptions = {}): Promise<GitProcessResult> {
    await (this.includesConfined ??= this.confineIncludes(this.roots, options.signal));
    return this.runChecked(args, options);
  }

  private async runChecked(args: readonly string[], options: GitRunOptions): Promise<GitProcessResult> {
    const extraEnv = { ...(options.mayReadWorkTree && !this.bare ? await this.filterOverrides(options.signal) : {}), ...options.env };
    const result = await runGitProcess({
      cwd: this.layout.workTree ?? this.layout.gitDir,
      argv: [...HARDENED_GIT_OPTIONS, `--git-dir=${this.layout.gitDir}`, ...(this.layout.workTree ? [`--work-tree=${this.layout.workTree}`] : []), ...args],
      env: gitEnvironment(extraEnv),
      timeoutMs: this.limits.timeoutMs,
      maxOutputBytes: options.maxOutputBytes ?? this.limits.maxOutputBytes,
      ...(options.stdin ? { stdin: options.stdin } : {}),
      ...(options.signal ? { signal: options.signal } : {}),
      ...(options.onStdout ? { onStdout: options.onStdout } : {}),
    });
    const ended = result.stopped || result.truncated;
    if (!ended && result.exitCode !== 0 && !(result.exitCode !== null && options.okExitCodes?.includes(result.exitCode))) {
      throw new ToolError(`git ${subcommandOf(args)} failed in ${this.shownAs}: ${firstLines(result.stderr) || `exit code ${result.exitCode}`}`, 'git_failed');
    }
    return result;
  }

  /**
   * Filter drivers (`filter.<name>.clean|smudge|process`) run programs when git reads working-tree
   * files. The repository's config may name any driver, so the names are read from it and each is
   * emptied for this command. They go in GIT_CONFIG_KEY_n / GIT_CONFIG_VALUE_n rather than `-c`,
   * because a driver name may hold `=`, which `-c` would split on.
   */
  private async filterOverrides(signal: AbortSignal | undefined): Promise<Record<string, string>> {
    const listed = await this.runChecked(['config', '--list', '--name-only', '-z'], { okExitCodes: [1], ...(signal ? { signal } : {}) });
    if (listed.truncated) {
      // A driver named after the cut would be missed and would run.
      throw new ToolError(`${this.shownAs}: its config is larger than limits.max_read_bytes, so its filter drivers cannot all be found and switched off; the working tree is not read`, 'hostile_config');
    }
    const drivers = new Set<string>();
    for (const name of listed.stdout.toString('latin1').split('\0')) {
      const match = FILTER_KEY.exec(name);
      if (!match) continue;
      const driver = Buffer.from(match[1]!, 'latin1');
      if (!isUtf8(driver)) throw new ToolError(`${this.shownAs}: its config defines a filter driver whose name is not UTF-8, which cannot be switched off; the working tree is not read`, 'hostile_config');
      drivers.add(driver.toString('utf8'));
    }
    const env: Record<string, string> = {};
    let count = 0;
    for (const driver of drivers) {
      for (const [key, value] of [['clean', ''], ['smudge', ''], ['process', ''], ['required', 'false']] as const) {
        env[`GIT_CONFIG_KEY_${count}`] = `filter.${driver}.${key}`;
        env[`GIT_CONFIG_VALUE_${count}`] = value;
        count++;
      }
    }
    if (count > 0) env['GIT_CONFIG_COUNT'] = String(count);
    return env;
  }

  /**
   * Resolves revisions to commit ids in one git process, reading them from stdin so none is ever
   * an argument; the ids are what later commands get. A missing one is an error that names it.
   */
  async resolveCommits(requests: readonly RevisionRequest[], signal?: AbortSignal): Promise<string[]> {
    if (requests.length === 0) return [];
    for (const request of requests) checkRevision(request.value, request.argument);
    const lines = requests.map((request) => commitRevision(request.value));
    const result = await this.run(['cat-file', '--batch-check=%(objectname) %(objecttype)'], { stdin: Buffer.from(`${lines.join('\n')}\n`), ...(signal ? { signal } : {}) });
    const answers = result.stdout.toString('utf8').split('\n');
    const oids: string[] = [];
    for (const [i, request] of requests.entries()) {
      const match = /^([0-9a-f]{40,64}) commit$/.exec(answers[i] ?? '');
      if (match) {
        oids.push(match[1]!);
        continue;
      }
      if (/^HEAD([~^@].*)?$/.test(request.value) && (await this.headState(signal)).oid === undefined) {
        throw new ToolError(`${request.argument} ${JSON.stringify(request.value)}: ${this.shownAs} has no commits yet`, 'no_commits');
      }
      const why = (answers[i] ?? '').endsWith(' ambiguous') ? 'is ambiguous (a short hash that several objects start with?)' : 'does not exist (or is not a commit)';
      throw new ToolError(`${request.argument} ${JSON.stringify(request.value)} ${why} in ${this.shownAs}`, 'unknown_revision');
    }
    return oids;
  }

  /**
   * Runs work that hands revisions straight to the git command doing the job (see
   * `commitRevision`), which saves a process per call. When git fails, each revision is resolved
   * in turn, so a missing one gets the same clear error that names it; otherwise git's own error
   * stands.
   */
  async namingMissingRevisions<T>(requests: readonly RevisionRequest[], work: () => Promise<T>, signal?: AbortSignal): Promise<T> {
    for (const request of requests) checkRevision(request.value, request.argument);
    try {
      return await work();
    } catch (error) {
      if (error instanceof ToolError && error.code === 'git_failed') await this.resolveCommits(requests, signal);
      throw error;
    }
  }

  async resolveCommit(value: string, argument: string, signal?: AbortSignal): Promise<string> {
    return (await this.resolveCommits([{ value, argument }], signal))[0]!;
  }

  /** The checked-out branch and the commit it is at (neither exists before the first commit). */
  async headState(signal?: AbortSignal): Promise<HeadState> {
    const options = { okExitCodes: [1, 128], ...(signal ? { signal } : {}) };
    const [symbolic, verified] = await Promise.all([this.run(['symbolic-ref', '-q', 'HEAD'], options), this.run(['rev-parse', '-q', '--verify', 'HEAD^{commit}'], options)]);
    const ref = symbolic.exitCode === 0 ? decodeGitName(withoutNewline(symbolic.stdout)) : undefined;
    const oid = verified.exitCode === 0 ? withoutNewline(verified.stdout).toString('utf8') : undefined;
    return { branch: ref?.replace(/^refs\/heads\//, ''), oid };
  }
}
