// What the gateway keeps of a child's stderr for reports and error messages: the last few lines,
// each cut short, secrets redacted, a fragment left by the 16 KiB window dropped. Real children.
import { describe, expect, it } from 'vitest';
import { ChildProcessTransport } from '../src/downstream/child-transport.js';

/** Runs `script` under sh as a child of the transport and waits for its end. */
async function stderrOf(script: string): Promise<{ lines: string[]; exit: string | undefined }> {
  const transport = new ChildProcessTransport({ command: '/bin/sh', args: ['-c', script], env: { PATH: process.env['PATH'] ?? '' } });
  const closed = new Promise<void>((resolve) => (transport.onclose = resolve));
  await transport.start();
  await closed;
  return { lines: transport.stderrLines, exit: transport.exitDescription };
}

describe('a child’s stderr', () => {
  it('keeps its last five lines, blank ones skipped, each cut at 300 characters, secrets redacted', async () => {
    const long = 'z'.repeat(400);
    const script = `for i in 1 2 3 4; do echo "line $i" >&2; done; echo >&2; echo "key AKIAABCDEFGHIJKLMNOP here" >&2; echo ${long} >&2; echo "last" >&2; exit 5`;
    expect(await stderrOf(script)).toEqual({
      lines: ['line 3', 'line 4', 'key [REDACTED] here', `${'z'.repeat(300)}…`, 'last'],
      exit: 'exited with code 5',
    });
  });

  it('keeps only a window of a flood, without the fragment the window cut', async () => {
    // 1 MiB without a newline, then two lines: only what follows the cut is a whole line.
    const script = `head -c 1048576 /dev/zero | tr '\\0' 'e' >&2; printf '\\nsecond to last\\nlast\\n' >&2; kill -9 $$`;
    expect(await stderrOf(script)).toEqual({ lines: ['second to last', 'last'], exit: 'was killed by SIGKILL' });
  });

  it('reads the lines a child writes just before it exits', async () => {
    expect(await stderrOf('echo "fatal: no config" >&2; exit 3')).toEqual({ lines: ['fatal: no config'], exit: 'exited with code 3' });
  });
});
