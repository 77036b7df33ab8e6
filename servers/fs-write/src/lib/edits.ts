import { ToolError } from '@bulkhead/core';
import type { Plan } from './change.js';
import type { CurrentFile } from './current.js';
import { LineIndex, nearestMatch, occurrences, replaceAt } from './match.js';
import { asEditText, decodeForEdit, encodeLike, type EditableText } from './text.js';

export interface Edit {
  readonly old_string: string;
  readonly new_string: string;
  readonly replace_all: boolean;
}

/** One exact-match edit applied to `text`, or a ToolError that tells the model how to retry. */
export function applyEdit(text: string, edit: Edit, shownAs: string): { readonly text: string; readonly replaced: number } {
  if (edit.old_string === '') throw new ToolError('old_string is empty; give the exact text to replace (use write_file to write a whole file)', 'invalid_edit');
  if (edit.old_string === edit.new_string) throw new ToolError('old_string and new_string are identical; the edit would change nothing', 'invalid_edit');
  const found = occurrences(text, edit.old_string);
  if (found.length === 0) {
    throw new ToolError(`old_string was not found in ${shownAs}. ${nearestMatch(text, edit.old_string)}`, 'no_match');
  }
  if (found.length > 1 && !edit.replace_all) {
    const index = new LineIndex(text);
    const lines = [...new Set(found.map((start) => index.lineOf(start)))];
    const shown = lines.slice(0, 20).join(', ');
    const more = lines.length > 20 ? ` and ${lines.length - 20} more` : '';
    throw new ToolError(
      `old_string occurs ${found.length} times in ${shownAs} (on line${lines.length > 1 ? 's' : ''} ${shown}${more}); include more surrounding text to pick one, or set replace_all: true to replace every one`,
      'ambiguous',
    );
  }
  return { text: replaceAt(text, found, edit.old_string.length, edit.new_string), replaced: found.length };
}

/** The file an edit starts from, decoded; edits never create files. */
export function editableFile(current: CurrentFile, shownAs: string): EditableText {
  if (!current.exists) throw new ToolError(`${shownAs} does not exist; use write_file to create it`, 'not_found');
  return decodeForEdit(current.bytes, shownAs);
}

/** `applyEdit` with the model's strings taken into the file's line-end convention first. */
export function applyTypedEdit(original: EditableText, text: string, edit: Edit, shownAs: string): { readonly text: string; readonly replaced: number } {
  return applyEdit(text, { old_string: asEditText(original, edit.old_string), new_string: asEditText(original, edit.new_string), replace_all: edit.replace_all }, shownAs);
}

/** Writing the edited text back the way the original was stored. */
export function editPlan(original: EditableText, text: string, summary: string, details?: readonly string[]): Plan {
  return { kind: 'write', bytes: encodeLike(original, text), before: original.text, after: text, summary, ...(details ? { details } : {}) };
}

export function replacementsLabel(count: number): string {
  return count === 1 ? '1 replacement' : `${count} replacements`;
}
