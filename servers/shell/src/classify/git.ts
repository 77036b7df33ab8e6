import { scanOptions, type OptionRules } from './options.js';
import type { Place } from './paths.js';
import { high, type Verdict, type Word } from './types.js';

/**
 * Subcommands that read refs, the index and the working tree but no object, with the runner's
 * GIT_CONFIG_COUNT turning core.fsmonitor off: nothing a repository's configuration names runs.
 * Reading an object may: in a partial clone (extensions.partialClone) a missing object is fetched
 * from the promisor remote, through its `ext::` command or core.sshCommand.
 */
const READ_ONLY = new Set(['version', 'count-objects', 'check-ignore', 'check-attr', 'ls-files', 'rev-parse', 'grep']);
/**
 * Reading subcommands that run programs a hostile repository's .git/config and .gitattributes name,
 * which no -c or GIT_CONFIG_COUNT override can switch off for every driver name: textconv and
 * `diff.<driver>.command` (diff, log -p, show, blame), clean and smudge filters (status and diff
 * hash a changed file through `filter.<driver>.clean`), diff.external, gpg.program (log and show
 * under log.showSignature), and the lazy fetch of a missing object in a partial clone (every
 * subcommand that reads objects). Medium: they run repository code, like a build. The git server's
 * tools read the same with every such program off.
 */
const RUNS_REPOSITORY_PROGRAMS = new Set([
  'status', 'log', 'diff', 'show', 'blame', 'annotate', 'whatchanged', 'diff-tree', 'diff-files', 'diff-index', 'shortlog', 'rev-list',
  'ls-tree', 'cat-file', 'describe', 'show-ref', 'for-each-ref', 'merge-base', 'name-rev',
]);
/** rev-parse reads an object for `HEAD~1`, `HEAD^{tree}`, `HEAD:path`, `@{u}`, `A...B`; a plain ref name it only resolves. */
const REVISION_SYNTAX = /[~^:@{}]|\.\./;
/** git grep options whose value is the next word. */
const GREP_VALUES = new Set(['-e', '-f', '-A', '-B', '-C', '-m', '--max-count', '--max-depth', '--threads', '--context', '--after-context', '--before-context']);

/** Subcommands that only change the repository inside the roots (hooks may run: the human is asked). */
const LOCAL_WRITES = new Set([
  'add', 'commit', 'checkout', 'switch', 'restore', 'reset', 'rm', 'mv', 'merge', 'cherry-pick', 'revert', 'apply', 'am',
  'init', 'clean', 'gc', 'format-patch', 'stash', 'branch', 'tag',
]);
const NETWORK = new Set(['push', 'pull', 'fetch', 'clone', 'ls-remote', 'submodule', 'send-email', 'archive', 'request-pull']);
const HARMLESS_GLOBALS = new Set([
  '--no-pager', '-P', '--no-optional-locks', '--literal-pathspecs', '--glob-pathspecs', '--noglob-pathspecs',
  '--icase-pathspecs', '--no-replace-objects',
]);

/** Options of reading subcommands that write a file, run a program or open a pager program. */
const READ_RULES: OptionRules = {
  forbiddenLong: ['--output', '--ext-diff', '--textconv', '--open-files-in-pager', '--exec', '--upload-pack'],
  forbiddenShort: 'O',
  abbreviated: true,
  harmless: ['--text'],
};
const REBASE_RULES: OptionRules = { forbiddenShort: 'xi', forbiddenLong: ['--exec', '--interactive'], abbreviated: true };
const BRANCH_LISTING = new Set(['-a', '--all', '-r', '--remotes', '-v', '-vv', '--verbose', '--show-current', '--list', '-l', '--no-color']);
const TAG_WRITES = new Set(['-v', '--verify', '-d', '--delete', '-a', '--annotate', '-s', '--sign', '-u', '-f', '--force', '-m', '-F']);
const CONFIG_READS = new Set(['--get', '--get-all', '--get-regexp', '--list', '-l', 'get', 'list']);
const CONFIG_SCOPES = new Set(['--global', '--local', '--system', '--show-origin', '--show-scope', '--name-only', '-z', '--null']);

/** Global options whose value may be the next word (`git -c x=y push`, `git --git-dir .git push`). */
const GLOBALS_WITH_VALUE = new Set(['-c', '-C', '--git-dir', '--work-tree', '--namespace', '--config-env', '--super-prefix', '--attr-source']);

/** Judges `git ARGS`; `place` locates a directory given to -C. */
export function gitVerdict(args: readonly Word[], argumentsFromInput: boolean, place: (word: Word) => Place): Verdict {
  let problem: Verdict | undefined;
  let index = 0;
  for (; index < args.length; index++) {
    const word = args[index] as Word;
    if (word.kind !== 'static') return high(`git: \`${word.text}\` may be an option or a subcommand`);
    const text = word.text;
    if (!text.startsWith('-')) break;
    if (text === '--version') return { tier: 'low', readOnly: true, reason: 'git --version only reads' };
    if (text === '-C') {
      const directory = args[++index];
      if (directory === undefined) return high('git -C without a directory');
      const where = place(directory);
      if (where.where !== 'inside' && where.where !== 'root') problem ??= high(`git -C ${directory.text}: outside the roots`);
    } else if (!HARMLESS_GLOBALS.has(text)) {
      problem ??= high(`git ${text}: a global option that can change what git runs or where (-c, --config-env, --exec-path, --git-dir…)`);
      if (GLOBALS_WITH_VALUE.has(text)) index++;
    }
  }
  const subcommand = (args[index] as Extract<Word, { kind: 'static' }> | undefined)?.text;
  if (subcommand === undefined) return problem ?? high('git without a subcommand');
  // What git runs past its global options meets the deny rules: `git -c x=y push` is `git push`.
  const alsoRuns = [{ words: [{ kind: 'static' as const, text: 'git' }, ...args.slice(index)], argumentsFromInput }];
  const verdict = problem ?? subcommandVerdict(subcommand, args.slice(index + 1), argumentsFromInput);
  return { ...verdict, alsoRuns };
}

function subcommandVerdict(subcommand: string, rest: readonly Word[], argumentsFromInput: boolean): Verdict {
  if (NETWORK.has(subcommand)) return high(`git ${subcommand} reaches the network`);
  const texts = rest.map((word) => (word.kind === 'static' ? word.text : undefined));
  const first = texts[0];
  if (READ_ONLY.has(subcommand) || RUNS_REPOSITORY_PROGRAMS.has(subcommand) || readsOnly(subcommand, texts)) {
    const programs = runsRepositoryPrograms(subcommand, texts);
    const { problem } = scanOptions(rest, READ_RULES, argumentsFromInput);
    if (problem !== undefined) return high(`git ${subcommand} ${problem}: writes a file or runs a program`);
    if (programs) {
      return { tier: 'medium', readOnly: true, reason: `git ${subcommand} may run programs the repository's configuration names (textconv, diff and filter drivers, diff.external, gpg.program, a partial clone's fetch of a missing object); the git server's tools read with them off` };
    }
    return { tier: 'low', readOnly: true, reason: `git ${subcommand} only reads` };
  }
  if (subcommand === 'config') return high('git config can set programs git runs (core.pager, core.fsmonitor, aliases)');
  if (subcommand === 'remote' && ['add', 'remove', 'rm', 'rename', 'set-url'].includes(first ?? '')) return medium(`git remote ${first}`);
  if (subcommand === 'rebase') {
    const { problem } = scanOptions(rest, REBASE_RULES, argumentsFromInput);
    if (problem !== undefined) return high(`git rebase ${problem}: runs commands or an editor`);
  }
  if (subcommand === 'reflog' && (first === 'expire' || first === 'delete')) return medium(`git reflog ${first}`);
  if (LOCAL_WRITES.has(subcommand)) return medium(`git ${subcommand}`);
  return high(`git ${subcommand}: not a subcommand this check knows (aliases and remote helpers can run anything)`);
}

/** For a subcommand that reads: whether it may run what the repository names. `texts` holds the words after it (undefined: known only when it runs). */
function runsRepositoryPrograms(subcommand: string, texts: readonly (string | undefined)[]): boolean {
  if (RUNS_REPOSITORY_PROGRAMS.has(subcommand)) return true;
  const options = texts.filter((text) => text === undefined || text.startsWith('-'));
  const has = (...names: string[]) => options.some((text) => text === undefined || names.some((name) => text === name || text.startsWith(`${name}=`)));
  switch (subcommand) {
    case 'rev-parse':
      return texts.some((text) => text === undefined || REVISION_SYNTAX.test(text));
    // --with-tree and --source read a tree; --recurse-submodules runs git in each submodule, under its own configuration.
    case 'ls-files':
      return has('--with-tree', '--recurse-submodules');
    case 'check-attr':
      return has('--source');
    case 'grep':
      return grepReadsObjects(texts);
    // -v shows each branch's commit, -n each tag's message, --contains and --sort read commits.
    case 'branch':
    case 'tag':
      return options.some((text) => text === undefined || !['-l', '--list', '-a', '--all', '-r', '--remotes', '--show-current', '--no-color'].includes(text));
    // reflog and stash list walk commits (log's options too: -p, --show-signature); stash show is a diff.
    case 'reflog':
    case 'stash':
      return true;
    default:
      return false;
  }
}

/** git grep PATTERN [-- PATHS] searches the working tree; a revision, --cached or a submodule reads objects or another repository. */
function grepReadsObjects(texts: readonly (string | undefined)[]): boolean {
  let pattern = false;
  for (let index = 0; index < texts.length; index++) {
    const text = texts[index];
    if (text === undefined) return true;
    if (text === '--') return false;
    if (text === '--cached' || text.startsWith('--recurse-submodules') || text === '--no-index') return true;
    if (GREP_VALUES.has(text)) {
      if (text === '-e' || text === '-f') pattern = true;
      index++;
    } else if (text.startsWith('-')) {
      if (/^-[ef]./.test(text) || text.startsWith('--regexp')) pattern = true;
    } else if (pattern) return true;
    else pattern = true;
  }
  return false;
}

/** Subcommands that read or write depending on their arguments. */
function readsOnly(subcommand: string, texts: readonly (string | undefined)[]): boolean {
  const first = texts[0];
  switch (subcommand) {
    case 'branch':
      return texts.every((text) => text !== undefined && BRANCH_LISTING.has(text));
    case 'tag':
      return first === undefined || ((first === '-l' || first === '--list') && texts.every((text) => text !== undefined && !TAG_WRITES.has(text)));
    case 'remote':
      return first === undefined || (texts.length === 1 && (first === '-v' || first === '--verbose')) || first === 'get-url';
    case 'stash':
      return first === 'list' || first === 'show';
    case 'config':
      return first !== undefined && CONFIG_READS.has(first) && texts.slice(1).every((text) => text !== undefined && (!text.startsWith('-') || CONFIG_SCOPES.has(text)));
    case 'reflog':
      return first === undefined || first === 'show' || first === 'exists' || first.startsWith('-');
    case 'worktree':
      return first === 'list';
    default:
      return false;
  }
}

function medium(what: string): Verdict {
  return { tier: 'medium', readOnly: false, reason: `${what} changes the repository inside the roots` };
}
