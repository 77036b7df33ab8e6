import { StdioServerTransport } from '@modelcontextprotocol/sdk/server/stdio.js';
import type { ToolServer } from '../kit/server.js';

/** Serves one client over stdin/stdout; resolves when the client goes away. */
export async function serveStdio(toolServer: ToolServer): Promise<void> {
  const transport = new StdioServerTransport();
  const closed = new Promise<void>((resolve) => {
    process.stdin.once('end', resolve);
    process.stdin.once('close', resolve);
    transport.onclose = resolve;
  });
  await toolServer.connect(transport);
  await closed;
}
