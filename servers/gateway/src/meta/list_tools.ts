import { z } from 'zod';
import { READ_ONLY_LOCAL } from '@bulkhead/core';
import { firstParagraph } from '../search/index.js';
import { defineMetaTool, flaggedField, flaggedLine, notesParagraph, quarantinedField, quarantinedFor, quarantineParagraph } from './meta-tool.js';

const PAGE = 50;

const input = z.strictObject({
  namespace: z.string().max(100).optional().describe('Only this namespace (fs, git, web, …)'),
  cursor: z.string().max(20).regex(/^\d+$/).optional().describe('The cursor the previous page gave, to read on'),
});

export const listTools = defineMetaTool({
  name: 'list_tools',
  title: 'Browse tools',
  description: 'Browse the tools you may use, by namespace, with a one-line description each; 50 per page with a cursor to read on.',
  input,
  annotations: READ_ONLY_LOCAL,
  stable: true,
  async run(args, ctx) {
    await ctx.firstStarts();
    const entries = ctx.catalog
      .entries()
      .filter((entry) => ctx.visible(entry) && (!args.namespace || entry.namespace === args.namespace))
      .sort((a, b) => (a.qualified < b.qualified ? -1 : 1));
    const start = Number(args.cursor ?? '0');
    const page = entries.slice(start, start + PAGE);
    const lines = page.map((entry) => {
      const treatment = ctx.treatment(entry);
      return `${entry.wire}${ctx.session.has(entry.qualified) ? ' [loaded]' : ''} — ${firstParagraph(entry.tool.description ?? '', 120).split('\n')[0]}${treatment ? `\n  treatment: ${treatment}` : ''}${flaggedLine(flaggedField(entry), '  ')}`;
    });
    const held = quarantinedFor(ctx, args.namespace);
    const next = start + PAGE < entries.length ? String(start + PAGE) : undefined;
    const namespaces = [...new Set(ctx.catalog.entries().filter(ctx.visible).map((e) => e.namespace))].sort();
    const footer = next ? `[${start + 1}-${start + page.length} of ${entries.length}; next: cursor=${next}]` : `[${entries.length} tools; namespaces: ${namespaces.join(', ')}]`;
    return {
      content: [{ type: 'text', text: `${lines.join('\n') || 'No tools.'}\n${footer}${quarantineParagraph(held)}${notesParagraph(ctx)}` }],
      structuredContent: { tools: page.map((entry) => ({ name: entry.wire, qualified: entry.qualified })), ...(next ? { nextCursor: next } : {}), ...quarantinedField(held) },
    };
  },
});
