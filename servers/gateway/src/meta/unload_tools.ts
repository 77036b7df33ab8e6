import { z } from 'zod';
import { qualifiedForm } from '@bulkhead/core';
import { defineMetaTool } from './meta-tool.js';

const input = z.strictObject({
  names: z.array(z.string().min(1).max(200)).min(1).max(200).describe('Loaded tools to unbind, as fs__read_file or fs:read_file'),
});

export const unloadTools = defineMetaTool({
  name: 'unload_tools',
  title: 'Unload tools',
  description: 'Unbind loaded tools to free context. They stay searchable and callable through call_tool.',
  input,
  annotations: { readOnlyHint: true, destructiveHint: false, idempotentHint: true, openWorldHint: false },
  stable: false,
  async run(args, ctx) {
    const qualified = args.names.map((name) => ctx.catalog.get(name)?.qualified ?? qualifiedForm(name));
    const removed = ctx.session.unload(qualified);
    if (removed.length > 0) await ctx.listChanged();
    return { content: [{ type: 'text', text: removed.length ? `Unloaded: ${removed.join(', ')}` : 'None of those tools was loaded.' }] };
  },
});
