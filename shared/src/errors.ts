/**
 * A failure the model can act on: the message is written for the model and comes back as an
 * `isError` tool result, never as a protocol error.
 */
export class ToolError extends Error {
  override readonly name = 'ToolError';
  constructor(message: string, readonly code: string = 'tool_error') {
    super(message);
  }
}

/** A configuration file that cannot be used; the message names the file, the key and what is allowed. */
export class ConfigError extends Error {
  override readonly name = 'ConfigError';
  constructor(message: string, readonly file?: string) {
    super(message);
  }
}

export function errorMessage(error: unknown): string {
  if (error instanceof Error) return error.message;
  return String(error);
}
