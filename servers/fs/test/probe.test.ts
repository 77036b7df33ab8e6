import { it } from 'vitest';
import { utimesSync, symlinkSync, mkdirSync } from 'node:fs';
import { startFs, gitInit } from './helpers.js';
it('probe', async () => {
  const files = {
    'a.ts': 'a', 'b.ts': 'b', 'src/c.ts': 'c', 'src/deep/d.ts': 'd', 'src/e.js': 'e',
    'ignored.ts': 'i', '.gitignore': 'ignored.ts\nbuild/\n', 'build/out.ts': 'o',
    '.github/workflows/ci.yml': 'ci', '.hidden.ts': 'h', '.env': 'x', 'node_modules/pkg/index.js': 'n', 'key.pem': 'k',
  };
  for (const engine of ['auto', 'builtin']) {
  const h = await startFs(files, { policy: { search_engine: engine, limits: { glob_max_results: 3 } } });
  gitInit(h.ws.root);
  const names = Object.keys(files);
  names.forEach((n, i) => utimesSync(h.ws.path(n), 1_600_000_000 + i * 100, 1_600_000_000 + i * 100));
  const cases: any[] = [
    { pattern: '*.ts' }, { pattern: '**/*.ts' }, { pattern: '**/*.ts', include_ignored: true }, { pattern: '**/*', hidden: true },
    { pattern: '.github/**' }, { pattern: '**/*.yml' }, { pattern: '../*.ts' }, { pattern: '*.zzz' }, { pattern: '*.ts', path: 'src' }, { pattern: '**/*.js' },
    { pattern: '*.ts', path: 'a.ts' }, {pattern: 'src/*.ts'}, {pattern: '/a.ts'}, {pattern: '*.{ts,js}', path: 'src'},
  ];
  for (const a of cases) {
    const r = await h.call('glob_files', a);
    console.log('CASE', engine, JSON.stringify(a), r.isError, JSON.stringify(r.text));
  }
  await h.close();
  }
  const h = await startFs({ 'b.txt': 'hello', 'a/x.txt': '1234', 'a/y/z.txt': '', 'z/q.txt': 'q', '.git/HEAD': 'ref', 'node_modules/p/i.js': 'x', '.dot': 'd' }, { policy: { limits: { list_max_entries: 2 } } });
  symlinkSync('b.txt', h.ws.path('in-link'));
  symlinkSync('/etc/passwd', h.ws.path('out-link'));
  symlinkSync('../../etc', h.ws.path('a/up-link'));
  symlinkSync('missing', h.ws.path('dangling'));
  for (const a of [{}, { depth: 3 }, { path: 'a', depth: 2 }, { path: 'b.txt' }, {path: 'in-link'}, {path: 'out-link'}, {path: 'a/y'}]) {
    const r = await h.call('list_files', a);
    console.log('CASE list', JSON.stringify(a), r.isError, JSON.stringify(r.text));
  }
  await h.close();
  const h2 = await startFs({ 'b.txt': 'hello', 'a/x.txt': '1234', 'a/y/z.txt': '', 'z/q.txt': 'q', '.git/HEAD': 'ref', 'node_modules/p/i.js': 'x', '.dot': 'd' , 'big.bin': Buffer.alloc(3000)});
  symlinkSync('b.txt', h2.ws.path('in-link'));
  symlinkSync('/etc/passwd', h2.ws.path('out-link'));
  mkdirSync(h2.ws.path('empty'));
  for (const a of [{}, { depth: 3 }, {path: 'empty'}]) {
    const r = await h2.call('list_files', a);
    console.log('CASE list', JSON.stringify(a), r.isError, JSON.stringify(r.text));
  }
  await h2.close();
});
