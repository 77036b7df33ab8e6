const TAG = 'untrusted_external_content';

/**
 * Wraps fetched text so a model reads it as data from outside, not as instructions. The page
 * cannot close the wrapper early: any tag of the same name inside it is defused.
 */
export function markUntrusted(source: string, text: string): string {
  const defused = text.replace(new RegExp(`<(/?)${TAG}`, 'gi'), '‹$1' + TAG);
  return `<${TAG} source="${source.replace(/"/g, '%22')}">\n${defused}\n</${TAG}>`;
}
