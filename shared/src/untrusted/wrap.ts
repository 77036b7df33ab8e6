const TAG = 'untrusted_external_content';
/**
 * The wrapper's tag and the spaced, split or full-width spellings of it that a model may still
 * read as the tag (`< /untrusted_external_content>`, `<untrusted-external content`,
 * `＜/untrusted_external_content＞`).
 */
const TAG_LOOKALIKE = /[<\uFF1C\uFE64](\s*[/\uFF0F]?\s*untrusted[\s_-]*external[\s_-]*content)/gi;

/** Whether `text` holds a spelling of the wrapper's tag that defuseUntrusted has not defused. */
export function holdsUntrustedTag(text: string): boolean {
  TAG_LOOKALIKE.lastIndex = 0;
  const found = TAG_LOOKALIKE.test(text);
  TAG_LOOKALIKE.lastIndex = 0;
  return found;
}

/**
 * Text from outside with every spelling of the wrapper's tag defused, so it cannot close the
 * wrapper early. The opening bracket becomes `‹`, one UTF-16 unit for another: offsets into the
 * text do not move.
 */
export function defuseUntrusted(text: string): string {
  return text.replace(TAG_LOOKALIKE, '‹$1');
}

/** Wraps text already defused, so a model reads it as data from outside, not as instructions. */
export function wrapUntrusted(source: string, defused: string): string {
  return `<${TAG} source="${source.replace(/"/g, '%22')}">\n${defused}\n</${TAG}>`;
}

export function markUntrusted(source: string, text: string): string {
  return wrapUntrusted(source, defuseUntrusted(text));
}
