// Preloaded into a bulkhead-git server (`node --import bench/lib/git-trace.mjs cli.js …`) for the
// bench's untimed profile pass: records, per tools/call, when the request arrived, every git
// process the call started (the synchronous part of spawn(), when it exited, when its pipes
// closed) and when the reply was written, one JSON line per call to $BULKHEAD_GIT_TRACE.
import { appendFileSync } from 'node:fs';
import { createRequire, syncBuiltinESMExports } from 'node:module';

const out = process.env.BULKHEAD_GIT_TRACE;
if (out) {
  const require = createRequire(import.meta.url);
  const childProcess = require('node:child_process');
  const spawn = childProcess.spawn;
  let call;
  process.stdin.prependListener('data', (chunk) => {
    if (chunk.includes('"tools/call"')) call = { start: performance.now(), spawns: [] };
  });
  const write = process.stdout.write.bind(process.stdout);
  process.stdout.write = (data, ...rest) => {
    if (call && String(data).includes('"result"')) {
      const { start, spawns } = call;
      call = undefined;
      const at = (t) => (t === undefined ? null : Number((t - start).toFixed(3)));
      const ms = at(performance.now());
      // Split the reply into its text and its structured copy (untimed: the call is over).
      let textBytes = null;
      let structuredBytes = null;
      try {
        const { result } = JSON.parse(String(data).trim().split('\n').find((line) => line.includes('"result"')));
        textBytes = (result.content ?? []).reduce((sum, part) => sum + (part.type === 'text' ? Buffer.byteLength(part.text) : 0), 0);
        structuredBytes = result.structuredContent === undefined ? 0 : Buffer.byteLength(JSON.stringify(result.structuredContent));
      } catch {
        // not one JSON reply per write: leave the split unknown
      }
      const record = { ms, replyBytes: Buffer.byteLength(data), textBytes, structuredBytes, spawns: spawns.map((s) => ({ command: s.command, spawned: at(s.spawned), sync: Number(s.sync.toFixed(3)), exited: at(s.exited), closed: at(s.closed) })) };
      appendFileSync(out, `${JSON.stringify(record)}\n`);
    }
    return write(data, ...rest);
  };
  childProcess.spawn = function tracedSpawn(file, args, ...rest) {
    const spawned = performance.now();
    const child = spawn.call(this, file, args, ...rest);
    const argv = Array.isArray(args) ? args : [];
    const command = argv.find((arg, i) => !arg.startsWith('-') && argv[i - 1] !== '-c') ?? file;
    const entry = { command, spawned, sync: performance.now() - spawned, exited: undefined, closed: undefined };
    call?.spawns.push(entry);
    child.once('exit', () => {
      entry.exited = performance.now();
    });
    child.once('close', () => {
      entry.closed = performance.now();
    });
    return child;
  };
  syncBuiltinESMExports();
}
