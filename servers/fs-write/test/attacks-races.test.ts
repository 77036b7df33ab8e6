import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync, lstatSync, mkdirSync, readFileSync, renameSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { expectedFromStat, makeFoldersSafely, Roots, writeFileSafely, type ConfinedPath } from '@bulkhead/core';
import { tempWorkspace, type TempWorkspace } from '@bulkhead/core/testing';
import { snapshot, strayTemps } from './attack-kit.js';
import { startFsWrite, type FsWriteHarness } from './helpers.js';

describe('a folder above the target swapped for a symlink between the check and the write', () => {
  let outer: TempWorkspace;
  let root: string;
  let out: string;
  let roots: Roots;
  beforeAll(() => {
    outer = tempWorkspace({ 'root/d/sub/existing.txt': 'original inside\n', 'out/sub/existing.txt': 'original outside\n' });
    root = outer.path('root');
    out = outer.path('out');
    roots = new Roots([root], { controlDir: join(root, '.bulkhead'), denyRead: [] });
  });
  afterAll(() => outer.cleanup());
  afterEach(() => {
    // Put the real folder back for the next case.
    if (lstatSync(join(root, 'd')).isSymbolicLink()) {
      rmSync(join(root, 'd'));
      renameSync(join(root, 'd.real'), join(root, 'd'));
    }
  });
  const swap = () => {
    renameSync(join(root, 'd'), join(root, 'd.real'));
    symlinkSync(out, join(root, 'd'));
  };

  it('does not create a new file outside (the open folder is checked, not only its last component)', async () => {
    const before = snapshot(out);
    const entry = await roots.confineEntry('d/sub/new.txt');
    swap();
    await expect(writeFileSafely(entry, 'pwned', 'd/sub/new.txt', { kind: 'absent' })).rejects.toThrow(
      'the folder of d/sub/new.txt changed while it was being written (a folder above it was swapped for a symlink?); nothing was written',
    );
    expect(snapshot(out)).toEqual(before);
    expect(existsSync(join(root, 'd.real/sub/new.txt'))).toBe(false);
  });

  it('does not replace a file outside', async () => {
    const before = snapshot(out);
    const entry = await roots.confineEntry('d/sub/existing.txt');
    const stat = lstatSync(entry);
    swap();
    await expect(writeFileSafely(entry, 'pwned', 'd/sub/existing.txt', expectedFromStat(stat))).rejects.toThrow(
      'the folder of d/sub/existing.txt changed while it was being written (a folder above it was swapped for a symlink?); nothing was written',
    );
    expect(snapshot(out)).toEqual(before);
    expect(readFileSync(join(root, 'd.real/sub/existing.txt'), 'utf8')).toBe('original inside\n');
  });

  it('does not create missing folders outside (mkdir -p would follow the symlink)', async () => {
    const before = snapshot(out);
    const entry = await roots.confineEntry('d/sub/new/deeper/x.txt');
    swap();
    await expect(makeFoldersSafely(roots, dirname(entry) as ConfinedPath, 'd/sub/new/deeper/x.txt')).rejects.toThrow('d is not a folder (a file or a symlink is there)');
    expect(snapshot(out)).toEqual(before);
  });

  it('creates missing folders one by one inside the root', async () => {
    const entry = await roots.confineEntry('d/sub/a/b/c.txt');
    expect(await makeFoldersSafely(roots, dirname(entry) as ConfinedPath, 'd/sub/a/b/c.txt')).toEqual([join(root, 'd/sub/a'), join(root, 'd/sub/a/b')]);
    writeFileSync(join(root, 'd/sub/file'), '');
    const blocked = await roots.confineEntry('d/sub/file/x.txt');
    await expect(makeFoldersSafely(roots, dirname(blocked) as ConfinedPath, 'd/sub/file/x.txt')).rejects.toThrow('d/sub/file is not a folder (a file or a symlink is there)');
    rmSync(join(root, 'd/sub/a'), { recursive: true });
    rmSync(join(root, 'd/sub/file'));
  });
});

/**
 * A child process that flips `d` between the real folder and a symlink to `out` as fast as it can
 * (rename the folder away, put a symlink in its place, then back), until it is killed.
 */
function startFlipper(root: string, out: string): ChildProcess {
  // When the server creates \`d\` anew in the moment it is missing, the folder put aside stays
  // aside under its own name and the flipping goes on with the new one.
  const script = `
    const fs = require('node:fs');
    const [d, out] = process.argv.slice(1);
    process.send('ready');
    const wait = (us) => { const until = process.hrtime.bigint() + BigInt(Math.floor(us * 1000)); while (process.hrtime.bigint() < until); };
    for (let i = 0; ; i++) {
      const hold = d + '.hold-' + i;
      try { fs.renameSync(d, hold); } catch {}
      try { fs.symlinkSync(out, d); } catch {}
      wait(50 + Math.random() * 400);
      try { if (fs.lstatSync(d).isSymbolicLink()) fs.unlinkSync(d); } catch {}
      try { fs.renameSync(hold, d); } catch {}
      wait(50 + Math.random() * 400);
    }`;
  return spawn(process.execPath, ['-e', script, join(root, 'd'), out], { stdio: ['ignore', 'ignore', 'inherit', 'ipc'] });
}

function stop(child: ChildProcess): Promise<void> {
  return new Promise((resolve) => {
    if (child.exitCode !== null || child.signalCode !== null) return resolve();
    child.once('exit', () => resolve());
    child.kill('SIGKILL');
  });
}

/** Every outcome a write may have while `d` flips (paths and numbers normalised), and nothing else. */
const RACE_OUTCOMES = new Set(
  ['write_file', 'edit_file'].flatMap((tool) =>
    [
      'Created',
      'Updated',
      // The check saw the symlink.
      '<path> resolves through a symlink to <out>/…, which is outside the allowed roots (<root>)',
      '<root>/d is a dangling symlink (-> <out>); it is refused rather than followed',
      '<root>/d changed while the path was being checked (a symlink swapped?); try again',
      // The check saw the folder; the read or the write saw the symlink, or no folder at all.
      '<path> changed while it was being opened and now points outside the allowed roots; nothing was read',
      '<path> does not exist',
      '<path> does not exist; use write_file to create it',
      'the folder of <path> changed while it was being written (a folder above it was swapped for a symlink?); nothing was written',
      'the folder of <path> changed while it was being written (it is now a symlink or a file); nothing was written',
      'the folder of <path> was removed while it was being written; nothing was written',
      '<path> appeared while it was being created; nothing was written',
      '<path> changed on disk since it was read (another writer?); nothing was written. Read it again and retry.',
      'cannot create the folders for <path>: d is not a folder (a file or a symlink is there); nothing was written',
      'cannot create the folders for <path>: d was removed while the folders were being created; nothing was written',
      '<path> changed while its folders were being created; nothing was written',
    ].map((outcome) => `${tool}: ${outcome}`),
  ),
);

describe('stress: a folder and a symlink to outside flipped in a child process while the server writes', () => {
  let fsw: FsWriteHarness;
  let out: string;
  let flipper: ChildProcess | undefined;
  beforeAll(async () => {
    fsw = await startFsWrite({ 'd/sub/existing.txt': 'original inside\n', 'd/top.txt': 'original top\n' });
    out = `${fsw.ws.root}_out`;
    mkdirSync(join(out, 'sub'), { recursive: true });
    writeFileSync(join(out, 'sub/existing.txt'), 'original outside\n');
    writeFileSync(join(out, 'top.txt'), 'original outside top\n');
  });
  afterAll(async () => {
    if (flipper) await stop(flipper);
    await fsw.close();
    rmSync(out, { recursive: true, force: true });
  });

  it('never writes, creates or replaces anything outside, and every refusal is one of the known ones', async () => {
    const root = fsw.ws.root;
    const outside = snapshot(out);
    flipper = startFlipper(root, out);
    await new Promise((resolve) => flipper!.once('message', resolve));
    const N = 150;
    const outcomes = new Map<string, number>();
    const note = (text: string) => outcomes.set(text, (outcomes.get(text) ?? 0) + 1);
    const normal = (text: string, path: string) =>
      text
        .replaceAll(path, '<path>')
        .replaceAll(out, '<out>')
        .replaceAll(root, '<root>')
        .replace(/^(Created|Updated) .*/s, '$1')
        .replace(/<out>\/[^,]*,/, '<out>/…,');
    for (let i = 0; i < N; i++) {
      const calls: [string, Record<string, unknown>, string][] = [
        ['write_file', { path: `d/sub/new-${i}.txt`, content: `new ${i}\n` }, `d/sub/new-${i}.txt`],
        ['write_file', { path: `d/top-${i}.txt`, content: `top ${i}\n` }, `d/top-${i}.txt`],
        ['write_file', { path: `d/sub/dir-${i}/deep/x.txt`, content: `deep ${i}\n` }, `d/sub/dir-${i}/deep/x.txt`],
        ['write_file', { path: 'd/sub/existing.txt', content: `replaced ${i}\n` }, 'd/sub/existing.txt'],
        ['edit_file', { path: 'd/top.txt', old_string: 'top', new_string: 'top' + '!' }, 'd/top.txt'],
      ];
      for (const [tool, args, path] of calls) note(`${tool}: ${normal((await fsw.call(tool, args)).text, path)}`);
      if (i % 25 === 0) expect(snapshot(out)).toEqual(outside);
    }
    await stop(flipper);
    flipper = undefined;
    expect(snapshot(out)).toEqual(outside);
    expect([...strayTemps(root), ...strayTemps(out)]).toEqual([]);
    const unexpected = [...outcomes.keys()].filter((outcome) => !RACE_OUTCOMES.has(outcome));
    expect(unexpected, JSON.stringify([...outcomes], null, 1)).toEqual([]);
    // The writes that saw a real folder went through, inside.
    expect(outcomes.get('write_file: Created') ?? 0).toBeGreaterThan(0);
  });
});
