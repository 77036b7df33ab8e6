import { readFileSync } from 'node:fs';
import { pathToFileURL } from 'node:url';

/** `N passed, M failed` from a vitest JSON report (a missing report counts as one failure). */
export function summaryLine(report) {
  try {
    const data = JSON.parse(readFileSync(report, 'utf8'));
    const skipped = (data.numPendingTests ?? 0) + (data.numTodoTests ?? 0);
    return `${data.numPassedTests} passed, ${data.numFailedTests} failed${skipped ? `, ${skipped} skipped` : ''}`;
  } catch {
    return '0 passed, 1 failed';
  }
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) {
  process.stdout.write(`${summaryLine(process.argv[2])}\n`);
}
