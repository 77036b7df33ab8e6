import { z } from 'zod';
import { defineTool, READ_ONLY_LOCAL, formatBytes, imageReply, numberedLines, openConfinedFile, textName, textReply, ToolError } from '@bulkhead/core';
import type { FsCapabilities } from '../context.js';
import { SNIFF_BYTES, sniff } from '../lib/sniff.js';
import { readTail, readWindow, type Window } from '../lib/lines.js';

const input = z.strictObject({
  path: z.string().max(65_536).describe('File to read: relative to the first root, or absolute inside a root'),
  offset: z
    .number()
    .int()
    .refine((n) => n !== 0, 'offset counts from 1; use a negative number to count from the end')
    .optional()
    .describe('First line to show, counting from 1; a negative number counts from the end (-100 shows the last 100 lines)'),
  limit: z.number().int().min(1).max(100_000).optional().describe('How many lines to show (default 2000)'),
});

function footer(window: Window, offset: number, limit: number, size: number): string {
  const { lines, total } = window;
  if (lines.length === 0) {
    if (window.fromEnd || offset < 0) return '[the file is empty]';
    return total !== undefined ? `[the file has ${total} lines; offset ${offset} is past the end]` : '[offset is past the end of the file]';
  }
  const first = lines[0]!.number;
  const last = lines.at(-1)!.number;
  const cut = window.cutByBytes ? ' (stopped at the byte cap)' : '';
  if (window.fromEnd) {
    const uncounted = 'the total line count is not computed for files this large';
    if (last !== -1) return `[lines ${first} to ${last} from the end of a ${formatBytes(size)} file${cut}; ${uncounted}; next: offset=${last + 1}]`;
    const earlier = first - limit;
    return `[the last ${-first} lines of a ${formatBytes(size)} file; ${uncounted}; earlier lines: offset=${earlier} limit=${limit}]`;
  }
  const range = `lines ${first}-${last}${total !== undefined ? ` of ${total}` : ''}`;
  if (total !== undefined && last >= total) return lines.length < (total ?? 0) || first > 1 ? `[${range}${cut}; end of file]` : '';
  return `[${range}${cut}; next: offset=${last + 1}${total === undefined ? `; file is ${formatBytes(size)}` : ''}]`;
}

export const readFile = defineTool<FsCapabilities, typeof input>({
  name: 'read_file',
  title: 'Read file',
  description:
    'Read a text file as numbered lines (like cat -n): 2000 lines from offset by default, at most 256 KiB per call, long lines cut with a marker, and a footer that says how to read on. A negative offset reads from the end (offset=-100 is the last 100 lines). Images (PNG, JPEG, GIF, WebP up to 5 MiB) come back as images; other binary files get a marker with size and type.',
  input,
  annotations: READ_ONLY_LOCAL,
  risk: 'low',
  subjectArg: 'path',
  async run(args, ctx) {
    const confined = await ctx.paths.confine(args.path, 'read');
    const shown = textName(ctx.paths.display(confined));
    const opened = await openConfinedFile(ctx.paths, confined, shown);
    try {
      const { handle, stat } = opened;
      // A second name (hard link) of a deny_read file is that file: refused the same way.
      const denial = stat.nlink > 1 ? await ctx.denyInodes.denial(stat) : undefined;
      if (denial !== undefined) throw new ToolError(`${shown} cannot be read: ${denial}`, 'protected');
      if (stat.size === 0) return textReply(`[${shown} is empty]`);
      const head = Buffer.alloc(Math.min(SNIFF_BYTES, stat.size));
      await handle.read(head, 0, head.length, 0);
      const kind = sniff(head);
      if (kind.kind === 'image') {
        if (stat.size > ctx.limits.image_max_bytes) {
          return textReply(`[image file ${shown}: ${kind.mimeType}, ${formatBytes(stat.size)}; larger than the ${formatBytes(ctx.limits.image_max_bytes)} image limit, so it is not shown]`);
        }
        const data = await handle.readFile();
        return imageReply(data, kind.mimeType, `[image ${shown}: ${kind.mimeType}, ${formatBytes(stat.size)}]`);
      }
      if (kind.kind === 'binary') {
        return textReply(`[binary file ${shown}: ${formatBytes(stat.size)}, detected type: ${kind.type}; its bytes are not shown]`);
      }
      const limit = args.limit ?? ctx.limits.read_max_lines;
      const common = {
        limit,
        maxBytes: ctx.limits.read_max_bytes,
        maxLineChars: ctx.limits.line_max_chars,
        signal: ctx.signal,
        onProgress: (scanned: number, total: number) => ctx.progress(`scanning ${shown} for line ${args.offset ?? 1} (${formatBytes(scanned)} of ${formatBytes(total)})`),
      };
      const offset = args.offset ?? 1;
      const countTotal = stat.size <= ctx.limits.count_lines_max_bytes;
      const window =
        offset < 0
          ? await readTail(handle, stat, -offset, { ...common, countTotal })
          : await readWindow(handle, stat, { ...common, offset, countTotal });
      if (window.lines.length === 0 && offset > 1 && window.total !== undefined) {
        throw new ToolError(`${shown} has ${window.total} lines; offset ${offset} is past the end (use offset=1, or a negative offset to read from the end)`, 'out_of_range');
      }
      const body = numberedLines(window.lines);
      const tail = footer(window, offset, limit, stat.size);
      return textReply(tail ? `${body}\n${tail}` : body);
    } finally {
      await opened.handle.close();
    }
  },
});
