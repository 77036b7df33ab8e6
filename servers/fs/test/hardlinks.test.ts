import { linkSync, statSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { tempWorkspace, type TempWorkspace } from '@bulkhead/core/testing';
import { DenyInodes } from '../src/lib/deny-inodes.js';
import { startFs, type FsHarness } from './helpers.js';

for (const engine of ['ripgrep', 'builtin'] as const) {
  describe(`hard links (${engine})`, () => {
    let fs: FsHarness;
    let outside: TempWorkspace;
    beforeAll(async () => {
      outside = tempWorkspace({ 'outside.txt': 'OUTSIDE_SECRET\n' }, 'bulkhead-fs-outside-');
      fs = await startFs(
        {
          '.env': 'API_TOKEN=hunter2\n',
          'keys/server.pem': '-----BEGIN PRIVATE KEY----- PEM_SECRET\n',
          'home/.ssh/config': 'Host secret-host SSH_SECRET\n',
          'shared-a.txt': 'SHARED two names\n',
          'plain.txt': 'nothing here\n',
        },
        { policy: { search_engine: engine } },
      );
      linkSync(fs.ws.path('.env'), fs.ws.path('notes.txt'));
      linkSync(fs.ws.path('keys/server.pem'), fs.ws.path('docs-readme.md'));
      linkSync(fs.ws.path('shared-a.txt'), fs.ws.path('shared-b.txt'));
      linkSync(fs.ws.path('home/.ssh/config'), fs.ws.path('sub-ssh.txt'));
      linkSync(outside.path('outside.txt'), fs.ws.path('linked-out.txt'));
    });
    afterAll(async () => {
      await fs.close();
      outside.cleanup();
    });

    it('read_file refuses a second name of a deny_read file and says which one', async () => {
      const result = await fs.read('notes.txt');
      expect(result.isError).toBe(true);
      expect(result.text).toContain('hard link to .env');
      expect(result.text).not.toContain('hunter2');
      const pem = await fs.read('docs-readme.md');
      expect(pem.isError).toBe(true);
      expect(pem.text).toContain('keys/server.pem');
      const ssh = await fs.read('sub-ssh.txt');
      expect(ssh.isError).toBe(true);
      expect(ssh.text).toContain('home/.ssh/config');
    });

    it('a link made after the index was built is refused too (the index holds every deny_read file)', async () => {
      await fs.read('shared-a.txt');
      linkSync(fs.ws.path('.env'), fs.ws.path('later.txt'));
      const result = await fs.read('later.txt');
      expect(result.isError).toBe(true);
      expect(result.text).not.toContain('hunter2');
    });

    it('grep never shows the content of such a link, in any mode', async () => {
      for (const mode of ['content', 'files_with_matches', 'count']) {
        const result = await fs.call('grep', { pattern: 'hunter2|PEM_SECRET|SSH_SECRET', output_mode: mode, hidden: true });
        expect(result.text, mode).toMatch(/^No matches/);
        const single = await fs.call('grep', { pattern: 'hunter2', path: 'notes.txt', output_mode: mode });
        expect(single.text, mode).toMatch(/^No matches/);
      }
    });

    it('glob_files leaves such a link out, as it leaves the deny_read file out', async () => {
      const result = await fs.call('glob_files', { pattern: '**/*' });
      expect(result.text.split('\n').sort()).toEqual(['linked-out.txt', 'plain.txt', 'shared-a.txt', 'shared-b.txt']);
    });

    it('files with several names that are not secrets read as usual', async () => {
      expect((await fs.read('shared-b.txt')).text).toContain('SHARED two names');
      expect((await fs.call('grep', { pattern: 'SHARED' })).text.split('\n')).toEqual(['shared-a.txt', 'shared-b.txt']);
    });

    it('a hard link to a file outside the roots cannot be told apart from a file of the root (documented)', async () => {
      expect(statSync(fs.ws.path('linked-out.txt')).nlink).toBe(2);
      expect((await fs.read('linked-out.txt')).text).toContain('OUTSIDE_SECRET');
    });
  });
}

describe('DenyInodes', () => {
  it('refuses every file with several links when the roots are larger than its bound', async () => {
    const ws = tempWorkspace({ 'a.txt': 'a', 'b.txt': 'b', 'c.txt': 'c' }, 'bulkhead-fs-inodes-');
    try {
      linkSync(ws.path('a.txt'), ws.path('a2.txt'));
      const small = new DenyInodes([ws.root], ['.env*'], { maxEntries: 2 });
      const stat = statSync(ws.path('a.txt'));
      expect(await small.denial(stat)).toMatch(/too large/);
      expect(await small.denial(statSync(ws.path('b.txt')))).toBeUndefined();
      const large = new DenyInodes([ws.root], ['.env*']);
      expect(await large.denial(stat)).toBeUndefined();
    } finally {
      ws.cleanup();
    }
  });
});
