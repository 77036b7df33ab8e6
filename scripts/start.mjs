// `npm start`: installs and builds if needed, then runs the main job, the Bulkhead gateway, over
// the folder npm was started in, on Streamable HTTP at 127.0.0.1 (PORT, default 8765).
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { ensureInstalledAndBuilt, repo } from './ensure.mjs';

const port = process.env.PORT ?? '8765';
if (!/^\d{1,5}$/.test(port) || Number(port) > 65535) {
  process.stderr.write(`npm start: PORT must be a port number from 0 to 65535 (0 picks a free one), not ${JSON.stringify(port)}\n`);
  process.exit(2);
}

ensureInstalledAndBuilt();

// npm runs this script under a shell, and a signal sent to npm ends that shell without reaching
// us: so the gateway runs in this process, and stops as Ctrl-C would once npm has gone.
const parent = process.ppid;
setInterval(() => {
  if (process.ppid !== parent) process.kill(process.pid, 'SIGTERM');
}, 500).unref();

const folder = process.env.INIT_CWD ?? process.cwd();
process.argv = [process.argv[0], join(repo, 'servers/gateway/dist/cli.js'), 'start', '--root', folder, '--http', `127.0.0.1:${port}`, ...process.argv.slice(2)];
await import(pathToFileURL(process.argv[1]).href);
