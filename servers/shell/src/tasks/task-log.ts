import { closeSync, constants, openSync, writeSync } from 'node:fs';
import { errorMessage } from '@bulkhead/core';
import { completeCharactersEnd } from './utf8.js';

/**
 * The log of one background task: the first `maxBytes` of its output, then a marker line saying
 * how much was dropped.
 *
 * Keeping the head (not the tail) means bytes never move once written, so the offsets task_output
 * hands out stay valid while the task runs, and a 1 GB flood costs no disk and no rewriting: past
 * the cap, output is only counted. Writes are synchronous so the log on disk is always complete up
 * to the last chunk received: readable while the task runs, with nothing to flush on a kill.
 */
export class TaskLog {
  private fd: number | undefined;
  private keptBytes = 0;
  private dropped = 0;
  private writeFailure: string | undefined;
  private markerBytes = 0;

  constructor(
    readonly path: string,
    private readonly maxBytes: number,
  ) {
    // O_EXCL and O_NOFOLLOW: never write through a file or link someone placed there first.
    this.fd = openSync(path, constants.O_WRONLY | constants.O_CREAT | constants.O_EXCL | constants.O_NOFOLLOW, 0o600);
  }

  /** Bytes in the file now. */
  get size(): number {
    return this.keptBytes + this.markerBytes;
  }

  /** Output bytes that did not go into the file. */
  get droppedBytes(): number {
    return this.dropped;
  }

  append(chunk: Buffer): void {
    if (this.fd === undefined || this.dropped > 0) {
      // Once anything is dropped, everything after is too, or the log would have a silent hole.
      this.dropped += chunk.length;
      return;
    }
    const room = this.maxBytes - this.keptBytes;
    const kept = chunk.length <= room ? chunk.length : completeCharactersEnd(chunk.subarray(0, room));
    try {
      this.writeFully(chunk.subarray(0, kept));
      this.keptBytes += kept;
      this.dropped += chunk.length - kept;
    } catch (error) {
      this.writeFailure = errorMessage(error);
      this.dropped += chunk.length;
    }
  }

  /** Appends the marker when output was dropped and closes the file; later output is only counted. */
  close(): void {
    if (this.fd === undefined) return;
    if (this.dropped > 0) {
      const reason = this.writeFailure ? `writing the log failed: ${this.writeFailure}` : `the log reached its cap of ${this.maxBytes} bytes`;
      const marker = Buffer.from(`\n…(${this.dropped} bytes dropped: ${reason})…\n`);
      try {
        this.writeFully(marker);
        this.markerBytes = marker.length;
      } catch {
        // The disk refused the marker too; droppedBytes still tells the reader.
      }
    }
    try {
      closeSync(this.fd);
    } catch {
      // Nothing is buffered (writes are synchronous), so a failed close loses nothing.
    }
    this.fd = undefined;
  }

  private writeFully(bytes: Buffer): void {
    let written = 0;
    while (written < bytes.length) written += writeSync(this.fd!, bytes, written, bytes.length - written);
  }
}
