import type { Server } from '@modelcontextprotocol/sdk/server/index.js';
import { EmptyResultSchema, LoggingLevelSchema, SetLevelRequestSchema, type LoggingLevel, type LoggingMessageNotification } from '@modelcontextprotocol/sdk/types.js';
import { errorMessage, neutralizeInvisible, redactText, truncateHeadTail } from '@bulkhead/core';
import type { Downstream } from '../downstream/downstream.js';
import type { RelayFactory, UpstreamExtra } from './context.js';

/** A log line is for a human's log view: a third-party server's longer text is cut, head and tail kept. */
const MAX_LOG_TEXT_BYTES = 16 * 1024;
/** A server that does not take a level soon is reported; the client's setLevel does not wait on it longer. */
const SET_LEVEL_WAIT_MS = 10_000;

type SetLevelHandler = (request: { method: 'logging/setLevel'; params: { level: LoggingLevel } }, extra: UpstreamExtra) => Promise<object>;

/**
 * The SDK's own logging/setLevel handler of a connection: it keeps the level that filters the
 * gateway's own log messages (sendLoggingMessage). The SDK offers no public way to add to it, so it
 * is taken from the handler map before the relay's handler replaces it, and called first.
 */
function sdkSetLevelHandler(server: Server): SetLevelHandler | undefined {
  const handlers = server['_requestHandlers'] as ReadonlyMap<string, SetLevelHandler> | undefined;
  return handlers?.get(SetLevelRequestSchema.shape.method.value);
}

const severity = (level: LoggingLevel) => LoggingLevelSchema.options.indexOf(level);

/**
 * A third-party server's text, for a human's log view: secrets redacted, invisible characters
 * written out, bounded. Not wrapped as untrusted content like a tool result: a log line is shown,
 * not put in a model's context, and the wrapper would be noise in every line.
 */
function cleanText(text: string): string {
  return neutralizeInvisible(redactText(truncateHeadTail(text, MAX_LOG_TEXT_BYTES).text));
}

/**
 * A third-party server's structured log data, passed as it is while its JSON is within the cap
 * of a log line; over it, its JSON as text, cleaned and cut like a text line (a 2 MiB object
 * would otherwise reach every client's log view whole).
 */
function boundedData(data: unknown): unknown {
  const json = JSON.stringify(data) ?? '';
  return Buffer.byteLength(json) <= MAX_LOG_TEXT_BYTES ? data : cleanText(json);
}

/**
 * logging/setLevel and log messages across the gateway. A client's level filters what it is sent
 * (the SDK's filter of each connection), and the most verbose level that any open connection
 * set is forwarded to every server that logs (one server serves every client), also to a
 * server that comes up later. A server's notifications/message reaches every connection whose
 * level lets it through and whose profile sees the server, its logger named `<ns>` or
 * `<ns>/<its logger>`; the profile is the one of the token the connection was opened with, so a
 * profile that hides a server never hears from it.
 */
export const loggingRelay: RelayFactory = (context) => {
  const levels = new WeakMap<Server, LoggingLevel>();
  const sees = (server: Server, namespace: string): boolean => context.accessOfConnection(server).namespaceVisible?.(namespace) ?? true;
  /** The level servers are asked for: the most verbose of those the open connections set. */
  const serverLevel = (): LoggingLevel | undefined => {
    const set = [...context.sessions].flatMap((server) => levels.get(server) ?? []);
    return set.length ? set.reduce((verbose, level) => (severity(level) < severity(verbose) ? level : verbose)) : undefined;
  };
  const forward = async (downstream: Downstream, level: LoggingLevel) => {
    if (!downstream.capabilities?.logging) return;
    const waitMs = Math.min(SET_LEVEL_WAIT_MS, context.config.call_timeout_ms);
    try {
      await downstream.request({ method: 'logging/setLevel', params: { level } }, EmptyResultSchema, { signal: AbortSignal.timeout(waitMs), timeoutMs: waitMs });
    } catch (error) {
      context.report(`${downstream.namespace} did not take logging/setLevel ${level}: ${errorMessage(error)}`);
    }
  };
  const relay = (downstream: Downstream, params: LoggingMessageNotification['params']) => {
    const trusted = context.builtins.has(downstream.namespace) || downstream.spec.trust.has('results');
    const logger = params.logger === undefined ? downstream.namespace : `${downstream.namespace}/${trusted ? params.logger : cleanText(params.logger)}`;
    const data = trusted ? params.data : typeof params.data === 'string' ? cleanText(params.data) : boundedData(params.data);
    for (const server of [...context.sessions].filter((session) => sees(session, downstream.namespace))) void server.sendLoggingMessage({ ...params, logger, data }, server.transport?.sessionId).catch(() => undefined);
  };
  for (const downstream of context.downstreams.values()) {
    downstream.listeners.notice.add((notice) => {
      if (notice.kind === 'log') relay(downstream, notice.params);
    });
    downstream.listeners.ready.add(() => {
      const level = serverLevel();
      if (level !== undefined) void forward(downstream, level);
    });
  }
  return {
    capabilities: { logging: {} },
    install(server) {
      const sdkHandler = sdkSetLevelHandler(server);
      server.setRequestHandler(SetLevelRequestSchema, async (request, extra) => {
        await sdkHandler?.(request, extra);
        levels.set(server, request.params.level);
        const level = serverLevel() ?? request.params.level;
        await Promise.all([...context.downstreams.values()].filter((downstream) => downstream.state === 'ready').map((downstream) => forward(downstream, level)));
        return {};
      });
    },
  };
};
