import { it } from 'vitest';
import { symlinkSync, mkdirSync, writeFileSync, rmSync } from 'node:fs';
import { basename, dirname, join } from 'node:path';
import { startFs } from './helpers.js';
it('probe', async () => {
  const h = await startFs({ 'a.txt': 'hello\n', '.env': 'S=1\n', 'id_rsa': 'k', 'x.pem': 'p', '.ssh/config': 'c', 'sub/ok.txt': 'ok\n', '.env.local': 'x', 'config.key': 'k' });
  const root = h.ws.root;
  const evil = `${root}_evil`;
  mkdirSync(evil); writeFileSync(join(evil, 'secret.txt'), 'secret\n');
  const outside = `${root}_out`;
  mkdirSync(outside); writeFileSync(join(outside, 'o.txt'), 'outside\n');
  symlinkSync(join(outside, 'o.txt'), h.ws.path('file-link'));
  symlinkSync(outside, h.ws.path('dir-link'));
  symlinkSync(join(root, 'nope'), h.ws.path('dangling'));
  const cases: any[] = [
    { path: '../x' }, { path: '/etc/passwd' }, { path: '~/x' }, { path: '~' }, {path: '~root/x'},
    { path: `../${basename(evil)}/secret.txt` }, { path: join(evil, 'secret.txt') },
    { path: 'file-link' }, { path: 'dir-link/o.txt' }, { path: 'dangling' }, { path: 'a.txt\0.png' }, { path: 'a'.repeat(10000) }, {path: ('abc/').repeat(1000)},
    { path: '．．/secret' }, { path: '..／x' }, { path: '\u2024\u2024/x' }, { path: '.env' }, { path: 'id_rsa' }, { path: 'x.pem' }, { path: '.ssh/config' }, {path: '.env.local'}, {path: 'config.key'},
    { path: 5 }, {}, { path: 'a.txt', offset: 'x' }, { path: 'a.txt', bogus: 1 }, { path: 'a.txt', offset: 0 }, { path: 'a.txt', limit: 0 }, {path: 'a.txt', offset: 1.5}, {path: ''}, {path: 'sub/../a.txt'}, {path: join(root, 'a.txt')}, {path: 'missing.txt'}, {path: 'a.txt/x'},
  ];
  for (const a of cases) {
    const r = await h.call('read_file', a);
    const ok = await h.read('a.txt');
    console.log('CASE', JSON.stringify(a).slice(0, 100), r.isError, JSON.stringify(r.text.replaceAll(root, '<ROOT>')).slice(0, 400), ok.text === '     1\thello');
  }
  await h.close();
  rmSync(evil, { recursive: true }); rmSync(outside, { recursive: true });
  const d = await startFs({ 'a.txt': 'x' }, { policy: { tools: { grep: { enabled: false } } } });
  console.log('CASE', (await d.client.listTools()).tools.map(t => t.name), JSON.stringify(await d.call('grep', { pattern: 'x' })));
  await d.close();
  const e = await startFs({ 'a.txt': 'x' }, { policy: { enabled: false } });
  console.log('CASE', (await e.client.listTools()).tools.map(t => t.name), JSON.stringify(await e.call('read_file', { path: 'a.txt' })));
  await e.close();
});
