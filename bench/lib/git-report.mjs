// The git bench's table: three sides per case (bulkhead, the peer server, raw git), medians with
// p90, the two ratios the targets are about, peak RSS, and what each side returned.
import { formatMs } from './measure.mjs';

export const SIDE_NAMES = { bulkhead: 'bulkhead', peer: 'peer', git: 'raw git' };

function timeCell(m) {
  if (m.error) return m.error.startsWith('timeout') ? 'timeout' : `error after ${formatMs(m.errorMs)}`;
  const p90 = m.times.length > 1 ? ` (p90 ${formatMs(m.p90)})` : '';
  return `${formatMs(m.median)}${p90}${m.note ? ' †' : ''}${m.wrong ? ' ✗' : ''}`;
}

function rssCell(m) {
  const mib = (m?.peakRssKb ?? 0) / 1024;
  if (!mib) return '—';
  return mib < 1024 ? `${Math.round(mib)} MiB` : `${(mib / 1024).toFixed(1)} GiB`;
}

function ratioCell(top, bottom) {
  if (!top || !bottom || top.error || bottom.error || !top.median || !bottom.median) return 'n/a';
  const r = top.median / bottom.median;
  return `${r.toFixed(r < 10 ? 2 : 0)}×`;
}

function notesCell(row, sides) {
  const parts = [];
  for (const key of sides) {
    const m = row[key];
    const request = key === 'git' ? row.rawCommand : row.requests[key];
    const outcome = m.wrong ? `WRONG: ${m.wrong}` : m.error ? `failed: ${m.error.replace(/^error: /, '')}` : m.detail;
    parts.push(`${SIDE_NAMES[key]} \`${request}\`: ${outcome ?? 'no reply'}${m.note ? ` († ${m.note})` : ''}`);
  }
  return parts.join('; ').replaceAll('|', '\\|');
}

export function gitTable(rows, sides) {
  const has = (key) => sides.includes(key);
  const header = ['case', ...sides.map((key) => `${SIDE_NAMES[key]} median`)];
  if (has('bulkhead') && has('peer')) header.push('speed vs peer (peer / bulkhead)');
  if (has('bulkhead') && has('git')) header.push('bulkhead / raw git');
  if (has('bulkhead')) header.push('bulkhead peak RSS');
  if (has('peer')) header.push('peer peak RSS');
  if (has('git')) header.push('raw git peak RSS');
  header.push('replies');
  const lines = [`| ${header.join(' | ')} |`, `|${header.map((_, i) => (i === 0 || i === header.length - 1 ? ' --- ' : ' ---: ')).join('|')}|`];
  for (const row of rows) {
    const cells = [row.label, ...sides.map((key) => timeCell(row[key]))];
    if (has('bulkhead') && has('peer')) cells.push(ratioCell(row.peer, row.bulkhead));
    if (has('bulkhead') && has('git')) cells.push(ratioCell(row.bulkhead, row.git));
    if (has('bulkhead')) cells.push(rssCell(row.bulkhead));
    if (has('peer')) cells.push(rssCell(row.peer));
    if (has('git')) cells.push(rssCell(row.git));
    cells.push(notesCell(row, sides));
    lines.push(`| ${cells.join(' | ')} |`);
  }
  return lines.join('\n');
}
