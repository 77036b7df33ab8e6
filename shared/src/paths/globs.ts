import picomatch from 'picomatch';

/**
 * Globs over root-relative paths in the style of .gitignore: a glob without `/` matches a name at
 * any depth, a glob ending in `/` matches a folder (and so everything under it) at any depth, any
 * other glob matches the whole relative path.
 */
export class PathGlobSet {
  private readonly matchers: readonly { source: string; test: (relative: string, segments: string[]) => boolean }[];

  /** `ignoreCase` for guards that must hold on case-insensitive filesystems too (`.GIT/` is `.git/` there). */
  constructor(
    readonly sources: readonly string[],
    options: { readonly ignoreCase?: boolean } = {},
  ) {
    this.matchers = sources.map((source) => ({ source, test: compile(source, options.ignoreCase ?? false) }));
  }

  /** The first glob that matches the root-relative path, or undefined. */
  match(relative: string): string | undefined {
    const normalized = relative.split('\\').join('/');
    const segments = normalized.split('/').filter((s) => s.length > 0);
    return this.matchers.find((m) => m.test(normalized, segments))?.source;
  }
}

function compile(source: string, ignoreCase: boolean): (relative: string, segments: string[]) => boolean {
  const options = { dot: true, nocase: ignoreCase, nonegate: true } as const;
  if (source.endsWith('/')) {
    const folder = picomatch(source.slice(0, -1), options);
    return (_relative, segments) => segments.some((s) => folder(s));
  }
  if (!source.includes('/')) {
    const name = picomatch(source, options);
    return (_relative, segments) => segments.some((s) => name(s));
  }
  const whole = picomatch(source.replace(/^\//, ''), options);
  const under = picomatch(`${source.replace(/^\//, '')}/**`, options);
  return (relative) => whole(relative) || under(relative);
}
