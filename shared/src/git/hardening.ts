/**
 * Configuration given on every git command line. Command-line values win over the repository's
 * own `.git/config`, which is untrusted: each entry names a way a hostile repository (or an
 * unusual one) could run a program, reach the network, or change the output we parse.
 */
const HARDENED_CONFIG: readonly (readonly [key: string, value: string])[] = [
  // Programs git would run on its own.
  ['core.fsmonitor', 'false'], // a hook program run by status, diff and update-index
  ['core.hooksPath', '/dev/null'], // reference-transaction (update-ref), post-index-change, …
  ['core.pager', 'cat'], // also passed: --no-pager; output is a pipe, never a terminal
  ['diff.external', ''], // an external diff program; also passed: --no-ext-diff
  ['core.attributesFile', '/dev/null'], // attributes pick filter and diff drivers
  ['core.editor', 'false'],
  ['core.askPass', ''],
  ['credential.helper', ''], // empty resets the list of helpers
  ['gpg.program', 'false'], // signature checks that config could turn on run these
  ['gpg.ssh.program', 'false'],
  ['gpg.x509.program', 'false'],
  ['log.showSignature', 'false'],
  ['commit.gpgSign', 'false'], // commit-tree would sign (run gpg.program) when the repo asks
  ['submodule.recurse', 'false'], // no git process inside a submodule, whose config we never read
  ['diff.submodule', 'short'],
  // Files git would read because the repository's config names them (git 2.39's keys that name a
  // file). Their content could come back in output (a mailmap's names as authors) or in an error
  // (a file that does not parse is quoted), so none is read from wherever the config points:
  // /dev/null reads as empty, '' resets a list. include.path / includeIf.*.path cannot be
  // switched off from the command line: GitRepository confines their targets to the roots.
  ['mailmap.file', '/dev/null'], // extra mailmap entries: its lines became authors in blame and log
  ['mailmap.blob', ''], // also the default HEAD:.mailmap of a bare repository; a working tree's own .mailmap still applies
  ['blame.ignoreRevsFile', ''], // empty resets the list (git_blame also passes --no-ignore-revs-file)
  ['core.excludesFile', '/dev/null'],
  ['commit.template', '/dev/null'], // git commit only; no tool runs it
  ['diff.orderFile', '/dev/null'], // an empty order file leaves git's own order
  ['gpg.ssh.allowedSignersFile', '/dev/null'],
  ['gpg.ssh.revocationFile', '/dev/null'],
  ['gpg.ssh.defaultKeyCommand', 'false'],
  ['sequence.editor', 'false'],
  ['advice.graftFileDeprecated', 'false'], // GIT_GRAFT_FILE below names /dev/null, which git would advise about
  // Writes: none but commit_changeset's, and its temporary index stays one file in its temp folder.
  ['core.splitIndex', 'false'],
  ['gc.auto', '0'],
  ['maintenance.auto', 'false'],
  // The network: no transport at all (GIT_ALLOW_PROTOCOL below also beats protocol.<name>.allow).
  ['protocol.allow', 'never'],
  ['core.sshCommand', 'false'],
  // Output we parse: the same shape whatever the repository says.
  ['color.ui', 'false'],
  ['core.quotePath', 'true'],
  ['diff.noprefix', 'false'],
  ['diff.mnemonicPrefix', 'false'],
  ['diff.relative', 'false'],
  ['log.showRoot', 'true'],
  ['i18n.logOutputEncoding', 'UTF-8'],
  ['i18n.commitEncoding', 'UTF-8'],
];

/**
 * The global options every invocation starts with. Not needed here: `uploadpack.packObjectsHook`
 * (upload-pack only, and git reads it from protected config only) and `core.alternateRefsCommand`
 * (fetch and receive-pack only): no tool runs those commands.
 */
export const HARDENED_GIT_OPTIONS: readonly string[] = ['--no-pager', '--no-replace-objects', ...HARDENED_CONFIG.flatMap(([key, value]) => ['-c', `${key}=${value}`])];

/**
 * HOME and XDG_CONFIG_HOME for git: a path below a device file can never exist or be created, so
 * no ~/.gitconfig, ~/.config/git/attributes or ignore file applies, and there is no folder to
 * create or to leave behind (git treats "not a directory" like "missing" here).
 */
const NO_HOME = '/dev/null';

/**
 * The whole environment of a git process, built from nothing: the parent's GIT_DIR,
 * GIT_WORK_TREE, GIT_INDEX_FILE, GIT_EXTERNAL_DIFF, GIT_SSH_COMMAND, … never leak in. `extra`
 * adds what one command needs (a temporary index, an author).
 */
export function gitEnvironment(extra: Readonly<Record<string, string>> = {}): Record<string, string> {
  const env: Record<string, string> = {
    PATH: process.env['PATH'] ?? '/usr/local/bin:/usr/bin:/bin',
    HOME: NO_HOME,
    XDG_CONFIG_HOME: NO_HOME,
    LC_ALL: 'C',
    LANG: 'C',
    GIT_CONFIG_NOSYSTEM: '1',
    GIT_CONFIG_SYSTEM: '/dev/null',
    GIT_CONFIG_GLOBAL: '/dev/null',
    GIT_ATTR_NOSYSTEM: '1',
    GIT_TERMINAL_PROMPT: '0',
    GIT_OPTIONAL_LOCKS: '0',
    GIT_PAGER: 'cat',
    PAGER: 'cat',
    GIT_NO_REPLACE_OBJECTS: '1',
    // info/grafts (deprecated) is read even with --no-replace-objects, and a line that is not an
    // object id is quoted in an error: as a symlink it would print the first line of any file.
    GIT_GRAFT_FILE: '/dev/null',
    // An empty allow list of transports: it beats protocol.<name>.allow=always in a repo's config,
    // which protocol.allow=never alone does not.
    GIT_ALLOW_PROTOCOL: '',
  };
  const tmp = process.env['TMPDIR'];
  if (tmp !== undefined) env['TMPDIR'] = tmp;
  return { ...env, ...extra };
}
