// Node 22 smoke: Node 22 from the npm registry (node-<platform>-<arch>@22, which ships its own
// headers), the packed tarballs installed with it into an empty prefix (node-gyp pointed at
// those headers), the installed `bulkhead start` run by it, and a ladder call through an MCP
// client, so better-sqlite3 is built for and loaded by Node 22. Skips only when Node 22 cannot be
// had from the registry, and says why. Progress lines go to stderr.
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { sqliteBindingProblem } from '../../scripts/ensure.mjs';
import { installTarballs, installedDoctor, kib, node22, packAll, progress, scratchDir, seconds, startInstalledGateway, stopAll } from './packing.js';
import { text } from './helpers.js';

const LABEL = 'node 22';
const scratch = scratchDir('bulkhead-node22-');

afterAll(async () => {
  await stopAll();
  scratch.remove();
}, 5 * 60_000);

describe('under Node 22', () => {
  it('installs the tarballs with Node 22 and serves a ladder call from the install', { timeout: 20 * 60_000 }, async (ctx) => {
    const started = performance.now();
    const got = await node22(join(scratch.path, 'node22'), LABEL);
    if ('skip' in got) {
      progress(LABEL, `skipped: ${got.skip}`);
      ctx.skip(got.skip);
      return;
    }
    const { node, version } = got;
    expect(version).toMatch(/^22\./);

    const tarballs = await packAll(join(scratch.path, 'tarballs'), LABEL);
    progress(LABEL, `packed ${tarballs.length} packages, ${kib(tarballs.reduce((sum, t) => sum + t.bytes, 0))}`);
    const installStarted = performance.now();
    const install = await installTarballs({ tarballs, prefix: join(scratch.path, 'prefix'), node, version, label: LABEL });

    const root = join(scratch.path, 'root');
    mkdirSync(root);
    const gateway = await startInstalledGateway({ prefix: install.prefix, node, version, root });
    const lanes = await gateway.client.callTool({ name: 'call_tool', arguments: { name: 'ladder__lane_list', arguments: {} } });
    const firstCall = performance.now();
    expect(lanes.isError, `${text(lanes)}\n${gateway.stderr()}`).toBeFalsy();
    expect(lanes.structuredContent).toEqual({ lanes: [] });
    progress(LABEL, `first tool call answered ${seconds(firstCall - installStarted)} after npm install began in an empty prefix (install ${seconds(install.ms)}); Node 22 fetched in ${seconds(got.ms)}`);
    expect(await gateway.close(), 'processes that outlived the client closing the gateway').toEqual([]);

    // The gateway and the ladder it started ran on Node 22: doctor, run by it, says so.
    const doctor = await installedDoctor({ prefix: install.prefix, node, version, root, label: LABEL });
    expect(doctor).toContain(`ok   node: v${version}`);
    expect(doctor).toMatch(/^ok +better-sqlite3: /m);

    // The same install run by this test's Node: the binding was built for Node 22, and doctor says what to do.
    if (process.versions.modules !== '127') {
      const mismatch = await installedDoctor({ prefix: install.prefix, node: process.execPath, version: process.versions.node, root, label: LABEL });
      const line = mismatch.split('\n').find((l) => l.includes('better-sqlite3:')) ?? '';
      expect(line).toMatch(/^fail +better-sqlite3: its binding was built for another Node: NODE_MODULE_VERSION 127, while this Node/);
      expect(line).toContain(`needs NODE_MODULE_VERSION ${process.versions.modules}`);
      expect(line).toContain(`npm rebuild better-sqlite3\` in ${install.prefix} `);
      expect(line).toContain('python3, make and g++');
      // And the workspace's own binding, built for this Node, is one Node 22 cannot load: what
      // scripts/ensure.mjs detects to rebuild it after a switch of Node versions.
      expect(sqliteBindingProblem(node)).toEqual({ kind: 'mismatch', detail: `built for NODE_MODULE_VERSION ${process.versions.modules}, this Node needs 127` });
    }
    progress(LABEL, `done in ${seconds(performance.now() - started)}`);
  });
});
