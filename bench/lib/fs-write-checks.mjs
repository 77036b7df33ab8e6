// The correctness table of the fs-write bench: the same small scenarios against both servers,
// each judged from the bytes and metadata on disk afterwards, not from what the server says.
import { chmodSync, lstatSync, mkdirSync, readFileSync, utimesSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

const OLD_TIME = new Date('2020-01-01T00:00:00Z');

function firstLine(reply) {
  return (reply.failure ?? reply.text ?? '').split('\n')[0].slice(0, 140);
}

/** Bytes shown short and with line ends visible, for a detail cell. */
function visible(bytes) {
  const text = JSON.stringify(bytes.toString('utf8'));
  return text.length > 90 ? `${text.slice(0, 87)}…` : text;
}

function lineEnds(bytes) {
  const text = bytes.toString('utf8');
  const crlf = text.split('\r\n').length - 1;
  const lf = text.split('\n').length - 1 - crlf;
  return `${crlf} CRLF, ${lf} bare LF`;
}

const CHECKS = [
  {
    id: 'crlf',
    question: 'A CRLF file stays CRLF after an edit (bytes checked)',
    async run(side, file) {
      const lines = Array.from({ length: 20 }, (_, i) => `line ${String(i + 1).padStart(2, '0')} ${i % 2 ? 'beta' : 'alpha'}`);
      const before = Buffer.from(lines.map((line) => `${line}\r\n`).join(''));
      writeFileSync(file, before);
      // A model sends \n in its strings, whatever the file uses.
      const reply = await side.edit(file, 'line 05 alpha\nline 06 beta', 'line 05 ALPHA\nline 06 BETA');
      const after = readFileSync(file);
      const expected = Buffer.from(before.toString('utf8').replace('line 05 alpha\r\nline 06 beta', 'line 05 ALPHA\r\nline 06 BETA'));
      const ok = reply.ok && after.equals(expected);
      return { ok, detail: ok ? `edit applied, ${lineEnds(after)}` : `reply ${reply.ok ? 'ok' : `error "${firstLine(reply)}"`}; file now ${lineEnds(after)}${after.includes('ALPHA') ? ', edit applied' : ', edit not applied'}` };
    },
  },
  {
    id: 'unique',
    question: 'An old_string found twice (no replace_all) is refused and the file left as it was',
    async run(side, file) {
      const before = Buffer.from('function a() {\n  return value;\n}\nfunction b() {\n  return value;\n}\n');
      writeFileSync(file, before);
      const reply = await side.edit(file, '  return value;', '  return value + 1;');
      const after = readFileSync(file);
      const ok = !reply.ok && after.equals(before);
      if (ok) return { ok, detail: `refused: "${firstLine(reply)}"` };
      const changed = after.toString('utf8').split('\n').flatMap((line, i) => (line.includes('value + 1') ? [i + 1] : []));
      return { ok, detail: `reply ${reply.ok ? 'ok' : 'error'}; ${changed.length ? `line ${changed.join(' and ')} of 2 candidates (2 and 5) changed` : 'file unchanged'}` };
    },
  },
  {
    id: 'dollar',
    question: '`$&`, `$1`, `$$`, `` $` `` and `$\'` in new_string are written literally',
    async run(side, file) {
      const before = Buffer.from('const price = 10;\nconst tax = 2;\n');
      writeFileSync(file, before);
      const replacement = "const price = '$& $1 $$ $` $\\'';";
      const reply = await side.edit(file, 'const price = 10;', replacement);
      const after = readFileSync(file);
      const expected = Buffer.from(`${replacement}\nconst tax = 2;\n`);
      const ok = reply.ok && after.equals(expected);
      return { ok, detail: ok ? 'written as typed' : `reply ${reply.ok ? 'ok' : `error "${firstLine(reply)}"`}; file starts ${visible(after)}` };
    },
  },
  {
    id: 'identical',
    question: 'write_file with the content already there writes nothing (mtime and inode unchanged)',
    async run(side, file) {
      const content = 'export const answer = 42;\n';
      writeFileSync(file, content);
      utimesSync(file, OLD_TIME, OLD_TIME);
      const before = lstatSync(file);
      const reply = await side.write(file, content);
      const after = lstatSync(file);
      const same = after.mtimeMs === before.mtimeMs && after.ino === before.ino;
      const ok = reply.ok && same && readFileSync(file, 'utf8') === content;
      const what = [after.ino !== before.ino ? 'replaced by a new inode' : undefined, after.mtimeMs !== before.mtimeMs ? 'mtime now' : undefined].filter(Boolean).join(', ');
      return { ok, detail: ok ? `untouched; reply "${firstLine(reply)}"` : `reply ${reply.ok ? 'ok' : 'error'}; file ${what || 'unchanged'}` };
    },
  },
  {
    id: 'mode',
    question: 'Overwriting an executable file keeps its mode (0755)',
    async run(side, file) {
      writeFileSync(file, '#!/bin/sh\necho old\n');
      chmodSync(file, 0o755);
      const reply = await side.write(file, '#!/bin/sh\necho new\n');
      const mode = lstatSync(file).mode & 0o777;
      const ok = reply.ok && mode === 0o755 && readFileSync(file, 'utf8').includes('echo new');
      return { ok, detail: `mode ${mode.toString(8)} after the write` };
    },
  },
  {
    id: 'not-found',
    question: 'An old_string that is not in the file is refused and the file left as it was',
    async run(side, file) {
      const before = Buffer.from('alpha\nbeta\ngamma\n');
      writeFileSync(file, before);
      const reply = await side.edit(file, 'delta', 'epsilon');
      const after = readFileSync(file);
      const ok = !reply.ok && after.equals(before);
      return { ok, detail: ok ? `refused: "${firstLine(reply)}"` : `reply ${reply.ok ? 'ok' : 'error'}; file ${after.equals(before) ? 'unchanged' : 'changed'}` };
    },
  },
];

/**
 * Runs every check on each side (`{ name, root, write(file, content), edit(file, old, new) }`,
 * files given as absolute paths under `root`); returns rows { id, question, results: { [name]: { ok, detail } } }.
 */
export async function runChecks(sides) {
  const rows = [];
  for (const check of CHECKS) {
    const results = {};
    for (const side of sides) {
      const dir = join(side.root, 'correctness');
      mkdirSync(dir, { recursive: true });
      try {
        results[side.name] = await check.run(side, join(dir, `${check.id}.txt`));
      } catch (error) {
        results[side.name] = { ok: false, detail: `bench error: ${error.message}` };
      }
    }
    rows.push({ id: check.id, question: check.question, results });
  }
  return rows;
}

export function checksTable(rows, names) {
  const header = ['check', ...names.map((name) => `${name}`), 'details'];
  const lines = [`| ${header.join(' | ')} |`, `| --- | ${names.map(() => ':---:').join(' | ')} | --- |`];
  for (const row of rows) {
    const cells = names.map((name) => (row.results[name].ok ? 'yes' : '**no**'));
    const details = names.map((name) => `${name}: ${row.results[name].detail}`).join('; ');
    lines.push(`| ${row.question} | ${cells.join(' | ')} | ${details.replaceAll('|', '\\|').replaceAll('\n', ' ')} |`);
  }
  return lines.join('\n');
}
