import { scanOptions, type OptionRules } from './options.js';
import type { Place } from './paths.js';
import { high, type Verdict, type Word } from './types.js';

/**
 * Subcommands that read objects, refs and the index without running anything a repository's
 * configuration names (the runner's GIT_CONFIG_COUNT already turns core.fsmonitor off).
 */
const READ_ONLY = new Set([
  'shortlog', 'rev-parse', 'rev-list', 'ls-files', 'ls-tree', 'cat-file', 'describe', 'grep', 'show-ref', 'for-each-ref',
  'merge-base', 'name-rev', 'count-objects', 'version', 'check-ignore', 'check-attr',
]);
/**
 * Reading subcommands that run programs a hostile repository's .git/config and .gitattributes name,
 * which no -c or GIT_CONFIG_COUNT override can switch off for every driver name: textconv and
 * `diff.<driver>.command` (diff, log -p, show, blame), clean and smudge filters (status and diff
 * hash a changed file through `filter.<driver>.clean`), diff.external, and gpg.program (log and show
 * under log.showSignature). Medium: they run repository code, like a build. The git server's tools
 * read the same with every such program off.
 */
const RUNS_REPOSITORY_PROGRAMS = new Set(['status', 'log', 'diff', 'show', 'blame', 'annotate', 'whatchanged', 'diff-tree', 'diff-files', 'diff-index']);
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
  const programs = runsRepositoryPrograms(subcommand, texts);
  if (programs || READ_ONLY.has(subcommand) || readsOnly(subcommand, texts)) {
    const { problem } = scanOptions(rest, READ_RULES, argumentsFromInput);
    if (problem !== undefined) return high(`git ${subcommand} ${problem}: writes a file or runs a program`);
    if (programs) {
      return { tier: 'medium', readOnly: true, reason: `git ${subcommand} may run programs the repository's configuration names (textconv, diff and filter drivers, diff.external, gpg.program); the git server's tools read with them off` };
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

/** `texts` holds the words after the subcommand (undefined: known only when it runs). */
function runsRepositoryPrograms(subcommand: string, texts: readonly (string | undefined)[]): boolean {
  if (RUNS_REPOSITORY_PROGRAMS.has(subcommand)) return true;
  const options = texts.filter((text) => text === undefined || text.startsWith('-'));
  switch (subcommand) {
    // --dirty and --broken refresh the index: a changed file goes through its clean filter.
    case 'describe':
      return options.some((text) => text === undefined || text.startsWith('--dirty') || text.startsWith('--broken'));
    // --filters runs smudge filters; --batch reads its options from the input too.
    case 'cat-file':
      return options.some((text) => text === undefined || text.startsWith('--filters') || text.startsWith('--batch') || text === '--path' || text.startsWith('--path='));
    // reflog and stash list take log's options (-p, --show-signature); stash show is a diff.
    case 'reflog':
      return options.length > 0;
    case 'stash':
      return texts[0] === 'show' || options.length > 0;
    default:
      return false;
  }
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
