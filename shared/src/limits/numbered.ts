export interface NumberedLine {
  readonly number: number;
  readonly text: string;
}

/** Lines as `cat -n` prints them: the number right-aligned (at least 6 wide), a tab, the text. */
export function numberedLines(lines: readonly NumberedLine[]): string {
  const width = Math.max(6, String(Math.abs(lines.at(-1)?.number ?? 0)).length);
  return lines.map((line) => `${String(line.number).padStart(width)}\t${line.text}`).join('\n');
}
