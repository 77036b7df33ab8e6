// Preloaded into a bulkhead-shell server (`node --import bench/lib/shell-trace.mjs cli.js …`) for the
// shell bench's untimed profile pass: records, per tools/call, when the request arrived, the time
// spent in synchronous file-system calls on /sys/fs/cgroup (making, filling, reading and removing
// the per-command cgroups) and on /proc (process scans), every process the call started (the
// synchronous part of spawn(), when it exited, when its pipes closed), the audit log's writes, and
// when the reply was written: one JSON line per call to $BULKHEAD_SHELL_TRACE.
import { appendFileSync } from 'node:fs';
import { createRequire, syncBuiltinESMExports } from 'node:module';

const out = process.env.BULKHEAD_SHELL_TRACE;
if (out) {
  const require = createRequire(import.meta.url);
  const childProcess = require('node:child_process');
  const fs = require('node:fs');
  let call;
  process.stdin.prependListener('data', (chunk) => {
    if (chunk.includes('"tools/call"')) call = { start: performance.now(), spawns: [], fs: {} };
  });
  const write = process.stdout.write.bind(process.stdout);
  process.stdout.write = (data, ...rest) => {
    if (call && String(data).includes('"result"')) {
      const { start, spawns, fs: fsTimes } = call;
      call = undefined;
      const at = (t) => (t === undefined ? null : Number((t - start).toFixed(3)));
      const record = {
        ms: at(performance.now()),
        fs: Object.fromEntries(Object.entries(fsTimes).map(([key, { ms, count, first }]) => [key, { ms: Number(ms.toFixed(3)), count, first: at(first) }])),
        spawns: spawns.map((s) => ({ file: s.file, args: s.args, spawned: at(s.spawned), sync: Number(s.sync.toFixed(3)), exited: at(s.exited), closed: at(s.closed) })),
      };
      appendFileSync(out, `${JSON.stringify(record)}\n`);
    }
    return write(data, ...rest);
  };

  const kindOf = (name, path) => {
    const text = typeof path === 'string' ? path : '';
    if (text.startsWith('/sys/fs/cgroup')) return `cgroup ${name}`;
    if (text === '/proc' || text.startsWith('/proc/')) return 'proc scan';
    return undefined;
  };
  const timed = (name, classify) => {
    const original = fs[name];
    fs[name] = function traced(...args) {
      const kind = call ? classify(args) : undefined;
      if (!kind) return original.apply(this, args);
      const started = performance.now();
      try {
        return original.apply(this, args);
      } finally {
        const entry = (call.fs[kind] ??= { ms: 0, count: 0, first: started });
        entry.ms += performance.now() - started;
        entry.count += 1;
      }
    };
  };
  for (const name of ['mkdirSync', 'writeFileSync', 'rmdirSync', 'readFileSync', 'readdirSync', 'existsSync', 'statSync']) timed(name, (args) => kindOf(name.replace(/Sync$/, ''), args[0]));
  // The audit log appends with writeSync on a descriptor it keeps open (stdout's own writes go through streams).
  const auditFds = new Set();
  const openSync = fs.openSync;
  fs.openSync = function tracedOpen(path, ...rest) {
    const fd = openSync.call(this, path, ...rest);
    if (typeof path === 'string' && path.endsWith('.jsonl')) auditFds.add(fd);
    return fd;
  };
  timed('writeSync', (args) => (auditFds.has(args[0]) ? 'audit write' : undefined));
  timed('fsyncSync', (args) => (auditFds.has(args[0]) ? 'audit fsync' : undefined));

  const spawn = childProcess.spawn;
  childProcess.spawn = function tracedSpawn(file, args, ...rest) {
    const spawned = performance.now();
    const child = spawn.call(this, file, args, ...rest);
    const entry = { file, args: Array.isArray(args) ? args : [], spawned, sync: performance.now() - spawned, exited: undefined, closed: undefined };
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
