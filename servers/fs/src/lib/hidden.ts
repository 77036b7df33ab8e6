/** A pattern that names hidden segments itself (`.github/**`) asks for hidden files. */
export function patternNamesHidden(pattern: string): boolean {
  return pattern.split('/').some((segment) => segment.startsWith('.') && segment !== '.' && segment !== '..');
}
