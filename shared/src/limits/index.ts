export * from './truncate.js';
export * from './paging.js';

/** Caps that apply to every tool output unless a policy overrides them. */
export interface OutputLimits {
  /** Largest text a single tool result may carry, in bytes. */
  readonly maxOutputBytes: number;
}

export const DEFAULT_OUTPUT_LIMITS: OutputLimits = { maxOutputBytes: 512 * 1024 };
