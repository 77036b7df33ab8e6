import { closeSync, constants, fstatSync, openSync, readSync } from 'node:fs';
import { ToolError } from '@bulkhead/core';
import { completeCharactersEnd, leadingContinuationBytes } from './utf8.js';

export interface LogPage {
  readonly text: string;
  /** Where the text starts (moved past the rest of a character when asked to start inside one). */
  readonly offset: number;
  /** Where to read on; equals the end of the text. */
  readonly end: number;
  /** Bytes in the log file at the time of the read. */
  readonly size: number;
}

/**
 * Reads at most `limit` bytes of a log from `offset`, cut on character boundaries. Only the page is
 * read, never the whole file, so a large log costs no more memory than a small one. `complete`
 * says the log is closed: until then even its current end may split a character.
 */
export function readLogPage(path: string, offset: number, limit: number, complete: boolean): LogPage {
  const fd = openSync(path, constants.O_RDONLY | constants.O_NOFOLLOW);
  try {
    const size = fstatSync(fd).size;
    if (offset > size) {
      throw new ToolError(`offset ${offset} is past the end of the log (${size} bytes); read from an offset task_output returned`, 'bad_argument');
    }
    const buffer = Buffer.alloc(Math.min(limit, size - offset));
    let filled = 0;
    while (filled < buffer.length) {
      const read = readSync(fd, buffer, filled, buffer.length - filled, offset + filled);
      if (read === 0) break;
      filled += read;
    }
    const bytes = buffer.subarray(0, filled);
    const start = leadingContinuationBytes(bytes);
    const takesTheRest = complete && offset + filled >= size;
    // A character cut by the page end is read whole by the next page instead.
    const end = takesTheRest ? filled : Math.max(start, completeCharactersEnd(bytes));
    return { text: bytes.subarray(start, end).toString('utf8'), offset: offset + start, end: offset + end, size };
  } finally {
    closeSync(fd);
  }
}
