const TAG = 'untrusted_external_content';
const TAG_PATTERN = new RegExp(`<(/?)${TAG}`, 'gi');

/**
 * Text from outside with every tag of the wrapper's name defused, so it cannot close the wrapper
 * early. `<` becomes `‹`, one UTF-16 unit for another: offsets into the text do not move.
 */
export function defuseUntrusted(text: string): string {
  return text.replace(TAG_PATTERN, '‹$1' + TAG);
}

/** Wraps text already defused, so a model reads it as data from outside, not as instructions. */
export function wrapUntrusted(source: string, defused: string): string {
  return `<${TAG} source="${source.replace(/"/g, '%22')}">\n${defused}\n</${TAG}>`;
}

export function markUntrusted(source: string, text: string): string {
  return wrapUntrusted(source, defuseUntrusted(text));
}
