export * from './truncate.js';
export * from './paging.js';
export * from './numbered.js';

/** Caps that apply to every tool output unless a policy overrides them. */
export interface OutputLimits {
  /** Largest text a single tool result may carry, in bytes. */
  readonly maxOutputBytes: number;
  /** Largest sum of base64 image, audio and blob data a result may carry; 0 turns the cap off. */
  readonly maxBinaryBytes?: number;
}

/** Base64 bytes: about 6 MiB of image data, past what clients accept for one image anyway. */
export const DEFAULT_MAX_BINARY_BYTES = 8 * 1024 * 1024;

export const DEFAULT_OUTPUT_LIMITS: OutputLimits = { maxOutputBytes: 512 * 1024 };
