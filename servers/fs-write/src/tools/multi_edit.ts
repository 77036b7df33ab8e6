import { z } from 'zod';
import { defineTool, errorMessage, ToolError, type AnyToolDefinition } from '@bulkhead/core';
import type { FsWriteCapabilities } from '../context.js';
import { EDIT_ANNOTATIONS } from '../lib/annotations.js';
import { changeFile, changeOptions } from '../lib/change.js';
import { applyTypedEdit, editableFile, editPlan, replacementsLabel } from '../lib/edits.js';
import { dryRunPreview } from '../lib/preview.js';

const MAX_EDITS = 200;

const input = z.strictObject({
  path: z.string().max(65_536).describe('File to edit, relative to the first root'),
  edits: z
    .array(
      z.strictObject({
        old_string: z.string().max(2 ** 30).describe('The exact text to replace, in the content as the earlier edits left it'),
        new_string: z.string().max(2 ** 30).describe('The text to put in its place (taken literally)'),
        replace_all: z.boolean().default(false).describe('Replace every occurrence'),
      }),
    )
    .min(1)
    .max(MAX_EDITS)
    .describe(`Edits applied in order, each to the result of the ones before (at most ${MAX_EDITS})`),
  ...changeOptions,
});

export const multiEdit: AnyToolDefinition<FsWriteCapabilities> = defineTool<FsWriteCapabilities, typeof input>({
  name: 'multi_edit',
  title: 'Edit a file in several places',
  description:
    'Apply several exact-match edits to one file in order, each to the content the earlier ones produced. An edit that fails (not found, or ambiguous without replace_all) is reported and skipped; the others still apply. The file is written once, atomically, if at least one edit applied; the previous version goes to the trash, and the reply gives its id. The result lists each edit as applied or failed with the reason, then the unified diff. Same rules as edit_file for line endings, BOM, binary files, dry_run and expected_sha256.',
  input,
  annotations: EDIT_ANNOTATIONS,
  risk: 'medium',
  subjectArg: 'path',
  preview: (args, ctx) => dryRunPreview(multiEdit, args, ctx),
  async run(args, ctx) {
    return changeFile(ctx, args, (current, shownAs) => {
      const original = editableFile(current, shownAs);
      let text = original.text;
      const outcomes: string[] = [];
      let applied = 0;
      args.edits.forEach((edit, index) => {
        try {
          const result = applyTypedEdit(original, text, edit, shownAs);
          text = result.text;
          applied++;
          outcomes.push(`edit ${index + 1}: applied (${replacementsLabel(result.replaced)})`);
        } catch (error) {
          if (!(error instanceof ToolError)) throw error;
          outcomes.push(`edit ${index + 1}: failed: ${errorMessage(error)}`);
        }
      });
      const failed = args.edits.length - applied;
      if (applied === 0) throw new ToolError(`none of the ${args.edits.length} edits applied to ${shownAs}; nothing was written.\n${outcomes.join('\n')}`, 'no_match');
      const summary = `${applied} of ${args.edits.length} edits applied${failed > 0 ? `, ${failed} failed` : ''}`;
      return editPlan(original, text, summary, outcomes);
    });
  },
});
