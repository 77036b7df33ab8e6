// Workspace and control-plane folders for the gateway bench, and the commands that start each server.
import { existsSync, mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { DEFAULT_DATASET } from '../fixtures/livemcp-server.mjs';

const BENCH = join(dirname(fileURLToPath(import.meta.url)), '..');
export const REPO = join(BENCH, '..');
export const WORK = join(BENCH, '.work', 'gateway');
export const GATEWAY_CLI = join(REPO, 'servers', 'gateway', 'dist', 'cli.js');
export const FS_CLI = join(REPO, 'servers', 'fs', 'dist', 'cli.js');
export const FIXTURE = join(BENCH, 'fixtures', 'livemcp-server.mjs');
const RELAY = join(BENCH, 'lib', 'gateway-relay.mjs');
export const DATASET = DEFAULT_DATASET;
/** Namespace of the fixture behind the gateway: its tools are listed as `live__<tool>`. */
export const LIVE = 'live';
export const SMALL_FILE = 'small.txt';

const yaml = (value) => JSON.stringify(value);

/** A fresh workspace (one small file) and an empty folder for the control-plane folders. */
export function prepareWorkspace() {
  rmSync(WORK, { recursive: true, force: true });
  const root = join(WORK, 'root');
  mkdirSync(root, { recursive: true });
  const lines = Array.from({ length: 20 }, (_, i) => `line ${i + 1} of a small file read through the gateway bench`);
  writeFileSync(join(root, SMALL_FILE), `${lines.join('\n')}\n`);
  return { root, controlBase: join(WORK, 'control') };
}

/**
 * Writes one control-plane folder. `echo` adds the fixture's echo tool; `toolPolicy`, `permissions`
 * and `audit` are the YAML files' contents as objects (left out: the file is not written, so the
 * gateway's defaults apply).
 */
export function controlDir(base, name, { echo = false, toolPolicy, permissions, audit } = {}) {
  const dir = join(base, name);
  mkdirSync(dir, { recursive: true });
  const fixtureArgs = [FIXTURE, ...(echo ? ['--echo'] : []), '--dataset', DATASET];
  // The corpus is published servers' own descriptions, measured for size: two of them name fs's
  // read_file and write_file, which the scanner would hold back (as it should for a stranger's).
  writeFileSync(
    join(dir, 'bulkhead.yaml'),
    `servers:\n  fs: {}\n  ${LIVE}:\n    command: ${yaml(process.execPath)}\n    args: ${yaml(fixtureArgs)}\n    trust: descriptions\n`,
  );
  if (toolPolicy) writeFileSync(join(dir, 'tool_policy.yaml'), `${Object.entries(toolPolicy).map(([k, v]) => `${k}: ${yaml(v)}`).join('\n')}\n`);
  if (permissions) writeFileSync(join(dir, 'permissions.yaml'), `${Object.entries(permissions).map(([k, v]) => `${k}: ${yaml(v)}`).join('\n')}\n`);
  if (audit) writeFileSync(join(dir, 'audit.yaml'), `${Object.entries(audit).map(([k, v]) => `${k}: ${yaml(v)}`).join('\n')}\n`);
  return dir;
}

export function gatewayCommand(root, control) {
  return { command: process.execPath, args: [GATEWAY_CLI, 'start', '--root', root, '--config', control], cwd: root };
}

export function fixtureCommand({ echo }) {
  return { command: process.execPath, args: [FIXTURE, ...(echo ? ['--echo'] : []), '--dataset', DATASET] };
}

export function fsCommand(root, control) {
  return { command: process.execPath, args: [FS_CLI, '--root', root, '--config', control], cwd: root };
}

export function checkDataset() {
  if (!existsSync(DATASET)) {
    throw new Error(`the LiveMCPTool corpus is missing: expected ${DATASET} (the shared datasets folder beside the repo, <repo>/../shared/datasets/)`);
  }
}

/** `command` behind the byte relay of bench/lib/gateway-relay.mjs. */
export function relayCommand({ command, args }) {
  return { command: process.execPath, args: [RELAY, command, ...args] };
}
