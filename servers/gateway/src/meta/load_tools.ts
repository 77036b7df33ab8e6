import { z } from 'zod';
import { defineMetaTool, lookup } from './meta-tool.js';

const input = z.strictObject({
  names: z.array(z.string().min(1).max(200)).min(1).max(50).describe('Tools to bind for the rest of the session, as fs__read_file or fs:read_file'),
});

export const loadTools = defineMetaTool({
  name: 'load_tools',
  title: 'Load tools',
  description: 'Bind tools so they can be called directly for the rest of the session. Past the limit of active tools, the least recently used are unloaded.',
  input,
  annotations: { readOnlyHint: true, destructiveHint: false, idempotentHint: true, openWorldHint: false },
  stable: false,
  async run(args, ctx) {
    await Promise.all(args.names.map((name) => ctx.awaitTool(name)));
    const found = args.names.map((name) => lookup(ctx, name));
    const entries = found.filter((entry) => typeof entry !== 'string');
    const problems = found.filter((entry): entry is string => typeof entry === 'string');
    const evicted = ctx.session.load(entries.map((entry) => entry.qualified));
    if (entries.length > 0) await ctx.listChanged();
    const lines = [
      ...(entries.length ? [`Loaded: ${entries.map((e) => e.wire).join(', ')}`] : []),
      ...(evicted.length ? [`Unloaded to stay within the active limit: ${evicted.join(', ')}`] : []),
      ...problems,
    ];
    return { isError: entries.length === 0, content: [{ type: 'text', text: lines.join('\n') }] };
  },
});
