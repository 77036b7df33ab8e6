import type { Progress } from '@modelcontextprotocol/sdk/types.js';

/** A progress message is a line in a client's status bar: a server's longer one is cut. */
const MESSAGE_MAX_CHARS = 500;

/**
 * A downstream's progress notification as words for the client's request. The number is the
 * gateway's (one counter per client request, see CallProgress), so the server's own `progress` and
 * `total` survive as text: "3 of 10" beside its message, or in place of a message it did not send.
 */
export function relayedProgress(qualifiedName: string, update: Progress): string {
  const count = update.total !== undefined ? `${update.progress} of ${update.total}` : undefined;
  const message = update.message ? (count ? `${update.message} (${count})` : update.message) : `${qualifiedName}: ${count ?? update.progress}`;
  return message.length > MESSAGE_MAX_CHARS ? `${message.slice(0, MESSAGE_MAX_CHARS - 1)}…` : message;
}
