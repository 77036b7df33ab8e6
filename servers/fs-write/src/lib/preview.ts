import type { AnyToolDefinition, ToolContext } from '@bulkhead/core';
import type { FsWriteCapabilities } from '../context.js';

/**
 * The approval prompt's preview of an fs_write call: the tool's own dry run (a diff, or what would
 * be created, moved or deleted), which reads and writes nothing but the checks.
 */
export async function dryRunPreview(tool: AnyToolDefinition<FsWriteCapabilities>, args: Record<string, unknown>, ctx: ToolContext<FsWriteCapabilities>): Promise<string> {
  const reply = await tool.run({ ...args, dry_run: true }, ctx);
  return reply.content.flatMap((block) => (block.type === 'text' ? [block.text] : [])).join('\n');
}
