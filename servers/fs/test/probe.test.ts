import { it } from 'vitest';
import { startFs, gitInit } from './helpers.js';
it('probe', async () => {
  for (const engine of ['auto', 'builtin']) {
  const h = await startFs({ 'a.txt': 'a'.repeat(40) + '!\n', 'secrets/prod.yaml': 'token alpha\n', 'other/prod.yaml': 'alpha\n', '.env': 'alpha\n', '.ssh/config': 'alpha\n', 'k.pem': 'alpha\n', 'sub/.env.local': 'alpha\n', 'id_rsa.pub': 'alpha\n' }, { policy: { search_engine: engine, deny_read: ['.env*', '*.pem', 'id_rsa*', '.ssh/', 'secrets/prod.yaml'], limits: { grep_timeout_ms: 500 } } });
  gitInit(h.ws.root);
  let t = Date.now();
  let r = await h.call('grep', { pattern: '(a+)+$', output_mode: 'content' });
  console.log('CASE', engine, Date.now() - t, JSON.stringify(r));
  r = await h.read('a.txt');
  console.log('CASE', engine, JSON.stringify(r.text));
  for (const a of [{ pattern: 'alpha', hidden: true }, { pattern: 'alpha', hidden: true, path: 'secrets' }, { pattern: 'alpha', hidden: true, glob: '.env' }, { pattern: 'alpha', hidden: true, glob: '**' }, { pattern: 'alpha', hidden: true, glob: '.ssh/**' }, { pattern: 'alpha', hidden: true, glob: '*.pem' }, {pattern: 'alpha', hidden: true, output_mode: 'content', glob: '*'}]) {
    r = await h.call('grep', a);
    console.log('CASE', engine, JSON.stringify(a), JSON.stringify(r.text));
  }
  for (const a of [{ pattern: '**/*', hidden: true }, { pattern: '**/*', path: 'secrets' }, { pattern: '.env', hidden: true }, { pattern: '.ssh/*' }, { pattern: '**/*', hidden: true, include_ignored: true }]) {
    r = await h.call('glob_files', a);
    console.log('CASE glob', engine, JSON.stringify(a), JSON.stringify(r.text));
  }
  await h.close();
  }
});
