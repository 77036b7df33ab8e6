import { spawn } from 'node:child_process';
import { accessSync, constants, statSync } from 'node:fs';
import { delimiter, isAbsolute, join } from 'node:path';

/** A notification daemon that does not answer in this time is left behind: the held call must not wait on it. */
const NOTIFY_TIMEOUT_MS = 5000;
/** notify-send reads its body as simple markup; a cap keeps a long tool name from filling the screen. */
const MAX_BODY_CHARS = 500;

/** The executable file `name` on PATH, or undefined. */
export function onPath(name: string, path: string | undefined = process.env['PATH']): string | undefined {
  for (const folder of (path ?? '').split(delimiter)) {
    // A relative PATH entry would resolve against wherever the server happens to run.
    if (!folder || !isAbsolute(folder)) continue;
    const candidate = join(folder, name);
    try {
      if (!statSync(candidate).isFile()) continue;
      accessSync(candidate, constants.X_OK);
      return candidate;
    } catch {
      // Not there, or not runnable: the next folder.
    }
  }
  return undefined;
}

/** notify-send's body markup (`<b>`, `&amp;`) taken literally. */
function plainMarkup(text: string): string {
  return text.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;');
}

/** Whether this process runs in a desktop session a notification can reach (notify-send needs its bus). */
function inDesktopSession(env: NodeJS.ProcessEnv = process.env): boolean {
  return Boolean(env['DBUS_SESSION_BUS_ADDRESS'] || env['DISPLAY'] || env['WAYLAND_DISPLAY']);
}

/**
 * Shows a desktop notification with `notify-send` when it is on PATH and there is a desktop
 * session. It never blocks and never fails the caller: the process runs detached from the call (no
 * shell: the texts are argv items), is killed after a few seconds, and any failure is ignored.
 */
export function notifyDesktop(title: string, body: string): void {
  if (!inDesktopSession()) return;
  const program = onPath('notify-send');
  if (!program) return;
  try {
    const child = spawn(program, ['--app-name=Bulkhead', '--', title, plainMarkup(body.slice(0, MAX_BODY_CHARS))], { stdio: 'ignore', shell: false });
    const timer = setTimeout(() => child.kill('SIGKILL'), NOTIFY_TIMEOUT_MS);
    timer.unref();
    child.once('error', () => clearTimeout(timer));
    child.once('exit', () => clearTimeout(timer));
    child.unref();
  } catch {
    // spawn itself can throw (EAGAIN with too many processes); a notification is not worth failing a call.
  }
}
