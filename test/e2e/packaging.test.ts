// Installable without a clone: every publishable package packed with pnpm, the tarballs installed
// with npm into an empty prefix (third-party dependencies from the registry; better-sqlite3
// compiles when no prebuilt binary can be downloaded, hence the long timeout), and the installed
// `bulkhead start` used through a real MCP client. Progress lines go to stderr.
import { mkdirSync, renameSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import {
  benchOnlyPackages,
  installTarballs,
  installedDoctor,
  installedPackages,
  kib,
  packAll,
  packageFolders,
  progress,
  publishablePackages,
  scratchDir,
  seconds,
  startInstalledGateway,
  stopAll,
  tarballProblems,
} from './packing.js';
import { text } from './helpers.js';

const LABEL = `packaging, Node ${process.version}`;
const scratch = scratchDir('bulkhead-packaging-');

afterAll(async () => {
  await stopAll();
  scratch.remove();
}, 5 * 60_000);

/** A query per compartment that tool_search must answer with one of that compartment's tools. */
const SEARCHES: [namespace: string, query: string][] = [
  ['fs', 'read a file'],
  ['fs_write', 'write a file'],
  ['git', 'git log'],
  ['web', 'fetch a url'],
  ['ladder', 'ladder read rung'],
];

describe('the packages as npm installs them', () => {
  it('packs every publishable package, installs the tarballs into an empty prefix and serves from the install', { timeout: 20 * 60_000 }, async () => {
    const started = performance.now();
    const packages = publishablePackages();
    expect(packages.map((p) => p.folder).sort()).toEqual(packageFolders().sort()); // none is private
    expect(packages.map((p) => p.name)).toContain('@bulkhead/gateway');

    const tarballs = await packAll(join(scratch.path, 'tarballs'), LABEL);
    progress(LABEL, `packed ${tarballs.length} packages in ${seconds(performance.now() - started)}: ${tarballs.map((t) => `${t.name} ${kib(t.bytes)}`).join(', ')}; total ${kib(tarballs.reduce((sum, t) => sum + t.bytes, 0))}`);
    const problems = tarballs.flatMap((tarball) => tarballProblems(tarball, join(scratch.path, 'unpacked')).map((problem) => `${tarball.name}: ${problem}`));
    expect(problems).toEqual([]);

    const root = join(scratch.path, 'root');
    const installStarted = performance.now();
    const install = await installTarballs({ tarballs, prefix: join(scratch.path, 'prefix'), node: process.execPath, version: process.versions.node, label: LABEL });
    const installed = installedPackages(install.prefix);
    for (const { name } of packages) expect(installed, name).toContain(name);
    expect(benchOnlyPackages().filter((name) => installed.has(name))).toEqual([]);

    mkdirSync(root); // empty: the gateway starts with no control-plane folder, as a first-time user's does
    const gateway = await startInstalledGateway({ prefix: install.prefix, node: process.execPath, version: process.versions.node, root });
    writeFileSync(join(root, 'hello.txt'), 'hello from the root\n');
    const read = await gateway.client.callTool({ name: 'call_tool', arguments: { name: 'fs__read_file', arguments: { path: 'hello.txt' } } });
    const firstCall = performance.now();
    expect(read.isError).toBeFalsy();
    expect(text(read)).toBe('     1\thello from the root');
    progress(LABEL, `first tool call answered ${seconds(firstCall - installStarted)} after npm install began in an empty prefix (install ${seconds(install.ms)}, start and call ${seconds(firstCall - installStarted - install.ms)})`);

    for (const [namespace, query] of SEARCHES) {
      const found = text(await gateway.client.callTool({ name: 'tool_search', arguments: { query } }));
      expect(found, `tool_search "${query}"`).toMatch(new RegExp(`^\\d+\\. ${namespace}__[a-z_]+ `, 'm'));
    }
    // The ladder's stores are SQLite: listing lanes goes through better-sqlite3 (an in-memory stand-in
    // while no ladder.db exists), so it fails when the binding does not load.
    const lanes = await gateway.client.callTool({ name: 'call_tool', arguments: { name: 'ladder__lane_list', arguments: {} } });
    expect(lanes.isError, text(lanes)).toBeFalsy();
    expect(lanes.structuredContent).toEqual({ lanes: [] });

    const killed = await gateway.close();
    expect(killed, 'processes that outlived the client closing the gateway').toEqual([]);

    const doctor = await installedDoctor({ prefix: install.prefix, node: process.execPath, version: process.versions.node, root, label: LABEL });
    expect(doctor).toMatch(/^ok +better-sqlite3: \d+\.\d+\.\d+, SQLite \d/m);

    // Without its binding (as after an install whose build step failed), doctor says so and what to do.
    const binding = join(install.prefix, 'node_modules', 'better-sqlite3', 'build', 'Release', 'better_sqlite3.node');
    renameSync(binding, `${binding}.moved`);
    const missing = (await installedDoctor({ prefix: install.prefix, node: process.execPath, version: process.versions.node, root, label: LABEL })).split('\n').find((line) => line.includes('better-sqlite3:')) ?? '';
    expect(missing).toMatch(/^fail +better-sqlite3: its binding is missing /);
    expect(missing).toContain(`npm rebuild better-sqlite3\` in ${install.prefix} `);
    expect(missing).toContain('python3, make and g++');
    progress(LABEL, `done in ${seconds(performance.now() - started)}`);
  });
});
