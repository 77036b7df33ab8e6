// The shell bench's trivial commands, each with the output it must produce, and how each side's
// reply is read back into (output, exit code) so a fast wrong answer cannot win.

/**
 * A fixed, varied list: builtins, small external programs, a pipeline, an arithmetic expansion and
 * one that prints nothing. `expect(root)` is the whole output with its trailing newline trimmed.
 */
export const COMMANDS = [
  { command: 'echo 1', expect: () => '1' },
  { command: 'true', expect: () => '' },
  { command: 'pwd', expect: (root) => root },
  { command: 'printf x', expect: () => 'x' },
  { command: 'ls -d .', expect: () => '.' },
  { command: 'echo hello world', expect: () => 'hello world' },
  { command: "printf '%s\\n' a b", expect: () => 'a\nb' },
  { command: 'seq 3', expect: () => '1\n2\n3' },
  { command: 'echo $((6 * 7))', expect: () => '42' },
  { command: 'basename /a/b/c', expect: () => 'c' },
  { command: 'cat marker.txt', expect: () => 'marker' },
  { command: 'head -c 3 /dev/zero | wc -c', expect: () => '3' },
  { command: 'test -d . && echo yes', expect: () => 'yes' },
  { command: 'uname -s', expect: () => 'Linux' },
];

/** The command of call `index` (0-based): the list, round and round. */
export function commandAt(index) {
  return COMMANDS[index % COMMANDS.length];
}

/** bulkhead's run_shell text: the output (or `(no output)`), then `[exit code N · T ms]` on its own line. */
export function readBulkhead(text) {
  const match = /\n\[exit code (-?\d+) · [^\]\n]*\]$/.exec(text);
  if (!match) return { output: text, exitCode: undefined, problem: 'no `[exit code N · T]` line at the end' };
  const body = text.slice(0, match.index);
  return { output: body === '(no output)' ? '' : body, exitCode: Number(match[1]) };
}

/** mcp-server-commands' run_command text: stdout, then stderr, each a text part; nothing at all for no output. A failure is an error result. */
export function readPeer(text) {
  return { output: text, exitCode: 0 };
}

/** Raw processes: the output read from the pipe and the exit code. */
export function readRaw({ text, code }) {
  return { output: text, exitCode: code };
}

/** Whether a reply is the right one for `spec`; the detail says why not. */
export function checkReply(spec, root, reply) {
  if (reply.problem) return { ok: false, detail: reply.problem };
  const want = spec.expect(root);
  const got = reply.output.replace(/\n+$/, '');
  if (reply.exitCode !== 0) return { ok: false, detail: `exit code ${reply.exitCode} for \`${spec.command}\`` };
  if (got !== want) return { ok: false, detail: `\`${spec.command}\` gave ${JSON.stringify(got.slice(0, 80))}, expected ${JSON.stringify(want)}` };
  return { ok: true };
}
