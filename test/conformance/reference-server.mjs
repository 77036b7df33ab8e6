// The resources, prompts and completion part of the MCP conformance suite's reference server
// (examples/servers/typescript/everything-server.ts of github.com/modelcontextprotocol/conformance
// at v0.1.16, MIT, Anthropic PBC), ported to plain JavaScript on the SDK's low-level Server. The npm
// package ships only the suite's runner, not this server, and its scenarios ask for these names
// (test://static-text, test_simple_prompt, …), which @modelcontextprotocol/server-everything does
// not have. Same names, contents and capabilities as the original; its tools (it declares the tools
// capability and lists none), logging scenarios and SSE resumability are left out, as the gateway
// tests run only these scenarios.
//
// node reference-server.mjs stdio            serves one client on stdin/stdout
// node reference-server.mjs streamableHttp   serves /mcp on 127.0.0.1:$PORT (0: any free port),
//                                            printing `listening on http://127.0.0.1:<port>/mcp`
import { randomUUID } from 'node:crypto';
import { createServer } from 'node:http';
import { Server } from '@modelcontextprotocol/sdk/server/index.js';
import { StdioServerTransport } from '@modelcontextprotocol/sdk/server/stdio.js';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import {
  CompleteRequestSchema,
  GetPromptRequestSchema,
  ListPromptsRequestSchema,
  ListToolsRequestSchema,
  ListResourcesRequestSchema,
  ListResourceTemplatesRequestSchema,
  McpError,
  ErrorCode,
  ReadResourceRequestSchema,
  SetLevelRequestSchema,
  SubscribeRequestSchema,
  UnsubscribeRequestSchema,
  isInitializeRequest,
} from '@modelcontextprotocol/sdk/types.js';

// A 1x1 red PNG, as in the original.
const TEST_IMAGE_BASE64 = 'iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8DwHwAFBQIAX8jx0gAAAABJRU5ErkJggg==';

const RESOURCES = [
  { uri: 'test://static-text', name: 'static-text', title: 'Static Text Resource', description: 'A static text resource for testing', mimeType: 'text/plain', read: () => ({ text: 'This is the content of the static text resource.' }) },
  { uri: 'test://static-binary', name: 'static-binary', title: 'Static Binary Resource', description: 'A static binary resource (image) for testing', mimeType: 'image/png', read: () => ({ blob: TEST_IMAGE_BASE64 }) },
  { uri: 'test://watched-resource', name: 'watched-resource', title: 'Watched Resource', description: 'A resource that auto-updates every 3 seconds', mimeType: 'text/plain', read: () => ({ text: 'Watched resource content' }) },
];
const TEMPLATE = { uriTemplate: 'test://template/{id}/data', name: 'template', title: 'Resource Template', description: 'A resource template with parameter substitution', mimeType: 'application/json' };
const TEMPLATE_PATTERN = /^test:\/\/template\/([^/]+)\/data$/;

const PROMPTS = [
  { name: 'test_simple_prompt', title: 'Simple Test Prompt', description: 'A simple prompt without arguments', get: () => [{ role: 'user', content: { type: 'text', text: 'This is a simple prompt for testing.' } }] },
  {
    name: 'test_prompt_with_arguments',
    title: 'Prompt With Arguments',
    description: 'A prompt with required arguments',
    arguments: [
      { name: 'arg1', description: 'First test argument', required: true },
      { name: 'arg2', description: 'Second test argument', required: true },
    ],
    get: (args) => [{ role: 'user', content: { type: 'text', text: `Prompt with arguments: arg1='${args.arg1}', arg2='${args.arg2}'` } }],
  },
  {
    name: 'test_prompt_with_embedded_resource',
    title: 'Prompt With Embedded Resource',
    description: 'A prompt that includes an embedded resource',
    arguments: [{ name: 'resourceUri', description: 'URI of the resource to embed', required: true }],
    get: (args) => [
      { role: 'user', content: { type: 'resource', resource: { uri: args.resourceUri, mimeType: 'text/plain', text: 'Embedded resource content for testing.' } } },
      { role: 'user', content: { type: 'text', text: 'Please process the embedded resource above.' } },
    ],
  },
  {
    name: 'test_prompt_with_image',
    title: 'Prompt With Image',
    description: 'A prompt that includes image content',
    get: () => [
      { role: 'user', content: { type: 'image', data: TEST_IMAGE_BASE64, mimeType: 'image/png' } },
      { role: 'user', content: { type: 'text', text: 'Please analyze the image above.' } },
    ],
  },
];

function referenceServer() {
  const server = new Server(
    { name: 'mcp-conformance-test-server', version: '1.0.0' },
    { capabilities: { tools: { listChanged: true }, resources: { subscribe: true, listChanged: true }, prompts: { listChanged: true }, logging: {}, completions: {} } },
  );
  const subscriptions = new Set();
  const log = (data) => void server.sendLoggingMessage({ level: 'info', logger: 'conformance-test-server', data }).catch(() => undefined);

  server.setRequestHandler(ListToolsRequestSchema, async () => ({ tools: [] }));
  server.setRequestHandler(ListResourcesRequestSchema, async () => ({ resources: RESOURCES.map(({ read: _read, ...resource }) => resource) }));
  server.setRequestHandler(ListResourceTemplatesRequestSchema, async () => ({ resourceTemplates: [TEMPLATE] }));
  server.setRequestHandler(ReadResourceRequestSchema, async ({ params: { uri } }) => {
    const resource = RESOURCES.find((r) => r.uri === uri);
    if (resource) return { contents: [{ uri, mimeType: resource.mimeType, ...resource.read() }] };
    const id = TEMPLATE_PATTERN.exec(uri)?.[1];
    if (id !== undefined) return { contents: [{ uri, mimeType: 'application/json', text: JSON.stringify({ id, templateTest: true, data: `Data for ID: ${id}` }) }] };
    throw new McpError(ErrorCode.InvalidParams, `Resource ${uri} not found`);
  });
  server.setRequestHandler(SubscribeRequestSchema, async ({ params: { uri } }) => {
    subscriptions.add(uri);
    log(`Subscribed to resource: ${uri}`);
    return {};
  });
  server.setRequestHandler(UnsubscribeRequestSchema, async ({ params: { uri } }) => {
    subscriptions.delete(uri);
    log(`Unsubscribed from resource: ${uri}`);
    return {};
  });
  server.setRequestHandler(ListPromptsRequestSchema, async () => ({ prompts: PROMPTS.map(({ get: _get, ...prompt }) => prompt) }));
  server.setRequestHandler(GetPromptRequestSchema, async ({ params }) => {
    const prompt = PROMPTS.find((p) => p.name === params.name);
    if (!prompt) throw new McpError(ErrorCode.InvalidParams, `Prompt ${params.name} not found`);
    const missing = (prompt.arguments ?? []).filter((a) => a.required && params.arguments?.[a.name] === undefined).map((a) => a.name);
    if (missing.length > 0) throw new McpError(ErrorCode.InvalidParams, `Invalid arguments for prompt ${params.name}: missing ${missing.join(', ')}`);
    return { messages: prompt.get(params.arguments ?? {}) };
  });
  // As the original: the capability is declared and answered, with no suggestions.
  server.setRequestHandler(CompleteRequestSchema, async () => ({ completion: { values: [], total: 0, hasMore: false } }));
  server.setRequestHandler(SetLevelRequestSchema, async ({ params: { level } }) => {
    log(`Log level set to: ${level}`);
    return {};
  });
  return server;
}

async function serveHttp(port) {
  const sessions = new Map();
  const http = createServer(async (req, res) => {
    if (new URL(req.url ?? '/', 'http://127.0.0.1').pathname !== '/mcp') {
      res.writeHead(404).end();
      return;
    }
    const sessionId = req.headers['mcp-session-id'];
    let body;
    if (req.method === 'POST') {
      const chunks = [];
      for await (const chunk of req) chunks.push(chunk);
      body = JSON.parse(Buffer.concat(chunks).toString('utf8'));
    }
    let transport = typeof sessionId === 'string' ? sessions.get(sessionId) : undefined;
    if (!transport && sessionId === undefined && req.method === 'POST' && isInitializeRequest(body)) {
      const server = referenceServer();
      const fresh = new StreamableHTTPServerTransport({ sessionIdGenerator: () => randomUUID(), onsessioninitialized: (id) => sessions.set(id, fresh) });
      fresh.onclose = () => {
        if (fresh.sessionId) sessions.delete(fresh.sessionId);
        void server.close();
      };
      await server.connect(fresh);
      transport = fresh;
    }
    if (!transport) {
      res.writeHead(400, { 'content-type': 'application/json' }).end(JSON.stringify({ jsonrpc: '2.0', error: { code: -32000, message: 'Invalid or missing session ID' }, id: null }));
      return;
    }
    await transport.handleRequest(req, res, body);
  });
  http.listen(port, '127.0.0.1', () => console.log(`listening on http://127.0.0.1:${http.address().port}/mcp`));
}

const mode = process.argv[2];
if (mode === 'stdio') await referenceServer().connect(new StdioServerTransport());
else if (mode === 'streamableHttp') await serveHttp(Number(process.env.PORT ?? 0));
else {
  console.error('usage: reference-server.mjs stdio|streamableHttp');
  process.exit(2);
}
