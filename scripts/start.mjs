// `npm start`: installs and builds if needed, then runs the main job, the Bulkhead gateway, over
// the folder npm was started in, on Streamable HTTP at 127.0.0.1 (PORT, default 8765). Like every
// HTTP server it asks for a bearer token, kept in .bulkhead/keys/bulkhead.http.token of that folder;
// its banner prints the client snippets that carry it (`npm start -- --no-auth` serves without one).
import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { ensureInstalledAndBuilt, repo } from './ensure.mjs';

const port = process.env.PORT ?? '8765';
if (!/^\d{1,5}$/.test(port) || Number(port) > 65535) {
  process.stderr.write(`npm start: PORT must be a port number from 0 to 65535 (0 picks a free one), not ${JSON.stringify(port)}\n`);
  process.exit(2);
}

/** The parent of another process: /proc where there is one, else ps. */
function parentOf(pid) {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    return Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]);
  } catch {
    try {
      return Number(execFileSync('ps', ['-o', 'ppid=', '-p', String(pid)], { encoding: 'utf8' }).trim()) || undefined;
    } catch {
      return undefined;
    }
  }
}

function alive(pid) {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return error.code === 'EPERM';
  }
}

// npm runs this script under a shell, and a signal sent to npm ends that shell without reaching
// us, or (SIGKILL) ends npm and leaves the shell waiting: so the gateway runs in this process and
// stops, as Ctrl-C would, once either of them has gone. Both are noted before the build, which
// blocks this process and so cannot notice anything while it runs.
const shell = process.ppid;
const npm = process.env.npm_lifecycle_event ? parentOf(shell) : undefined;
const abandoned = () => process.ppid !== shell || (npm !== undefined && npm > 1 && !alive(npm));

ensureInstalledAndBuilt();

if (abandoned()) {
  process.stderr.write('npm start: npm went away during the build; not starting the gateway\n');
  process.exit(143);
}
setInterval(() => {
  if (abandoned()) process.kill(process.pid, 'SIGTERM');
}, 500).unref();

const folder = process.env.INIT_CWD ?? process.cwd();
process.argv = [process.argv[0], join(repo, 'servers/gateway/dist/cli.js'), 'start', '--root', folder, '--http', `127.0.0.1:${port}`, ...process.argv.slice(2)];
await import(pathToFileURL(process.argv[1]).href);
