/** Variables every command gets from the server's environment when they are set. */
const ALWAYS_PASSED = ['PATH', 'HOME', 'LANG'];

/**
 * The environment of a command: PATH, HOME, LANG, every LC_*, TERM=dumb and the names the policy
 * lists; nothing else of the server's environment (its tokens and keys) reaches a command.
 */
export function commandEnvironment(source: NodeJS.ProcessEnv, passthrough: readonly string[]): Record<string, string> {
  const env: Record<string, string> = {};
  for (const [name, value] of Object.entries(source)) {
    if (value === undefined) continue;
    if (ALWAYS_PASSED.includes(name) || name.startsWith('LC_') || passthrough.includes(name)) env[name] = value;
  }
  env['PATH'] ??= '/usr/local/bin:/usr/bin:/bin';
  env['TERM'] = 'dumb';
  return { ...env, ...GIT_OVERRIDES };
}

/**
 * Configuration every git a command runs gets on top of the repository's own (GIT_CONFIG_COUNT beats
 * .git/config): no fsmonitor program from a repository's config, even under a read-only `git status`,
 * and no bare repository found by walking into a folder a project checked in.
 */
const GIT_OVERRIDES: Readonly<Record<string, string>> = {
  GIT_CONFIG_COUNT: '2',
  GIT_CONFIG_KEY_0: 'core.fsmonitor',
  GIT_CONFIG_VALUE_0: 'false',
  GIT_CONFIG_KEY_1: 'safe.bareRepository',
  GIT_CONFIG_VALUE_1: 'explicit',
};
