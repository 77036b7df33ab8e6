import { z } from 'zod';
import { defineTool, type AnyToolDefinition } from '@bulkhead/core';
import type { FsWriteCapabilities } from '../context.js';
import { changeFile, changeOptions } from '../lib/change.js';
import { REWRITE_ANNOTATIONS } from '../lib/annotations.js';
import { dryRunPreview } from '../lib/preview.js';

const input = z.strictObject({
  path: z.string().max(65_536).describe('File to create or replace, relative to the first root'),
  content: z.string().max(2 ** 30).describe('The complete new content of the file'),
  ...changeOptions,
});

export const writeFile: AnyToolDefinition<FsWriteCapabilities> = defineTool<FsWriteCapabilities, typeof input>({
  name: 'write_file',
  title: 'Write a file',
  description:
    'Create a file or replace its whole content. Answers Created, Updated (with a unified diff) or "No change needed" when the content is already identical. Missing parent folders inside the roots are created. Writes are atomic (a temp file and a rename; the file mode is kept); a symlink is never followed. The content replaced goes to the trash first, and the reply gives its id (`bulkhead trash restore <id> --to PATH`). Use edit_file to change part of a file. dry_run shows the diff without writing; expected_sha256 refuses to overwrite a file that changed since you read it.',
  input,
  annotations: REWRITE_ANNOTATIONS,
  risk: 'medium',
  subjectArg: 'path',
  preview: (args, ctx) => dryRunPreview(writeFile, args, ctx),
  async run(args, ctx) {
    return changeFile(ctx, args, (current, shownAs) => {
      const bytes = Buffer.from(args.content, 'utf8');
      if (current.exists && current.bytes.equals(bytes)) return { kind: 'unchanged', why: `${shownAs} already has exactly this content` };
      const before = current.exists ? current.bytes.toString('utf8') : undefined;
      return { kind: 'write', bytes, before, after: args.content, summary: current.exists ? 'replaced' : 'new file' };
    });
  },
});
