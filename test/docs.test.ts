// The documentation checked against the tree and the built CLIs: every relative link in README.md
// and docs/**/*.md reaches a file (and a heading, by GitHub's slug rules), every `bulkhead <command>`
// the docs name is one the CLI lists, every --flag written after a command is one its --help shows,
// every key of the published policy schemas has its row and default in docs/configuration.md, and
// README.md stays a short product page. Run after a build: `npx vitest run test/docs.test.ts`.
import { execFile } from 'node:child_process';
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { dirname, join, relative, resolve, sep } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

const REPO = resolve(dirname(fileURLToPath(import.meta.url)), '..');
const README_MAX_BYTES = 20_000;

/** The CLI script of each binary the docs may name, relative to the repository. */
const BINARIES: Readonly<Record<string, string>> = {
  bulkhead: 'servers/gateway/dist/cli.js',
  'bulkhead-fs': 'servers/fs/dist/cli.js',
  'bulkhead-fs-write': 'servers/fs-write/dist/cli.js',
  'bulkhead-git': 'servers/git/dist/cli.js',
  'bulkhead-web': 'servers/web/dist/cli.js',
  'bulkhead-shell': 'servers/shell/dist/cli.js',
  'bulkhead-ladder': 'servers/ladder/dist/cli.js',
  'bulkhead-audit': 'shared/dist/audit/cli.js',
};
/** Words that name a subcommand right after a compartment binary (each has its own usage). */
const SUBCOMMANDS: Readonly<Record<string, readonly string[]>> = { 'bulkhead-ladder': ['token', 'migrate', 'copy'], 'bulkhead-audit': ['verify'] };

export interface Doc {
  /** Path relative to the repository, with `/`. */
  readonly file: string;
  readonly text: string;
}

function markdownFiles(): Doc[] {
  const files = ['README.md'];
  const walk = (folder: string) => {
    for (const entry of readdirSync(join(REPO, folder), { withFileTypes: true })) {
      const path = `${folder}/${entry.name}`;
      if (entry.isDirectory()) walk(path);
      else if (entry.name.endsWith('.md')) files.push(path);
    }
  };
  if (existsSync(join(REPO, 'docs'))) walk('docs');
  return files.map((file) => ({ file, text: readFileSync(join(REPO, file), 'utf8') }));
}

/** A document split into prose (fenced code blocked out) and the lines of its fenced code blocks. */
function splitFences(text: string): { prose: string[]; blocks: string[][] } {
  const prose: string[] = [];
  const blocks: string[][] = [];
  let fence: string | undefined;
  let block: string[] = [];
  for (const line of text.split('\n')) {
    const marker = /^ {0,3}(`{3,}|~{3,})/.exec(line)?.[1];
    if (fence === undefined && marker) {
      fence = marker;
      block = [];
      prose.push('');
    } else if (fence !== undefined && marker && marker[0] === fence[0] && marker.length >= fence.length && line.trim() === marker) {
      fence = undefined;
      blocks.push(block);
      prose.push('');
    } else if (fence !== undefined) {
      block.push(line);
      prose.push('');
    } else {
      prose.push(line);
    }
  }
  if (fence !== undefined) blocks.push(block);
  return { prose, blocks };
}

const CODE_SPAN = /(`+)([\s\S]*?[^`])\1(?!`)/g;

/** GitHub's heading anchor for a heading's text (github-slugger, as GitHub renders it). */
export function githubSlug(heading: string): string {
  const text = heading
    .replace(/!?\[([^\]]*)\]\([^)]*\)/g, '$1') // links and images: their text
    .replace(/<[^>]+>/g, '') // inline HTML
    .replace(/`/g, '') // code spans keep their content
    .replace(/\*+/g, '') // emphasis
    .trim()
    .toLowerCase();
  return text.replace(/[^\p{L}\p{M}\p{N}\p{Pc} -]/gu, '').replace(/ /g, '-');
}

/** Every anchor a Markdown file offers: its headings' slugs, with GitHub's -1, -2 for repeats. */
export function anchorsOf(text: string): Set<string> {
  const anchors = new Set<string>();
  const seen = new Map<string, number>();
  for (const line of splitFences(text).prose) {
    const heading = /^ {0,3}#{1,6}\s+(.*?)(?:\s+#+)?\s*$/.exec(line)?.[1];
    if (heading === undefined) continue;
    const base = githubSlug(heading);
    const count = seen.get(base) ?? 0;
    seen.set(base, count + 1);
    anchors.add(count === 0 ? base : `${base}-${count}`);
  }
  return anchors;
}

/** Link targets in a document's prose (inline links, images and reference definitions), code excluded. */
function linkTargets(text: string): string[] {
  const prose = splitFences(text).prose.join('\n').replace(CODE_SPAN, (span) => ' '.repeat(span.length));
  const targets: string[] = [];
  for (const match of prose.matchAll(/!?\[(?:[^\[\]]|\[[^\]]*\])*\]\(\s*<?([^)\s>]+)>?(?:\s+"[^"]*")?\s*\)/g)) targets.push(match[1]!);
  for (const match of prose.matchAll(/^ {0,3}\[[^\]]+\]:\s*<?(\S+?)>?(?:\s|$)/gm)) targets.push(match[1]!);
  return targets;
}

/**
 * Problems with the relative links of `docs`: a target that does not exist, lies outside the
 * repository or is absolute, and a #fragment that is not a heading of its Markdown file.
 * `exists`/`read` look at the tree; tests give them a fake one.
 */
export function linkProblems(docs: readonly Doc[], tree: { exists: (path: string) => boolean; isFile: (path: string) => boolean; read: (path: string) => string } = realTree()): string[] {
  const problems: string[] = [];
  const anchorCache = new Map<string, Set<string>>();
  const anchors = (path: string) => {
    let found = anchorCache.get(path);
    if (!found) anchorCache.set(path, (found = anchorsOf(tree.read(path))));
    return found;
  };
  for (const doc of docs) {
    for (const target of linkTargets(doc.text)) {
      if (/^[a-z][a-z0-9+.-]*:/i.test(target)) continue; // https:, mailto:
      const where = `${doc.file}: (${target})`;
      if (target.startsWith('/')) {
        problems.push(`${where} is absolute; link relatively`);
        continue;
      }
      const hash = target.indexOf('#');
      const pathPart = decodeURIComponent(hash === -1 ? target : target.slice(0, hash));
      const fragment = hash === -1 ? undefined : decodeURIComponent(target.slice(hash + 1));
      const path = pathPart === '' ? doc.file : relative(REPO, resolve(REPO, dirname(doc.file), pathPart)).split(sep).join('/');
      if (path.startsWith('..')) {
        problems.push(`${where} points outside the repository`);
        continue;
      }
      if (!tree.exists(path)) {
        problems.push(`${where}: ${path} does not exist`);
        continue;
      }
      if (fragment === undefined) continue;
      if (!path.endsWith('.md') || !tree.isFile(path)) {
        problems.push(`${where}: #${fragment} points into ${path}, which is not a Markdown file`);
        continue;
      }
      if (!anchors(path).has(fragment)) problems.push(`${where}: ${path} has no heading with the anchor #${fragment}`);
    }
  }
  return problems;
}

function realTree() {
  return {
    exists: (path: string) => existsSync(join(REPO, path)),
    isFile: (path: string) => statSync(join(REPO, path)).isFile(),
    read: (path: string) => readFileSync(join(REPO, path), 'utf8'),
  };
}

/** One command line the docs write: a binary, its command or subcommand, and the --flags after it. */
export interface Invocation {
  readonly where: string;
  readonly binary: string;
  /** For `bulkhead`: the command (`start`), `''` for none. For a compartment: its subcommand or `''`. */
  readonly command: string;
  /** For `bulkhead serve <namespace>`: the namespace. */
  readonly namespace?: string;
  readonly flags: readonly string[];
  /** A name that looks like a Bulkhead binary but is none. */
  readonly unknownBinary?: boolean;
}

/** Code the docs show: inline code spans (whitespace collapsed) and fenced lines (continuations joined). */
function codeSegments(text: string): string[] {
  const { prose, blocks } = splitFences(text);
  const segments: string[] = [];
  for (const match of prose.join('\n').matchAll(CODE_SPAN)) segments.push(match[2]!.replace(/\s+/g, ' ').trim());
  for (const block of blocks) {
    const lines: string[] = [];
    for (const line of block) {
      const previous = lines[lines.length - 1];
      // `\` at the end of a line, or a usage synopsis continued on an indented line starting with [ or --.
      if (previous !== undefined && (previous.endsWith('\\') || /^\s+(\[|--)/.test(line))) {
        lines[lines.length - 1] = `${previous.replace(/\\$/, '')} ${line.trim()}`;
      } else {
        lines.push(line);
      }
    }
    segments.push(...lines);
  }
  return segments;
}

const strip = (token: string) => token.replace(/^[\["'(,]+/, '').replace(/[\]"'),]+$/, '').replace(/\.{3}$|…$/, '').replace(/[\]"'),]+$/, '');

/** The head of an invocation: which binary a token names, if it names one. */
function binaryOf(token: string): { binary: string } | { unknown: string } | undefined {
  if (token === 'bulkhead' || token === '@bulkhead/gateway' || /(^|\/)servers\/gateway\/dist\/cli\.js$/.test(token)) return { binary: 'bulkhead' };
  const script = /(?:^|\/)servers\/([a-z-]+)\/dist\/cli\.js$/.exec(token)?.[1];
  if (script) return BINARIES[`bulkhead-${script}`] ? { binary: `bulkhead-${script}` } : { unknown: token };
  if (/(?:^|\/)shared\/dist\/audit\/cli\.js$/.test(token)) return { binary: 'bulkhead-audit' };
  if (/^bulkhead-[a-z][a-z-]*$/.test(token)) return BINARIES[token] ? { binary: token } : { unknown: token };
  return undefined;
}

/** Every invocation of a Bulkhead binary in the code of `doc`. */
export function invocationsOf(doc: Doc): Invocation[] {
  const found: Invocation[] = [];
  for (const segment of codeSegments(doc.text)) {
    // A comment, a command separator or a run of spaces before a description ends a command line.
    for (const clause of segment.split(/\s#|&&|\|\||;|(?<=\S)\s{2,}(?=\S)/)) {
      const tokens = clause.trim().split(/\s+/).filter(Boolean);
      for (let i = 0; i < tokens.length; i++) {
        const head = binaryOf(strip(tokens[i]!));
        if (!head) continue;
        if (i > 0 && /^--/.test(tokens[i - 1]!)) continue; // the value of a flag (--server bulkhead)
        const where = `${doc.file}: \`${clause.trim()}\``;
        if ('unknown' in head) {
          found.push({ where, binary: head.unknown, command: '', flags: [], unknownBinary: true });
          break;
        }
        let rest = tokens.slice(i + 1).map(strip);
        if (rest[0] === '--') rest = rest.slice(1);
        const first = rest[0];
        let command = '';
        let namespace: string | undefined;
        if (first !== undefined && !first.startsWith('-')) {
          if (/^[<\[{"]/.test(first) || first === '') break; // a placeholder: `bulkhead <command>`
          command = first;
          rest = rest.slice(1);
          if (head.binary === 'bulkhead' && command === 'serve' && rest[0] !== undefined && /^[a-z][a-z_]*$/.test(rest[0])) {
            namespace = rest[0];
            rest = rest.slice(1);
          }
        }
        const flags = rest.flatMap((token) => /^\[?(--[a-z0-9][a-z0-9-]*)/i.exec(token)?.[1] ?? []);
        found.push({ where, binary: head.binary, command, flags, ...(namespace ? { namespace } : {}) });
        break;
      }
    }
  }
  return found;
}

const helpCache = new Map<string, Promise<string>>();

/** stdout and stderr of `<binary> <args> --help`, as built; runs once per distinct command line. */
function help(binary: string, args: readonly string[]): Promise<string> {
  const key = [binary, ...args].join(' ');
  let text = helpCache.get(key);
  if (text === undefined) {
    const script = join(REPO, BINARIES[binary]!);
    text = existsSync(script)
      ? new Promise((done) => {
          execFile(process.execPath, [script, ...args, '--help'], { cwd: REPO, encoding: 'utf8', timeout: 60_000 }, (_error, stdout, stderr) => done(`${stdout}\n${stderr}`));
        })
      : Promise.reject(new Error(`${BINARIES[binary]} is missing: build first (pnpm build)`));
    helpCache.set(key, text);
  }
  return text;
}

/** The commands `bulkhead --help` lists under "commands:". */
async function listedCommands(): Promise<Set<string>> {
  const usage = await help('bulkhead', []);
  const lines = usage.split('\n');
  const start = lines.findIndex((line) => /^commands:/.test(line.trim()));
  const commands = new Set<string>();
  for (const line of start === -1 ? [] : lines.slice(start + 1)) {
    if (line.trim() === '') break;
    const name = /^\s+([a-z][a-z-]*)/.exec(line)?.[1];
    if (name) commands.add(name);
  }
  return commands;
}

const mentions = (text: string, flag: string) => new RegExp(`(^|[\\s\\[(,|])${flag}(?=[\\s\\]=,.)|]|$)`, 'm').test(text);

/** The command line whose --help lists an invocation's flags, or the problem with its command. */
function helpArgs(call: Invocation, commands: ReadonlySet<string>): string[] | string {
  if (call.unknownBinary) return `${call.where}: ${call.binary} is not a Bulkhead binary`;
  if (call.binary === 'bulkhead') {
    if (call.command !== '' && !commands.has(call.command)) return `${call.where}: bulkhead ${call.command} is not a command of \`bulkhead --help\``;
    return call.command === '' ? [] : call.namespace ? [call.command, call.namespace] : [call.command];
  }
  if (call.command !== '' && !(SUBCOMMANDS[call.binary] ?? []).includes(call.command)) return `${call.where}: ${call.binary} has no subcommand ${call.command}`;
  return call.command === '' ? [] : [call.command];
}

/**
 * Problems with the invocations: an unknown binary or command, a flag its --help does not show.
 * `--help` itself is the flag that printed the text, so it counts as shown.
 */
export async function commandProblems(invocations: readonly Invocation[]): Promise<string[]> {
  const commands = await listedCommands();
  if (commands.size === 0) return ['`bulkhead --help` lists no commands under "commands:"'];
  const checks = invocations.map((call) => ({ call, args: helpArgs(call, commands) }));
  const problems = await Promise.all(
    checks.map(async ({ call, args }) => {
      if (typeof args === 'string') return [args];
      const flags = call.flags.filter((flag) => flag !== '--help');
      if (flags.length === 0) return [];
      const text = await help(call.binary, args);
      return flags.filter((flag) => !mentions(text, flag)).map((flag) => `${call.where}: ${flag} is not in \`${[call.binary, ...args].join(' ')} --help\``);
    }),
  );
  return [...new Set(problems.flat())];
}

interface JsonSchema {
  readonly properties?: Record<string, JsonSchema>;
  readonly additionalProperties?: JsonSchema | boolean;
  readonly items?: JsonSchema;
  readonly default?: unknown;
}

/** A default as the key tables of docs/configuration.md write it: YAML-like, in one line. */
export function formatDefault(value: unknown): string {
  if (typeof value === 'string') return value === '' ? '""' : value;
  if (Array.isArray(value)) return `[${value.map(formatDefault).join(', ')}]`;
  if (value !== null && typeof value === 'object') {
    const entries = Object.entries(value);
    return entries.length === 0 ? '{}' : `{ ${entries.map(([key, inner]) => `${key}: ${formatDefault(inner)}`).join(', ')} }`;
  }
  return String(value);
}

/** Every key of a policy schema (`limits.read_max_lines`, `servers.<name>.args`, `tokens[].file`) with its default. */
export function schemaKeys(schema: JsonSchema, prefix = ''): { key: string; default?: unknown }[] {
  const keys: { key: string; default?: unknown }[] = [];
  for (const [name, inner] of Object.entries(schema.properties ?? {})) {
    if (name === '$schema') continue;
    const key = prefix ? `${prefix}.${name}` : name;
    keys.push({ key, ...('default' in inner ? { default: inner.default } : {}) }, ...schemaKeys(inner, key));
  }
  if (typeof schema.additionalProperties === 'object' && schema.additionalProperties.properties) keys.push(...schemaKeys(schema.additionalProperties, `${prefix}.<name>`));
  if (schema.items?.properties) keys.push(...schemaKeys(schema.items, `${prefix}[]`));
  return keys;
}

/**
 * Problems with docs/configuration.md against the published schemas: a policy file without its
 * `## \`file.yaml\`` section, a key without its row in that section's key table, a row whose default
 * is not the schema's. Object keys whose children have rows may go without a row of their own.
 */
export function configurationProblems(markdown: string, schemas: Readonly<Record<string, JsonSchema>>): string[] {
  const problems: string[] = [];
  for (const [name, schema] of Object.entries(schemas)) {
    const file = name.replace(/\.schema\.json$/, '.yaml');
    const start = markdown.indexOf(`\n## \`${file}\``);
    if (start === -1) {
      problems.push(`docs/configuration.md has no section ## \`${file}\``);
      continue;
    }
    const next = markdown.indexOf('\n## ', start + 1);
    const section = markdown.slice(start, next === -1 ? undefined : next);
    for (const { key, default: value } of schemaKeys(schema)) {
      const row = section.split('\n').find((line) => line.startsWith(`| \`${key}\` |`));
      if (!row) {
        if (!section.includes(`| \`${key}.`)) problems.push(`${file}: ${key} has no row in docs/configuration.md`);
        continue;
      }
      const cell = row.split(' | ')[1]?.trim();
      if (value !== undefined && cell !== `\`${formatDefault(value)}\``) problems.push(`${file}: ${key} defaults to ${JSON.stringify(value)}, but docs/configuration.md says ${cell}`);
    }
  }
  return problems;
}

function publishedSchemas(): Record<string, JsonSchema> {
  const folder = join(REPO, 'schemas');
  return Object.fromEntries(
    readdirSync(folder)
      .filter((name) => name.endsWith('.schema.json'))
      .map((name) => [name, JSON.parse(readFileSync(join(folder, name), 'utf8')) as JsonSchema]),
  );
}

export function readmeSizeProblem(bytes: number): string | undefined {
  return bytes < README_MAX_BYTES ? undefined : `README.md is ${bytes} bytes; keep it under ${README_MAX_BYTES} (move reference text to docs/)`;
}

describe('the checks themselves', () => {
  it('make GitHub anchors', () => {
    expect(githubSlug('The gateway (`bulkhead`)')).toBe('the-gateway-bulkhead');
    expect(githubSlug('`fs_write_policy.yaml`')).toBe('fs_write_policyyaml');
    expect(githubSlug("Conversion off the server's thread, within the deadline")).toBe('conversion-off-the-servers-thread-within-the-deadline');
    expect(githubSlug('Writing files (`pnpm bench fs-write`)')).toBe('writing-files-pnpm-bench-fs-write');
    expect([...anchorsOf('# A\n## Tools\n```\n# not a heading\n```\n## Tools\n')]).toEqual(['a', 'tools', 'tools-1']);
  });

  it('find a missing file, a missing anchor, an absolute link and one outside the repository', () => {
    const tree = { exists: (path: string) => path === 'docs/a.md' || path === 'docs/b.md', isFile: () => true, read: () => '# Here\n' };
    const docs = [{ file: 'docs/a.md', text: '[ok](b.md#here) [gone](c.md) [anchor](b.md#there) [self](#nowhere) [abs](/docs/b.md) [out](../../x.md) `[code](c.md)` [web](https://example.com)\n' }];
    const problems = linkProblems(docs, tree);
    expect(problems).toHaveLength(5);
    expect(problems.join('\n')).toMatch(/c\.md does not exist[\s\S]*#there[\s\S]*#nowhere[\s\S]*absolute[\s\S]*outside/);
  });

  it('find an unknown command, binary, subcommand and flag', async () => {
    const doc = {
      file: 'x.md',
      text: '`bulkhead frobnicate` `bulkhead start --no-such-flag` `bulkhead-nope --root x` `bulkhead-fs hello`\n```\nnpx -y @bulkhead/gateway start --root DIR --bogus   # a comment --ignored\n```\n',
    };
    const invocations = invocationsOf(doc);
    expect(invocations.map((call) => `${call.binary} ${call.command}`)).toEqual(['bulkhead frobnicate', 'bulkhead start', 'bulkhead-nope ', 'bulkhead-fs hello', 'bulkhead start']);
    expect(invocations[4]!.flags).toEqual(['--root', '--bogus']);
    const problems = (await commandProblems(invocations)).join('\n');
    expect(problems).toContain('bulkhead frobnicate is not a command');
    expect(problems).toContain('--no-such-flag is not in');
    expect(problems).toContain('bulkhead-nope is not a Bulkhead binary');
    expect(problems).toContain('bulkhead-fs has no subcommand hello');
    expect(problems).toContain('--bogus is not in');
    expect(problems).not.toContain('--root is not in');
  });

  it('find an undocumented key and a wrong default', () => {
    const schema = { properties: { a: { default: 1 }, limits: { properties: { b: { default: [] } } }, c: {} } };
    const markdown = '# C\n\n## `x.yaml`\n\n| key | default |\n| --- | --- |\n| `a` | `2` | x |\n| `limits.b` | `[]` | x |\n';
    expect(configurationProblems(markdown, { 'x.schema.json': schema, 'y.schema.json': {} })).toEqual([
      'x.yaml: a defaults to 1, but docs/configuration.md says `2`',
      'x.yaml: c has no row in docs/configuration.md',
      'docs/configuration.md has no section ## `y.yaml`',
    ]);
  });

  it('refuse a README of 20 KB', () => {
    expect(readmeSizeProblem(README_MAX_BYTES)).toBeDefined();
    expect(readmeSizeProblem(README_MAX_BYTES - 1)).toBeUndefined();
  });
});

describe('the documentation', () => {
  const docs = markdownFiles();

  it('covers README.md and docs/', () => {
    expect(docs.map((doc) => doc.file)).toContain('README.md');
    expect(docs.filter((doc) => doc.file.startsWith('docs/')).length).toBeGreaterThan(0);
  });

  it('has relative links that reach an existing file and heading', () => {
    expect(linkProblems(docs)).toEqual([]);
  });

  it('names only commands and flags the built CLIs list', async () => {
    const invocations = docs.flatMap(invocationsOf);
    expect(invocations.length).toBeGreaterThan(0);
    expect(await commandProblems(invocations)).toEqual([]);
  }, 180_000);

  it('documents every key of every policy file with its default', () => {
    const schemas = publishedSchemas();
    expect(Object.keys(schemas).length).toBeGreaterThan(0);
    expect(configurationProblems(readFileSync(join(REPO, 'docs/configuration.md'), 'utf8'), schemas)).toEqual([]);
  });

  it('keeps README.md a short product page', () => {
    expect(readmeSizeProblem(statSync(join(REPO, 'README.md')).size)).toBeUndefined();
  });
});
