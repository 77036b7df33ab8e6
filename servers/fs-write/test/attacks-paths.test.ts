import { existsSync, linkSync, mkdirSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { basename, join } from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { sha256, skipAudit, snapshot, strayTemps } from './attack-kit.js';
import { startFsWrite, type FsWriteHarness } from './helpers.js';

/** Each changing tool, with arguments that would change `path` if the path were let through. */
const TOOLS = {
  write_file: (path: string) => ({ path, content: 'pwned\n' }),
  edit_file: (path: string) => ({ path, old_string: 'original', new_string: 'pwned' }),
  multi_edit: (path: string) => ({ path, edits: [{ old_string: 'original', new_string: 'pwned' }] }),
} as const;
type ToolName = keyof typeof TOOLS;

describe.each(Object.keys(TOOLS) as ToolName[])('%s: every path attack is refused exactly and changes nothing', (tool) => {
  let fsw: FsWriteHarness;
  let root: string;
  let out: string;
  let evil: string;
  let expected: { root: Record<string, string>; out: Record<string, string>; evil: Record<string, string> };
  const take = () => ({ root: snapshot(root, skipAudit), out: snapshot(out), evil: snapshot(evil) });

  beforeAll(async () => {
    fsw = await startFsWrite({
      'a.txt': 'original a\n',
      'sub/inside.txt': 'original inside\n',
      '．．/secret.txt': 'original: a folder literally named with two fullwidth full stops\n',
    });
    root = fsw.ws.root;
    // Beside the root: one sibling whose name starts with the root's name, one plainly outside.
    evil = `${root}_evil`;
    out = `${root}_out`;
    mkdirSync(evil);
    writeFileSync(join(evil, 'x.txt'), 'original evil\n');
    mkdirSync(join(out, 'sub'), { recursive: true });
    writeFileSync(join(out, 'o.txt'), 'original outside\n');
    writeFileSync(join(out, 'sub/x.txt'), 'original outside sub\n');
    writeFileSync(join(out, 'hard.txt'), 'original hard-linked\n');
    symlinkSync(join(out, 'o.txt'), join(root, 'file-link'));
    symlinkSync(out, join(root, 'dir-link'));
    symlinkSync(join(out, 'gone.txt'), join(root, 'dangling-out'));
    symlinkSync(join(out, 'missing-dir'), join(root, 'dangling-dir'));
    symlinkSync('sub/inside.txt', join(root, 'inside-file-link'));
    linkSync(join(out, 'hard.txt'), join(root, 'hl.txt'));
    symlinkSync('loop', join(root, 'loop'));
    expected = take();
  });
  afterAll(async () => {
    await fsw.close();
    rmSync(evil, { recursive: true, force: true });
    rmSync(out, { recursive: true, force: true });
  });
  afterEach(() => {
    expect(take()).toEqual(expected);
    expect([...strayTemps(root), ...strayTemps(out)]).toEqual([]);
  });

  const refused = async (path: string, text: string) => {
    expect(await fsw.call(tool, TOOLS[tool](path))).toEqual({ isError: true, text });
  };
  const outsideRoots = (input: string) => `${input} is outside the allowed roots (${root}); give a path inside them`;

  it('refuses .. out of the root', async () => {
    await refused('../x.txt', outsideRoots('../x.txt'));
    await refused('sub/../../x.txt', outsideRoots('sub/../../x.txt'));
    await refused(`../${basename(out)}/o.txt`, outsideRoots(`../${basename(out)}/o.txt`));
  });

  it('refuses an absolute path outside the root', async () => {
    await refused(join(out, 'o.txt'), outsideRoots(join(out, 'o.txt')));
    await refused(join(out, 'new.txt'), outsideRoots(join(out, 'new.txt')));
    await refused('/', outsideRoots('/'));
  });

  it('does not expand ~', async () => {
    const text = `"~" is not expanded: give a path relative to the root (${root}) or an absolute path inside it`;
    await refused('~/x.txt', text);
    await refused('~', text);
    await refused('~root/.bashrc', text);
  });

  it('refuses the sibling folder whose name starts with the root name', async () => {
    await refused(`../${basename(evil)}/x.txt`, outsideRoots(`../${basename(evil)}/x.txt`));
    await refused(join(evil, 'x.txt'), outsideRoots(join(evil, 'x.txt')));
    await refused(join(evil, 'new.txt'), outsideRoots(join(evil, 'new.txt')));
  });

  it('refuses the root folder itself', async () => {
    await refused('.', '. is a root folder itself; give a path inside it');
    await refused(root, `${root} is a root folder itself; give a path inside it`);
  });

  it('refuses NUL bytes', async () => {
    await refused('a.txt\0.png', 'path contains a NUL byte; remove it');
    await refused('\0', 'path contains a NUL byte; remove it');
  });

  it('refuses an over-long path and an over-long name (counted in bytes)', async () => {
    await refused('a'.repeat(10_000), 'path is 10000 characters long; the limit is 4096');
    await refused(`sub/${'n'.repeat(300)}`, 'a path component is 300 bytes long; the limit is 255');
    await refused(`sub/${'é'.repeat(128)}`, 'a path component is 256 bytes long; the limit is 255');
  });

  it('writes a name of 254 bytes in 127 characters (its temp file name is cut by bytes, not characters)', async () => {
    const name = `sub/${'é'.repeat(127)}`;
    if (tool !== 'write_file') return refused(name, `${name} does not exist; use write_file to create it`);
    const made = await fsw.call(tool, TOOLS[tool](name));
    expect(made.text.split('\n')[0]).toBe(`Created ${name} (new file; +1 −0 lines; 6 B; sha256 ${sha256('pwned\n')})`);
    expect(readFileSync(join(root, name), 'utf8')).toBe('pwned\n');
    const replaced = await fsw.call(tool, { path: name, content: 'again\n' });
    expect(replaced.text.split('\n')[0]).toBe(`Updated ${name} (replaced; +1 −1 lines; 6 B; sha256 ${sha256('again\n')})`);
    rmSync(join(root, name));
  });

  it('refuses a symlinked file pointing outside: the link is not followed', async () => {
    await refused('file-link', `file-link is a symlink (-> ${out}/o.txt); it is not followed: change the file it points to by its own path`);
  });

  it('refuses a symlinked file pointing inside as well: a symlink is never followed', async () => {
    await refused('inside-file-link', 'inside-file-link is a symlink (-> sub/inside.txt); it is not followed: change the file it points to by its own path');
  });

  it('refuses a path through a symlinked folder pointing outside, existing or new', async () => {
    await refused('dir-link/o.txt', `dir-link/o.txt resolves through a symlink to ${out}/o.txt, which is outside the allowed roots (${root})`);
    await refused('dir-link/sub/x.txt', `dir-link/sub/x.txt resolves through a symlink to ${out}/sub/x.txt, which is outside the allowed roots (${root})`);
    await refused('dir-link/new/deep.txt', `dir-link/new/deep.txt resolves through a symlink to ${out}/new/deep.txt, which is outside the allowed roots (${root})`);
  });

  it('refuses a dangling symlink pointing outside and does not create its target', async () => {
    await refused('dangling-out', `dangling-out is a symlink (-> ${out}/gone.txt); it is not followed: change the file it points to by its own path`);
    await refused('dangling-dir/x.txt', `${root}/dangling-dir is a dangling symlink (-> ${out}/missing-dir); it is refused rather than followed`);
    expect(existsSync(join(out, 'gone.txt'))).toBe(false);
    expect(existsSync(join(out, 'missing-dir'))).toBe(false);
  });

  it('refuses a hard link to a file outside the roots, which stays unchanged', async () => {
    await refused('hl.txt', 'hl.txt has 2 hard links; a file that is also reachable elsewhere (perhaps outside the roots) is not changed through one of its names');
    expect(readFileSync(join(out, 'hard.txt'), 'utf8')).toBe('original hard-linked\n');
  });

  it('refuses a symlink loop and a file used as a folder', async () => {
    await refused('loop', 'loop is a symlink (-> loop); it is not followed: change the file it points to by its own path');
    await refused('loop/x.txt', `${root}/loop goes through a loop of symlinks (or too many of them); it is refused`);
    await refused('a.txt/x.txt', 'a.txt/x.txt cannot be a file: a part of its path is a file, not a folder');
    await refused('a.txt/deeper/x.txt', 'a.txt/deeper/x.txt cannot be a file: a part of its path is a file, not a folder');
  });

  it('treats fullwidth dots and slashes, and backslashes, as ordinary names inside the root', async () => {
    if (tool === 'write_file') {
      const made = await fsw.call(tool, TOOLS[tool]('．．/new.txt'));
      expect(made.text.split('\n')[0]).toBe(`Created ．．/new.txt (new file; +1 −0 lines; 6 B; sha256 ${sha256('pwned\n')})`);
      const slash = await fsw.call(tool, TOOLS[tool]('..／x.txt'));
      expect(slash.text.split('\n')[0]).toBe(`Created ..／x.txt (new file; +1 −0 lines; 6 B; sha256 ${sha256('pwned\n')})`);
      // On Linux a backslash is part of a name, not a separator.
      const backslash = await fsw.call(tool, TOOLS[tool]('..\\x.txt'));
      expect(backslash.text.split('\n')[0]).toBe(`Created ..\\x.txt (new file; +1 −0 lines; 6 B; sha256 ${sha256('pwned\n')})`);
      expect(readFileSync(join(root, '..\\x.txt'), 'utf8')).toBe('pwned\n');
      rmSync(join(root, '..\\x.txt'));
      expect(readFileSync(join(root, '．．/new.txt'), 'utf8')).toBe('pwned\n');
      expect(readFileSync(join(root, '..／x.txt'), 'utf8')).toBe('pwned\n');
      rmSync(join(root, '．．/new.txt'));
      rmSync(join(root, '..／x.txt'));
      return;
    }
    const edited = await fsw.call(tool, TOOLS[tool]('．．/secret.txt'));
    expect(edited.isError).toBe(false);
    expect(readFileSync(join(root, '．．/secret.txt'), 'utf8')).toBe('pwned: a folder literally named with two fullwidth full stops\n');
    writeFileSync(join(root, '．．/secret.txt'), 'original: a folder literally named with two fullwidth full stops\n');
    await refused('..／x.txt', '..／x.txt does not exist; use write_file to create it');
  });
});
