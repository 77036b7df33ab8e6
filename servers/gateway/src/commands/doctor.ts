import { execFileSync } from 'node:child_process';
import { accessSync, constants, existsSync } from 'node:fs';
import { createServer } from 'node:net';
import { createRequire } from 'node:module';
import { dirname } from 'node:path';
import { errorMessage } from '@bulkhead/core';
import { builtinCli } from '../config/downstreams.js';
import { loadGateway, type GatewaySetup } from '../load.js';
import { sqliteCheck } from './sqlite-check.js';
import { describeQuarantine } from '../treatment.js';

export interface Check {
  readonly level: 'ok' | 'warn' | 'fail';
  readonly what: string;
  readonly detail: string;
}

function versionOf(command: string, args: string[]): string | undefined {
  try {
    return execFileSync(command, args, { encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'], timeout: 5000 }).split('\n')[0]!.trim();
  } catch {
    return undefined;
  }
}

function ripgrep(): Check {
  const fsCli = builtinCli('fs');
  if (!fsCli) return { level: 'warn', what: 'ripgrep', detail: 'the fs compartment is not installed, so its ripgrep was not checked' };
  try {
    const { rgPath } = createRequire(dirname(fsCli) + '/')('@vscode/ripgrep') as { rgPath: string };
    accessSync(rgPath, constants.X_OK);
    return { level: 'ok', what: 'ripgrep', detail: versionOf(rgPath, ['--version']) ?? rgPath };
  } catch (error) {
    return { level: 'warn', what: 'ripgrep', detail: `not usable (${errorMessage(error)}); grep and glob_files fall back to the slower built-in engine` };
  }
}

/** git_show_file and git_blame read through `git cat-file --batch-command`, new in git 2.36. */
function gitCheck(): Check {
  const git = versionOf('git', ['--version']);
  if (!git) return { level: 'warn', what: 'git', detail: 'not found; the git compartment needs it' };
  const [major = 0, minor = 0] = (/(\d+)\.(\d+)/.exec(git) ?? []).slice(1).map(Number);
  if (major < 2 || (major === 2 && minor < 36)) return { level: 'warn', what: 'git', detail: `${git}; the git compartment needs 2.36 or newer` };
  return { level: 'ok', what: 'git', detail: git };
}

function portFree(host: string, port: number): Promise<Check> {
  return new Promise((resolve) => {
    const server = createServer();
    server.once('error', (error) => resolve({ level: 'fail', what: `port ${host}:${port}`, detail: errorMessage(error) }));
    server.listen(port, host, () => server.close(() => resolve({ level: 'ok', what: `port ${host}:${port}`, detail: 'free' })));
  });
}

/** Checks the machine, the configuration and every downstream server, without serving anything. */
export async function doctor(setup: GatewaySetup, http?: { host: string; port: number }): Promise<Check[]> {
  const checks: Check[] = [];
  const major = Number(process.versions.node.split('.')[0]);
  checks.push({ level: major >= 20 ? 'ok' : 'fail', what: 'node', detail: `v${process.versions.node}${major >= 20 ? '' : ' (Bulkhead needs 20 or newer)'}` });
  checks.push(ripgrep());
  checks.push(gitCheck());
  checks.push(sqliteCheck());
  const bwrap = versionOf('bwrap', ['--version']);
  checks.push(bwrap ? { level: 'ok', what: 'bubblewrap', detail: bwrap } : { level: 'warn', what: 'bubblewrap', detail: 'not found; the shell compartment cannot sandbox commands without it' });
  if (http) checks.push(await portFree(http.host, http.port));
  let loaded: ReturnType<typeof loadGateway>;
  try {
    loaded = loadGateway(setup);
  } catch (error) {
    checks.push({ level: 'fail', what: 'configuration', detail: errorMessage(error) });
    return checks;
  }
  checks.push({
    level: 'ok',
    what: 'configuration',
    detail: existsSync(setup.controlDir) ? `${setup.controlDir} is valid` : `no control-plane folder at ${setup.controlDir}: every default applies (bulkhead config init writes one to edit)`,
  });
  for (const problem of loaded.problems) checks.push({ level: 'warn', what: 'server', detail: problem });
  loaded.gateway.start();
  await loaded.gateway.settled();
  try {
    for (const downstream of loaded.gateway.downstreams.values()) {
      const unavailable = downstream.unavailableReason;
      checks.push(
        unavailable
          ? { level: 'fail', what: `server ${downstream.namespace}`, detail: unavailable }
          : { level: downstream.listWarning ? 'warn' : 'ok', what: `server ${downstream.namespace}`, detail: `${downstream.toolSummary}${downstream.listWarning ? `; ${downstream.listWarning}` : ''}` },
      );
    }
    for (const held of loaded.gateway.catalog.quarantinedTools()) {
      checks.push({ level: 'warn', what: `tool ${held.entry.qualified}`, detail: describeQuarantine(held) });
    }
  } finally {
    await loaded.gateway.close();
  }
  return checks;
}
