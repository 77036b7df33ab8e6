import { z } from 'zod';
import { READ_ONLY_LOCAL } from '@bulkhead/core';
import { firstParagraph, paramSummary, parseSelect } from '../search/index.js';
import { defineMetaTool, flaggedField, flaggedLine, lookup, notesParagraph, quarantinedField, quarantinedFor, quarantineParagraph, unavailableField } from './meta-tool.js';

const input = z.strictObject({
  query: z.string().min(1).max(1000).describe('What you want to do, in words ("read a file", "fetch a web page"), a tool name, or select:name1,name2 for exact tools with full schemas'),
  limit: z.number().int().min(1).max(50).default(5).describe('Most results to return (default 5)'),
});

export const toolSearch = defineMetaTool({
  name: 'tool_search',
  title: 'Search tools',
  description:
    'Find tools by describing what you want to do. Returns ranked tools with name, description, parameters and score. Use select:a,b to get exactly those tools with their full input schemas. Call a found tool with call_tool (or load it with load_tools).',
  input,
  annotations: READ_ONLY_LOCAL,
  stable: true,
  async run(args, ctx) {
    await ctx.firstStarts();
    const selected = parseSelect(args.query);
    if (selected) {
      await Promise.all(selected.map((name) => ctx.awaitTool(name)));
      const found = selected.map((name) => lookup(ctx, name));
      const tools = found
        .filter((entry) => typeof entry !== 'string')
        .map((entry) => {
          const treatment = ctx.treatment(entry);
          return { name: entry.wire, qualified: entry.qualified, description: entry.tool.description ?? '', inputSchema: entry.tool.inputSchema, ...(treatment ? { treatment } : {}), ...flaggedField(entry) };
        });
      const missing = found.filter((entry): entry is string => typeof entry === 'string');
      const text = [
        ...tools.map((tool) => `${tool.name} (${tool.qualified})\n${tool.description}\ninputSchema: ${JSON.stringify(tool.inputSchema)}${tool.treatment ? `\ntreatment: ${tool.treatment}` : ''}${flaggedLine(tool, '')}`),
        ...missing,
      ].join('\n\n');
      return { content: [{ type: 'text', text: `${text || 'No tools selected.'}${notesParagraph(ctx)}` }], structuredContent: { results: tools, ...unavailableField(ctx) } };
    }
    const hits = ctx.catalog.search(args.query, args.limit, ctx.visible);
    const held = quarantinedFor(ctx);
    if (hits.length === 0) {
      return {
        content: [{ type: 'text', text: `No tools match ${JSON.stringify(args.query)}. Try other words, or list_tools to browse by namespace.${quarantineParagraph(held)}${notesParagraph(ctx)}` }],
        structuredContent: { results: [], ...quarantinedField(held), ...unavailableField(ctx) },
      };
    }
    const results = hits.map(({ entry, score }) => {
      const treatment = ctx.treatment(entry);
      return {
        name: entry.wire,
        qualified: entry.qualified,
        description: firstParagraph(entry.tool.description ?? ''),
        parameters: paramSummary(entry.doc),
        score: Math.round(score * 1000) / 1000,
        ...(treatment ? { treatment } : {}),
        ...flaggedField(entry),
      };
    });
    const text = results
      .map((r, i) => `${i + 1}. ${r.name} (score ${r.score})\n   ${r.description.replace(/\n/g, ' ')}\n   parameters: ${r.parameters}${r.treatment ? `\n   treatment: ${r.treatment}` : ''}${flaggedLine(r, '   ')}`)
      .join('\n');
    return {
      content: [{ type: 'text', text: `${text}\n\nCall one with call_tool {name, arguments}.${quarantineParagraph(held)}${notesParagraph(ctx)}` }],
      structuredContent: { results, ...quarantinedField(held), ...unavailableField(ctx) },
    };
  },
});
