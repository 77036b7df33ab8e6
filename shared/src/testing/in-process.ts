import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { InMemoryTransport } from '@modelcontextprotocol/sdk/inMemory.js';
import { ElicitRequestSchema, type ElicitResult } from '@modelcontextprotocol/sdk/types.js';
import type { ToolServer } from '../kit/server.js';

export interface InProcessOptions {
  /** When given, the client declares elicitation and answers with this function. */
  readonly elicit?: (message: string) => ElicitResult | Promise<ElicitResult>;
  readonly clientName?: string;
}

export interface ConnectedClient {
  readonly client: Client;
  close(): Promise<void>;
}

/** A real MCP client talking to the server through an in-memory transport pair. */
export async function connectInProcess(toolServer: ToolServer, options: InProcessOptions = {}): Promise<ConnectedClient> {
  const [clientSide, serverSide] = InMemoryTransport.createLinkedPair();
  const client = new Client(
    { name: options.clientName ?? 'bulkhead-test', version: '1.0.0' },
    { capabilities: options.elicit ? { elicitation: { form: {} } } : {} },
  );
  if (options.elicit) {
    const answer = options.elicit;
    client.setRequestHandler(ElicitRequestSchema, async (request) => answer(request.params.message));
  }
  await toolServer.connect(serverSide);
  await client.connect(clientSide);
  return { client, close: () => client.close() };
}
