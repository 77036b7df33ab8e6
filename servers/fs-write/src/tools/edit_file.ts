import { z } from 'zod';
import { defineTool, type AnyToolDefinition } from '@bulkhead/core';
import type { FsWriteCapabilities } from '../context.js';
import { EDIT_ANNOTATIONS } from '../lib/annotations.js';
import { changeFile, changeOptions } from '../lib/change.js';
import { applyTypedEdit, editableFile, editPlan, replacementsLabel } from '../lib/edits.js';
import { dryRunPreview } from '../lib/preview.js';

const input = z.strictObject({
  path: z.string().max(65_536).describe('File to edit, relative to the first root'),
  old_string: z.string().max(2 ** 30).describe('The exact text to replace, as it appears in the file (including indentation)'),
  new_string: z.string().max(2 ** 30).describe('The text to put in its place (taken literally: $ and \\ are not special)'),
  replace_all: z.boolean().default(false).describe('Replace every occurrence; without it old_string must occur exactly once'),
  ...changeOptions,
});

export const editFile: AnyToolDefinition<FsWriteCapabilities> = defineTool<FsWriteCapabilities, typeof input>({
  name: 'edit_file',
  title: 'Edit a file',
  description:
    'Replace exact text in a file: old_string must occur exactly once unless replace_all is true. When it is not found, the error shows the closest text with line numbers and the character differences; when it occurs several times, the error gives each line. Line endings (CRLF stays CRLF) and a UTF-8 BOM are kept; binary and non-UTF-8 files are refused. Returns a unified diff; the previous version goes to the trash, and the reply gives its id. dry_run shows the diff without writing; expected_sha256 refuses to edit a file that changed since you read it.',
  input,
  annotations: EDIT_ANNOTATIONS,
  risk: 'medium',
  subjectArg: 'path',
  preview: (args, ctx) => dryRunPreview(editFile, args, ctx),
  async run(args, ctx) {
    return changeFile(ctx, args, (current, shownAs) => {
      const original = editableFile(current, shownAs);
      const { text, replaced } = applyTypedEdit(original, original.text, args, shownAs);
      return editPlan(original, text, replacementsLabel(replaced));
    });
  },
});
