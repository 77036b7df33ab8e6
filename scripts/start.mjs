// `npm start`: installs and builds if needed, then runs the main job, the Bulkhead gateway, over
// the current folder on Streamable HTTP at 127.0.0.1 (PORT, default 8765).
import { spawn } from 'node:child_process';
import { join } from 'node:path';
import { ensureInstalledAndBuilt, repo } from './ensure.mjs';

ensureInstalledAndBuilt();
const folder = process.env.INIT_CWD ?? process.cwd();
const port = process.env.PORT ?? '8765';
const child = spawn(process.execPath, [join(repo, 'servers/gateway/dist/cli.js'), 'start', '--root', folder, '--http', `127.0.0.1:${port}`, ...process.argv.slice(2)], {
  stdio: 'inherit',
});
for (const signal of ['SIGINT', 'SIGTERM']) process.on(signal, () => child.kill(signal));
child.on('exit', (code, signal) => process.exit(code ?? (signal ? 1 : 0)));
