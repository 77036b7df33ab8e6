import { z } from 'zod';
import { defineMetaTool, lookup } from './meta-tool.js';

const input = z.strictObject({
  name: z.string().min(1).max(200).describe('The tool to call, as fs__read_file or fs:read_file (find names with tool_search)'),
  arguments: z.record(z.string(), z.unknown()).default({}).describe("The tool's arguments, as its input schema describes them"),
});

export const callTool = defineMetaTool({
  name: 'call_tool',
  title: 'Call a tool',
  description:
    'Call any tool you may use, loaded or not, by name with its arguments. The arguments are checked against the tool\'s input schema first; the permission policy applies as for a direct call.',
  input,
  annotations: { readOnlyHint: false, destructiveHint: true, idempotentHint: false, openWorldHint: true },
  stable: true,
  async run(args, ctx) {
    await ctx.awaitTool(args.name);
    let entry = lookup(ctx, args.name);
    if (typeof entry === 'string' && ctx.catalog.quarantinedEntry(args.name)) entry = (await ctx.reviewQuarantined(args.name)) ?? entry;
    if (typeof entry === 'string') return { isError: true, content: [{ type: 'text', text: entry }] };
    ctx.session.touch(entry.qualified);
    return ctx.callDownstream(entry, args.arguments, ctx.state);
  },
});
