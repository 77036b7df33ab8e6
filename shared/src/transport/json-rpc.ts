import { JSONRPCMessageSchema, type JSONRPCMessage } from '@modelcontextprotocol/sdk/types.js';

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

/** zod's `.int()`: a safe integer. */
function isId(value: unknown): boolean {
  return typeof value === 'string' || Number.isSafeInteger(value);
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
