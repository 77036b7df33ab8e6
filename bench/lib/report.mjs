// Markdown rendering of bench rows: { label, ours, peer, notes } with measurements from measure.mjs.
import { formatMs } from './measure.mjs';

export function ratio(row) {
  const { ours, peer } = row;
  if (ours.error || peer.error || !ours.median || !peer.median) return undefined;
  return peer.median / ours.median;
}

function timeCell(measurement) {
  if (measurement.error) return measurement.error.startsWith('timeout') ? 'timeout' : `error after ${formatMs(measurement.errorMs)}`;
  return formatMs(measurement.median) + (measurement.note ? ' †' : '');
}

function rssCell(measurement) {
  const mib = measurement.peakRssKb / 1024;
  if (!mib) return '—';
  return mib < 1024 ? `${Math.round(mib)} MiB` : `${(mib / 1024).toFixed(1)} GiB`;
}

function notesCell(row) {
  const parts = [row.notes];
  const failure = (error) => error.replace(/^error: /, '');
  if (row.ours.error) parts.push(`bulkhead failed: ${failure(row.ours.error)}`);
  if (row.peer.error) parts.push(`${row.peerName ?? 'peer'} failed: ${failure(row.peer.error)}`);
  if (row.ours.note) parts.push(`bulkhead: † ${row.ours.note}`);
  if (row.peer.note) parts.push(`${row.peerName ?? 'peer'}: † ${row.peer.note}`);
  return parts.filter(Boolean).join('; ').replaceAll('|', '\\|');
}

export function markdownTable(rows) {
  const header = ['case', 'bulkhead median', 'peer median', 'ratio (peer / bulkhead)', 'bulkhead peak RSS', 'peer peak RSS', 'notes'];
  const lines = [`| ${header.join(' | ')} |`, `|${header.map((_, i) => (i === 0 || i === header.length - 1 ? ' --- ' : ' ---: ')).join('|')}|`];
  for (const row of rows) {
    const r = ratio(row);
    const cells = [row.label, timeCell(row.ours), timeCell(row.peer), r === undefined ? 'n/a' : `${r.toFixed(r < 10 ? 2 : 0)}×`, rssCell(row.ours), rssCell(row.peer), notesCell(row)];
    lines.push(`| ${cells.join(' | ')} |`);
  }
  return lines.join('\n');
}
