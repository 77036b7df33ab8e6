/** A tool result as tests look at it: the text blocks joined, the error flag, the structured part. */
export interface ToolCall<S = Record<string, unknown>> {
  readonly text: string;
  readonly isError: boolean;
  /** The result's structuredContent, typed as the test expects it (the client checked it against the output schema). */
  readonly structured: S;
}

export function toolCall<S>(result: unknown): ToolCall<S> {
  const r = result as { isError?: boolean; content: { type: string; text?: string }[]; structuredContent?: S };
  const text = r.content
    .filter((block) => block.type === 'text')
    .map((block) => block.text)
    .join('\n');
  return { text, isError: r.isError === true, structured: r.structuredContent as S };
}
