import type { ToolAnnotations } from '@bulkhead/core';

/** Replaces content in place: what was there is gone unless the caller kept it. */
export const REWRITE_ANNOTATIONS: ToolAnnotations = { readOnlyHint: false, destructiveHint: true, idempotentHint: true, openWorldHint: false };

/** An edit applied twice is not the edit applied once. */
export const EDIT_ANNOTATIONS: ToolAnnotations = { readOnlyHint: false, destructiveHint: true, idempotentHint: false, openWorldHint: false };

/** Adds something and removes nothing. */
export const ADDITIVE_ANNOTATIONS: ToolAnnotations = { readOnlyHint: false, destructiveHint: false, idempotentHint: true, openWorldHint: false };

/** Takes an entry away from its path (into the trash, or to another path): not the same call twice. */
export const RELOCATE_ANNOTATIONS: ToolAnnotations = { readOnlyHint: false, destructiveHint: true, idempotentHint: false, openWorldHint: false };
