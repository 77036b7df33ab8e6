/** True when a relative path has a segment that starts with a dot (a hidden file or folder). */
export function isHiddenPath(relative: string): boolean {
  return relative.split(/[\\/]/).some((segment) => segment.startsWith('.') && segment !== '.' && segment !== '..');
}

/** A pattern that names hidden segments itself (`.github/**`) asks for hidden files. */
export function patternNamesHidden(pattern: string): boolean {
  return pattern.split('/').some((segment) => segment.startsWith('.') && segment !== '.' && segment !== '..');
}
