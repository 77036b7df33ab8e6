// The desktop notification of a pending approval: notify-send from PATH, its texts as argv items
// (never a shell), markup taken literally, and a daemon that hangs neither blocks nor lingers.
import { chmodSync, existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { notifyDesktop, onPath } from '@bulkhead/core';
import { tempWorkspace, type TempWorkspace } from '@bulkhead/core/testing';

let ws: TempWorkspace;
const SESSION_KEYS = ['PATH', 'DBUS_SESSION_BUS_ADDRESS', 'DISPLAY', 'WAYLAND_DISPLAY'] as const;
const saved = Object.fromEntries(SESSION_KEYS.map((key) => [key, process.env[key]]));

beforeEach(() => {
  // A desktop session as notify-send needs one (its bus); each test sets PATH.
  for (const key of SESSION_KEYS) delete process.env[key];
  process.env['DBUS_SESSION_BUS_ADDRESS'] = 'unix:path=/nonexistent/bus';
});

afterEach(() => {
  for (const key of SESSION_KEYS) {
    if (saved[key] === undefined) delete process.env[key];
    else process.env[key] = saved[key];
  }
  ws?.cleanup();
});

/** A `notify-send` in `folder` running `body` (sh). */
function script(folder: string, body: string): string {
  mkdirSync(folder, { recursive: true });
  const file = join(folder, 'notify-send');
  writeFileSync(file, `#!/bin/sh\n${body}\n`);
  chmodSync(file, 0o755);
  return file;
}

describe('notifyDesktop', () => {
  it('runs notify-send from PATH with its texts as arguments, markup written out and nothing run by a shell', async () => {
    ws = tempWorkspace();
    const log = ws.path('argv.log');
    script(ws.path('bin'), `for arg in "$@"; do printf '%s\\n' "$arg"; done > '${log}'`);
    process.env['PATH'] = `${ws.path('bin')}:/usr/bin:/bin`;
    notifyDesktop('Bulkhead: approval needed', `x:y waits <b>now</b> & $(touch ${ws.path('pwned')}) \`touch ${ws.path('pwned2')}\``);
    await expect.poll(() => existsSync(log), { timeout: 5000, interval: 20 }).toBe(true);
    await expect.poll(() => readFileSync(log, 'utf8').split('\n').length, { timeout: 5000, interval: 20 }).toBe(5);
    expect(readFileSync(log, 'utf8').split('\n')).toEqual([
      '--app-name=Bulkhead',
      '--',
      'Bulkhead: approval needed',
      `x:y waits &lt;b&gt;now&lt;/b&gt; &amp; $(touch ${ws.path('pwned')}) \`touch ${ws.path('pwned2')}\``,
      '',
    ]);
    expect(existsSync(ws.path('pwned'))).toBe(false);
    expect(existsSync(ws.path('pwned2'))).toBe(false);
  });

  it('returns at once and stops a notify-send that hangs after a few seconds', async () => {
    ws = tempWorkspace();
    const pidFile = ws.path('pid');
    script(ws.path('bin'), `echo $$ > '${pidFile}'; exec sleep 60`);
    process.env['PATH'] = `${ws.path('bin')}:/usr/bin:/bin`;
    const started = performance.now();
    notifyDesktop('title', 'body');
    expect(performance.now() - started).toBeLessThan(1000);
    await expect.poll(() => existsSync(pidFile) && readFileSync(pidFile, 'utf8').trim() !== '', { timeout: 5000, interval: 20 }).toBe(true);
    const pid = Number(readFileSync(pidFile, 'utf8'));
    const alive = () => {
      try {
        process.kill(pid, 0);
        return true;
      } catch {
        return false;
      }
    };
    expect(alive()).toBe(true);
    await expect.poll(alive, { timeout: 9000, interval: 100 }).toBe(false);
  }, 15_000);

  it('runs nothing outside a desktop session', async () => {
    ws = tempWorkspace();
    const log = ws.path('ran');
    script(ws.path('bin'), `: > '${log}'`);
    process.env['PATH'] = ws.path('bin');
    delete process.env['DBUS_SESSION_BUS_ADDRESS'];
    notifyDesktop('title', 'body');
    await new Promise((resolve) => setTimeout(resolve, 300));
    expect(existsSync(log)).toBe(false);
    process.env['WAYLAND_DISPLAY'] = 'wayland-0';
    notifyDesktop('title', 'body');
    await expect.poll(() => existsSync(log), { timeout: 5000, interval: 20 }).toBe(true);
  });

  it('does nothing without notify-send, and ignores one that fails', () => {
    ws = tempWorkspace();
    process.env['PATH'] = ws.path('empty');
    expect(() => notifyDesktop('title', 'body')).not.toThrow();
    script(ws.path('bin'), 'exit 3');
    process.env['PATH'] = ws.path('bin');
    expect(() => notifyDesktop('title', 'body')).not.toThrow();
  });
});

describe('onPath', () => {
  it('finds an executable file in an absolute PATH folder only', () => {
    ws = tempWorkspace();
    const found = script(ws.path('bin'), 'exit 0');
    mkdirSync(ws.path('dir/notify-send'), { recursive: true });
    // Not executable.
    ws.write('plain/notify-send', '#!/bin/sh\n');
    expect(onPath('notify-send', `${ws.path('dir')}:${ws.path('plain')}:${ws.path('bin')}`)).toBe(found);
    // A relative folder is where the server happens to run, never searched.
    expect(onPath('notify-send', `bin:${ws.path('dir')}`)).toBeUndefined();
    expect(onPath('notify-send', '')).toBeUndefined();
  });
});
