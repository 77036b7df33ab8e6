import type { Verdict } from './types.js';

/** Test runners, builds, linters and formatters: they run project code, with any arguments. */
const ANY_ARGUMENTS = new Set([
  'make', 'gmake', 'tsc', 'eslint', 'prettier', 'biome', 'vitest', 'jest', 'mocha', 'pytest', 'tox', 'nox', 'mypy', 'ruff',
  'black', 'isort', 'flake8', 'pylint', 'rustfmt', 'gofmt', 'clang-format', 'cmake', 'ctest', 'ninja', 'mvn', 'gradle',
  './gradlew', './mvnw', 'phpunit', 'rspec', 'rake', 'just',
]);

const SCRIPT_RUNNERS = new Set(['test', 't', 'run', 'run-script', 'build', 'lint']);
/** Subcommands that build, test or format; install, add, exec and dlx fetch and run packages (high). */
const SUBCOMMANDS: Readonly<Record<string, ReadonlySet<string>>> = {
  npm: SCRIPT_RUNNERS,
  pnpm: SCRIPT_RUNNERS,
  yarn: SCRIPT_RUNNERS,
  bun: SCRIPT_RUNNERS,
  cargo: new Set(['build', 'b', 'check', 'c', 'test', 't', 'fmt', 'clippy', 'doc', 'bench', 'run', 'r']),
  go: new Set(['build', 'test', 'vet', 'fmt', 'run']),
  dotnet: new Set(['build', 'test', 'format', 'run']),
  deno: new Set(['test', 'fmt', 'lint', 'check', 'task']),
};
/** Package-manager options allowed before the subcommand (`pnpm -r test`, `pnpm --filter web build`). */
const PACKAGE_MANAGER_FLAGS = new Set(['-r', '--recursive', '-s', '--silent', '--if-present']);
const PACKAGE_MANAGER_VALUE_FLAGS = new Set(['--filter', '-F']);
const PYTHON_MODULES = new Set(['pytest', 'unittest', 'mypy', 'black', 'ruff', 'flake8', 'pylint', 'isort']);
const PYTHONS = new Set(['python', 'python3']);

/** The verdict for a known project command, or undefined. `texts` holds undefined for words known only at run time. */
export function projectVerdict(texts: readonly (string | undefined)[]): Verdict | undefined {
  const [name = '', ...rest] = texts;
  const medium = (what: string): Verdict => ({ tier: 'medium', readOnly: false, reason: `${what} is a project command (build, test, lint or format)` });
  if (ANY_ARGUMENTS.has(name)) return medium(name);
  if (PYTHONS.has(name) && rest[0] === '-m' && PYTHON_MODULES.has(rest[1] ?? '')) return medium(`${name} -m ${rest[1]}`);
  const subcommands = SUBCOMMANDS[name];
  if (subcommands === undefined) return undefined;
  let index = 0;
  while (index < rest.length) {
    const word = rest[index];
    if (word === undefined) break;
    if (PACKAGE_MANAGER_VALUE_FLAGS.has(word)) index += 2;
    else if (PACKAGE_MANAGER_FLAGS.has(word) || word.startsWith('--filter=')) index++;
    else break;
  }
  const subcommand = rest[index];
  return subcommand !== undefined && subcommands.has(subcommand) ? medium(`${name} ${subcommand}`) : undefined;
}
