import type { FetchLike } from '@modelcontextprotocol/sdk/shared/transport.js';

/** What the gateway takes from an HTTP downstream, whatever it sends. */
export interface ReplyLimits {
  /**
   * Decoded bytes (after any Content-Encoding is undone) of one JSON reply, of one event of an
   * event stream, and of one event stream in all (a POST's streamed reply or the standalone GET
   * stream): memory stays bounded however well a reply compresses or however long a stream runs.
   */
  readonly maxBytes: number;
  /** From sending a request to the reply's status line and headers. */
  readonly firstByteMs: number;
  /** Where firstByteMs comes from, for the message. */
  readonly firstByteSetting: string;
}

function mib(bytes: number): string {
  return `${Math.round((bytes / (1024 * 1024)) * 10) / 10} MiB`;
}

/** Bodies that may not carry content; a Response for them cannot be rebuilt with one. */
const NULL_BODY_STATUSES = new Set([101, 103, 204, 205, 304]);

/** The last index in `chunk` just past an empty line (two line ends in a row: LF LF, LF CR, CR CR), or -1. */
function lastEventBoundary(chunk: Uint8Array, previousByte: number): number {
  for (let i = chunk.length - 1; i >= 0; i--) {
    const byte = chunk[i]!;
    if (byte !== 0x0a && byte !== 0x0d) continue;
    const before = i > 0 ? chunk[i - 1]! : previousByte;
    if (before === 0x0a || (before === 0x0d && byte === 0x0d)) return i + 1;
  }
  return -1;
}

function bodyCounter(limits: ReplyLimits, onBreach: (what: string) => void): TransformStream<Uint8Array, Uint8Array> {
  let total = 0;
  return new TransformStream({
    transform(chunk, controller) {
      total += chunk.length;
      if (total > limits.maxBytes) {
        const what = `sent a reply larger than ${mib(limits.maxBytes)} after decompression, the gateway's limit`;
        onBreach(what);
        return controller.error(new Error(`it ${what}`));
      }
      controller.enqueue(chunk);
    },
  });
}

function eventStreamCounter(limits: ReplyLimits, onBreach: (what: string) => void): TransformStream<Uint8Array, Uint8Array> {
  let total = 0;
  let sinceBoundary = 0;
  let previousByte = 0;
  return new TransformStream({
    transform(chunk, controller) {
      total += chunk.length;
      const boundary = lastEventBoundary(chunk, previousByte);
      sinceBoundary = boundary < 0 ? sinceBoundary + chunk.length : chunk.length - boundary;
      if (chunk.length > 0) previousByte = chunk[chunk.length - 1]!;
      const what =
        sinceBoundary > limits.maxBytes
          ? `sent an event larger than ${mib(limits.maxBytes)} on its event stream, the gateway's limit for one message`
          : total > limits.maxBytes
            ? `sent more than ${mib(limits.maxBytes)} on one event stream, the gateway's limit for a stream`
            : undefined;
      if (what) {
        onBreach(what);
        return controller.error(new Error(`it ${what}`));
      }
      controller.enqueue(chunk);
    },
  });
}

/**
 * A fetch for the SDK's Streamable HTTP client that holds every reply to `limits`. A reply that
 * breaks one is cut (its stream errors, so the SDK stops reading) and `onBreach` is told why, in
 * words that follow the server's name; the caller disconnects the server.
 */
export function boundedFetch(limits: ReplyLimits, onBreach: (what: string) => void, base: FetchLike = fetch): FetchLike {
  return async (url, init) => {
    const firstByte = new AbortController();
    const signal = init?.signal ? AbortSignal.any([init.signal, firstByte.signal]) : firstByte.signal;
    const timer = setTimeout(() => {
      const what = `did not begin its reply within ${limits.firstByteMs / 1000} s (${limits.firstByteSetting})`;
      onBreach(what);
      firstByte.abort(new Error(`it ${what}`));
    }, limits.firstByteMs);
    timer.unref();
    let response: Response;
    try {
      response = await base(url, { ...init, signal });
    } finally {
      clearTimeout(timer);
    }
    if (!response.body || NULL_BODY_STATUSES.has(response.status)) return response;
    const streamed = (response.headers.get('content-type') ?? '').toLowerCase().includes('text/event-stream');
    const counter = streamed ? eventStreamCounter(limits, onBreach) : bodyCounter(limits, onBreach);
    return new Response(response.body.pipeThrough(counter), { status: response.status, statusText: response.statusText, headers: response.headers });
  };
}
