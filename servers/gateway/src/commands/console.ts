import { spawn } from 'node:child_process';
import { loadYamlFile, runningConsoles } from '@bulkhead/core';
import { GATEWAY_CONFIG_FILE, gatewayConfigSchema } from '../config/schema.js';
import { issueLoginTicket } from '../console/auth.js';
import { serveConsoleAlone, ServedConsole } from '../console/serve.js';

export interface ConsoleCommand {
  readonly roots: readonly string[];
  readonly controlDir: string;
  /** Print the login link on stdout instead of opening a browser (scripts and tests use it). */
  readonly print: boolean;
}

/** The browser opener of this platform, run without a shell (the link is one argument, never parsed by one). */
function opener(url: string): { command: string; args: string[] } {
  if (process.platform === 'darwin') return { command: 'open', args: [url] };
  if (process.platform === 'win32') return { command: 'rundll32', args: ['url.dll,FileProtocolHandler', url] };
  return { command: 'xdg-open', args: [url] };
}

/** Opens `url` in the user's browser; false (with why on stderr) when no opener runs. */
function openInBrowser(url: string): Promise<boolean> {
  const { command, args } = opener(url);
  return new Promise((resolve) => {
    const child = spawn(command, args, { stdio: 'ignore', detached: true });
    child.once('error', (error) => {
      process.stderr.write(`bulkhead: could not open a browser (${command}: ${error.message})\n`);
      resolve(false);
    });
    child.once('spawn', () => {
      child.unref();
      resolve(true);
    });
  });
}

/** A login link for the console at `url` with its own base `path`: a one-time ticket, valid a minute, that the console swaps for a session cookie. */
function loginLink(controlDir: string, url: string, path: string): string {
  return `${new URL(path, url).href}login?ticket=${issueLoginTicket(controlDir)}`;
}

async function hand(link: string, print: boolean, what: string): Promise<void> {
  if (print) {
    process.stdout.write(`${link}\n`);
    return;
  }
  if (await openInBrowser(link)) process.stderr.write(`bulkhead: opened ${what} in your browser\n`);
  else process.stderr.write(`bulkhead: open this link in a browser on this machine within a minute (it works once):\n${link}\n`);
}

/**
 * `bulkhead console`: logs the browser in to the console of a running gateway of this
 * control-plane folder; with none running, serves a console itself in the foreground (approvals,
 * activity, trash and policy come from the folder) until Ctrl-C. Resolves with the exit code once
 * there is nothing more to do; -1 while it serves.
 */
export async function openConsole(command: ConsoleCommand): Promise<number> {
  const running = runningConsoles(command.controlDir)[0];
  if (running) {
    await hand(loginLink(command.controlDir, running.url, running.path), command.print, `the console of ${running.server} (pid ${running.pid}) at ${running.url}`);
    return 0;
  }
  const port = loadYamlFile(command.controlDir, GATEWAY_CONFIG_FILE, gatewayConfigSchema).value.console.port;
  const served = new ServedConsole({ controlDir: command.controlDir, roots: command.roots, server: 'bulkhead console' });
  const serving = await serveConsoleAlone(served, port);
  served.announce((line) => process.stderr.write(`bulkhead: ${line}\n`));
  process.stderr.write(
    `bulkhead: no gateway is running for ${command.controlDir}; serving its console at ${serving.url} until Ctrl-C ` +
      `(approvals, activity, trash and policy work; live gateway data needs a running gateway)\n`,
  );
  let stopping = false;
  const stop = (code: number) => {
    if (stopping) return;
    stopping = true;
    void serving.close().then(() => process.exit(code));
  };
  process.on('SIGINT', () => stop(130));
  process.on('SIGTERM', () => stop(143));
  process.on('SIGHUP', () => stop(129));
  await hand(loginLink(command.controlDir, serving.url, `${served.base}/`), command.print, `the console at ${serving.url}`);
  return -1;
}
