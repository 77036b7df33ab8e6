import { JSONRPCMessageSchema, type JSONRPCMessage } from '@modelcontextprotocol/sdk/types.js';
import { scanTopLevelId, type ScannedId } from './json-rpc-id.js';

type JsonObject = Record<string, unknown>;

const REQUEST_KEYS: ReadonlySet<string> = new Set(['jsonrpc', 'id', 'method', 'params']);
const NOTIFICATION_KEYS: ReadonlySet<string> = new Set(['jsonrpc', 'method', 'params']);
const RESULT_KEYS: ReadonlySet<string> = new Set(['jsonrpc', 'id', 'result']);
const ERROR_KEYS: ReadonlySet<string> = new Set(['jsonrpc', 'id', 'error']);
const ERROR_BODY_KEYS: ReadonlySet<string> = new Set(['code', 'message', 'data']);

function isObject(value: unknown): value is JsonObject {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function keysWithin(value: JsonObject, allowed: ReadonlySet<string>): boolean {
  for (const key in value) if (!allowed.has(key)) return false;
  return true;
}

/** zod's `.int()`: a safe integer; -0 too, which this fast path leaves to `readJsonRpcMessage`'s check. */
function isId(value: unknown): boolean {
  return typeof value === 'string' || (Number.isSafeInteger(value) && !Object.is(value, -0));
}

/**
 * An object the SDK's schema keeps as it is (a loose object): zod drops an own `__proto__` key
 * from its copy, so such an object is left to zod.
 */
function isLoose(value: unknown): value is JsonObject {
  return isObject(value) && !Object.prototype.hasOwnProperty.call(value, '__proto__');
}

/** `_meta` of params or a result: absent, or a progress token at most (a related task is left to zod, which strips it). */
function plainMeta(holder: JsonObject): boolean {
  if (!('_meta' in holder)) return true;
  const meta = holder['_meta'];
  if (!isLoose(meta) || 'io.modelcontextprotocol/related-task' in meta) return false;
  return !('progressToken' in meta) || isId(meta['progressToken']);
}

function plainParams(message: JsonObject): boolean {
  if (!('params' in message)) return true;
  const params = message['params'];
  return isLoose(params) && plainMeta(params);
}

/**
 * True when `value` is a message JSONRPCMessageSchema accepts and would copy unchanged: a request,
 * notification, result or error of the everyday shape. Everything else goes to the schema itself.
 */
function isPlainMessage(value: unknown): value is JSONRPCMessage {
  if (!isObject(value) || value['jsonrpc'] !== '2.0') return false;
  if ('method' in value) {
    if (typeof value['method'] !== 'string' || !plainParams(value)) return false;
    return 'id' in value ? isId(value['id']) && keysWithin(value, REQUEST_KEYS) : keysWithin(value, NOTIFICATION_KEYS);
  }
  if ('result' in value) {
    const result = value['result'];
    return isId(value['id']) && keysWithin(value, RESULT_KEYS) && isLoose(result) && plainMeta(result);
  }
  if ('error' in value) {
    const error = value['error'];
    if (('id' in value && !isId(value['id'])) || !keysWithin(value, ERROR_KEYS) || !isObject(error)) return false;
    return keysWithin(error, ERROR_BODY_KEYS) && Number.isSafeInteger(error['code']) && typeof error['message'] === 'string';
  }
  return false;
}

/**
 * One line of a stdio stream as a JSON-RPC message, exactly as the SDK's `deserializeMessage`
 * reads it (JSON.parse, then JSONRPCMessageSchema), with the same errors for a malformed line.
 * The everyday shapes are recognised by hand first: the schema's union parse was a measurable
 * part of every proxied call, twice (the request in, the downstream's reply).
 */
export function parseJsonRpcLine(line: string): JSONRPCMessage {
  const value: unknown = JSON.parse(line);
  return isPlainMessage(value) ? value : JSONRPCMessageSchema.parse(value);
}

/** Parses each line and hands on the messages; a malformed line is reported and skipped, as the SDK does. */
export function deliverJsonRpcLines(lines: readonly string[], onmessage: ((message: JSONRPCMessage) => void) | undefined, onerror: ((error: Error) => void) | undefined): void {
  for (const line of lines) {
    let message: JSONRPCMessage;
    try {
      message = parseJsonRpcLine(line);
    } catch (error) {
      onerror?.(error as Error);
      continue;
    }
    onmessage?.(message);
  }
}

export const PARSE_ERROR = -32700;
export const INVALID_REQUEST = -32600;

/** What a server makes of one message it was sent. */
export type InboundMessage =
  | { readonly kind: 'message'; readonly message: JSONRPCMessage }
  /**
   * Not a message the server can process. `reply` is the JSON-RPC error to send (its JSON text,
   * so that an id is echoed exactly as it was written), absent for what JSON-RPC does not answer:
   * a notification or a response.
   */
  | { readonly kind: 'invalid'; readonly problem: string; readonly reply?: string };

/** A JSON-RPC error response as JSON text, with the id as the client wrote it (or null). */
export function errorReply(scanned: ScannedId, code: number, message: string): string {
  const id = scanned.kind === 'echoable' ? scanned.raw : 'null';
  return `{"jsonrpc":"2.0","id":${id},"error":${JSON.stringify({ code, message })}}`;
}

const ID_RULE = 'the id must be a string or an integer from -(2^53-1) to 2^53-1 (not -0)';

/** Why a value the schema (or the -0 check) refused is not a request, in the words of JSON-RPC. */
function whyInvalid(value: unknown): string {
  if (Array.isArray(value)) return 'batches are not supported: send one JSON-RPC message at a time (MCP removed batching in revision 2025-06-18)';
  if (!isObject(value)) return `a JSON-RPC message is an object, not ${value === null ? 'null' : typeof value}`;
  if (value['jsonrpc'] !== '2.0') return '"jsonrpc" must be "2.0"';
  if ('id' in value && !isId(value['id'])) return ID_RULE;
  if (!('method' in value) && ('result' in value || 'error' in value)) return `not a valid response: ${schemaIssue(value)}`;
  if (!('method' in value)) return 'a request needs a "method"';
  if (typeof value['method'] !== 'string') return '"method" must be a string';
  if ('params' in value && !isObject(value['params'])) return '"params" must be an object when present';
  const unknown = Object.keys(value).find((key) => !REQUEST_KEYS.has(key));
  if (unknown !== undefined) return `unknown key ${JSON.stringify(unknown)} (a request has jsonrpc, id, method and params)`;
  return schemaIssue(value);
}

/** The first thing the SDK's schema finds wrong with a message. */
function schemaIssue(value: unknown): string {
  const issue = JSONRPCMessageSchema.safeParse(value).error?.issues[0];
  return issue ? `${issue.path.join('.') || 'message'}: ${issue.message}` : 'not a JSON-RPC message';
}

/** What JSON-RPC says nobody answers: a notification (a method, no id) and a response (a result or an error, no method). */
function isUnanswered(value: unknown): boolean {
  if (!isObject(value)) return false;
  const isNotification = 'method' in value && !('id' in value);
  const isResponse = !('method' in value) && ('result' in value || 'error' in value);
  return isNotification || isResponse;
}

/**
 * One message a client sent (a stdio line, an HTTP body), as a server reads it: the message, or
 * the error that answers it. The everyday shapes take parseJsonRpcLine's fast path; only an
 * invalid message costs more (the schema's own verdict, then a scan of the text for its id).
 */
export function readJsonRpcMessage(text: string): InboundMessage {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (error) {
    return { kind: 'invalid', problem: `Parse error: ${(error as Error).message}`, reply: errorReply({ kind: 'none' }, PARSE_ERROR, 'Parse error: the message is not valid JSON') };
  }
  if (isPlainMessage(value)) return { kind: 'message', message: value };
  if (!Array.isArray(value)) {
    const parsed = JSONRPCMessageSchema.safeParse(value);
    if (parsed.success && !('id' in parsed.data && Object.is(parsed.data.id, -0))) return { kind: 'message', message: parsed.data };
  }
  const problem = `Invalid Request: ${whyInvalid(value)}`;
  if (isUnanswered(value)) return { kind: 'invalid', problem };
  return { kind: 'invalid', problem, reply: errorReply(isObject(value) ? scanTopLevelId(text) : { kind: 'none' }, INVALID_REQUEST, problem) };
}

/**
 * The server side of deliverJsonRpcLines: every line that is not a message is reported, and
 * answered when JSON-RPC answers it (a parse error, an invalid request), so no client waits for
 * its own timeout. Blank lines are skipped.
 */
export function answerJsonRpcLines(
  lines: readonly string[],
  onmessage: ((message: JSONRPCMessage) => void) | undefined,
  refuse: (problem: string, reply: string | undefined) => void,
): void {
  for (const line of lines) {
    // A regex anchored at the start gives up at the first character of a message: no copy of the line.
    if (/^\s*$/.test(line)) continue;
    const inbound = readJsonRpcMessage(line);
    if (inbound.kind === 'message') onmessage?.(inbound.message);
    else refuse(inbound.problem, inbound.reply);
  }
}
