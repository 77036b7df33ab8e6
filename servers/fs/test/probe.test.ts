import { it } from 'vitest';
import { startFs, lineFile } from './helpers.js';
it('probe', async () => {
  const h = await startFs({ 'wide.txt': lineFile(3000, (n) => `${n} ` + 'x'.repeat(1000)), 'n.txt': lineFile(3000), 'i.jpg': Buffer.from('ffd8ffe000104a464946', 'hex'), 'g.gif': Buffer.from('GIF89a\x01\x00'), 'big.png': Buffer.concat([Buffer.from('89504e470d0a1a0a', 'hex'), Buffer.alloc(100, 1)]) }, { policy: { limits: { count_lines_max_bytes: 1024, image_max_bytes: 50 } } });
  for (const [p, more] of [['wide.txt',{offset:-2000}],['n.txt',{offset:-3, limit: 2}],['i.jpg',{}],['g.gif',{}],['big.png',{}]] as const) {
    const r = await h.read(p, more as any);
    console.log('CASE', JSON.stringify([p, more]), r.isError, JSON.stringify(r.text.length > 400 ? r.text.slice(0,30) + ' ... ' + r.text.slice(-250) : r.text), JSON.stringify(r.content.map(c => [c.type, c.mimeType, c.data])));
  }
  await h.close();
});
