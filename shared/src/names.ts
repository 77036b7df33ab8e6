import picomatch from 'picomatch';

/** `namespace:tool`, the form used in every config and policy file. */
export type QualifiedName = `${string}:${string}`;

const PLAIN_NAME = /^[a-z][a-z0-9_]*$/;
const NAMESPACE = /^[a-z][a-z0-9_]*$/;

export function qualify(namespace: string, tool: string): QualifiedName {
  return `${namespace}:${tool}`;
}

export function isPlainToolName(name: string): boolean {
  return PLAIN_NAME.test(name) && name.length <= 64;
}

export function isNamespace(name: string): boolean {
  return NAMESPACE.test(name);
}

/** The gateway's wire form (`fs__read_file`): MCP clients reject `:` in tool names. */
export function toWireName(namespace: string, tool: string): string {
  return `${namespace}__${tool}`;
}

/** Accepts `ns:tool` or `ns__tool`; returns undefined for a name with no namespace. */
export function parseToolName(name: string): { namespace: string; tool: string } | undefined {
  const colon = name.indexOf(':');
  if (colon > 0) return { namespace: name.slice(0, colon), tool: name.slice(colon + 1) };
  const sep = name.indexOf('__');
  if (sep > 0) return { namespace: name.slice(0, sep), tool: name.slice(sep + 2) };
  return undefined;
}

/** `ns__tool` or `ns:tool` as `ns:tool`; a name with no namespace is returned as it is. */
export function qualifiedForm(name: string): string {
  const parsed = parseToolName(name);
  return parsed ? qualify(parsed.namespace, parsed.tool) : name;
}

export interface ToolPattern {
  /** The text as written in the policy file. */
  readonly source: string;
  readonly matchesName: (qualified: string) => boolean;
  /** Matcher over the tool's subject argument (`shell:run_shell(git status*)`), if any. */
  readonly argument?: ArgumentMatcher;
}

/** The key of `(*=glob)`: any string argument, at any depth of objects and arrays. */
export const ANY_ARGUMENT = '*';

export interface ArgumentMatcher {
  /** Named argument (`(path=src/**)`), ANY_ARGUMENT (`(*=**\/.env*)`), or undefined for the tool's declared subject argument. */
  readonly key?: string;
  readonly matches: (value: string) => boolean;
}

const PATTERN_WITH_ARGUMENT = /^([^()]+)\((.*)\)$/s;

/**
 * Parses a tool pattern: `fs` and `fs:*` mean every tool of a namespace, `*:read_*` and other globs
 * match qualified names, and a trailing `(glob)`, `(key=glob)` or `(*=glob)` (any argument)
 * narrows by argument.
 */
export function parseToolPattern(source: string): ToolPattern {
  const trimmed = source.trim();
  const withArgument = PATTERN_WITH_ARGUMENT.exec(trimmed);
  const namePart = (withArgument ? withArgument[1]! : trimmed).trim();
  const glob = namePart.includes(':') ? namePart : `${namePart}:*`;
  const nameMatcher = picomatch(glob, { dot: true, nonegate: true });
  const pattern: ToolPattern = { source: trimmed, matchesName: (qualified) => nameMatcher(qualified) };
  if (!withArgument) return pattern;
  const inner = withArgument[2]!;
  const keyed = /^(\*|[A-Za-z_][A-Za-z0-9_-]*)=(.*)$/s.exec(inner);
  const valueGlob = keyed ? keyed[2]! : inner;
  return {
    ...pattern,
    argument: { key: keyed?.[1], matches: globOverText(valueGlob) },
  };
}

/**
 * Argument globs compare whole strings where only `*` and `?` are special, so that
 * `git status*` matches `git status --short` and a `/` in a command is an ordinary character.
 * As in a path glob, `**\/` may also stand for no folder at all and a trailing `/**` for none
 * below, so `**\/.env*` matches `.env` and `src/**` matches `src`.
 */
export function globOverText(glob: string): (value: string) => boolean {
  let source = '^';
  for (let index = 0; index < glob.length; index++) {
    const char = glob[index]!;
    if (glob.startsWith('**/', index)) {
      source += '(?:[\\s\\S]*/)?';
      index += 2;
    } else if (glob.startsWith('/**', index) && index + 3 === glob.length) {
      source += '(?:/[\\s\\S]*)?';
      index += 2;
    } else if (char === '*') source += '[\\s\\S]*';
    else if (char === '?') source += '[\\s\\S]';
    else source += char.replace(/[.*+?^${}()|[\]\\/-]/g, '\\$&');
  }
  const regex = new RegExp(`${source}$`);
  return (value) => regex.test(value);
}
