import { describe, expect, it } from 'vitest';
import { approvalPrompt, MAX_PROMPT_CHARS, restMessage, TooManyKeysToShow, type ApprovalRequest } from '../src/kit/approval-prompt.js';

const REASON = 'mail:send_mail must be confirmed: /p/.bulkhead/permissions.yaml line 2 lists it under ask (`mail:*`)';
const build = (args: Record<string, unknown>, extra: Partial<ApprovalRequest> = {}) => approvalPrompt({ qualifiedName: 'mail:send_mail', reason: REASON, args, ...extra });
const prompt = (args: Record<string, unknown>, extra: Partial<ApprovalRequest> = {}) => build(args, extra).message;
const PEM = '-----BEGIN OPENSSH PRIVATE KEY-----\nb3BlbnNzaC1rZXktdjEAAAAABG5vbmUAAAAEbm9uZQ\n-----END OPENSSH PRIVATE KEY-----';

/** The line of the arguments section that shows `path`. */
function lineOf(message: string, path: string): string | undefined {
  return message.split('\n').find((line) => line.startsWith(`  ${path} (`));
}

describe('approval prompt', () => {
  it('shows a short bcc behind a 10,000-character to, subject and body, before any long excerpt', () => {
    const message = prompt({ to: 'a'.repeat(10_000), subject: 'Quarterly numbers', body: 'Dear team,\n'.repeat(500), bcc: 'exfil@evil.example' });
    expect(message.startsWith(`Allow mail:send_mail?\nAsked because: ${REASON}.\n\nArguments (4 values; every key is listed here):\n`)).toBe(true);
    expect(lineOf(message, 'to')).toBe(`  to (string, 10,000 characters): "${'a'.repeat(80)}"… (first 80 of 10,000 characters shown)`);
    expect(lineOf(message, 'subject')).toBe('  subject (string): "Quarterly numbers"');
    expect(lineOf(message, 'body')).toBe(`  body (string, 5,500 characters): "${'Dear team,\\n'.repeat(7)}Dea"… (first 80 of 5,500 characters shown)`);
    expect(lineOf(message, 'bcc')).toBe('  bcc (string): "exfil@evil.example"');
    // Every key comes before the long values section, within the first lines.
    expect(message.indexOf('bcc (string)')).toBeLessThan(message.indexOf('Long values'));
    expect(message.indexOf('bcc (string)')).toBeLessThan(800);
    expect(message).toContain(`\nLong values (the first 300 characters of each):\n  to: "${'a'.repeat(300)}"… (first 300 of 10,000 characters shown)\n`);
    expect(message.length).toBeLessThan(9_000);
    expect(message.endsWith('\n\nLong values are cut here and secrets redacted. To see the rest in full before deciding, choose "Show the rest of the arguments" (3 parts); the audit log keeps only the first 256 characters of each string.')).toBe(true);
  });

  it('says when the arguments shown are the whole arguments', () => {
    expect(prompt({ to: 'ann@example.com' })).toBe(
      `Allow mail:send_mail?\nAsked because: ${REASON}.\n\nArguments (1 value; every key is listed here):\n  to (string): "ann@example.com"\n\nThese are the whole arguments (secrets redacted).`,
    );
    expect(prompt({})).toContain('\nArguments: none\n');
  });

  it('opens nested objects and arrays of objects into key paths, and keeps arrays of plain values whole', () => {
    const message = prompt({
      headers: { 'reply-to': 'a@example.com', bcc: 'hidden@evil.example', nested: { deeper: [{ bcc: 'deepest@evil.example' }] } },
      edits: [{ old_text: 'a', new_text: 'b' }, { old_text: 'c', new_text: 'd' }, { old_text: 'e', new_text: 'exfil' }],
      tags: ['x', 'y', 3],
      empty: {},
      none: [],
      flag: true,
      nothing: null,
      count: 2.5,
    });
    expect(lineOf(message, 'headers.reply-to')).toBe('  headers.reply-to (string): "a@example.com"');
    expect(lineOf(message, 'headers.bcc')).toBe('  headers.bcc (string): "hidden@evil.example"');
    expect(lineOf(message, 'headers.nested.deeper[0].bcc')).toBe('  headers.nested.deeper[0].bcc (string): "deepest@evil.example"');
    expect(lineOf(message, 'edits[2].new_text')).toBe('  edits[2].new_text (string): "exfil"');
    expect(lineOf(message, 'tags')).toBe('  tags (array of 3): ["x","y",3]');
    expect(lineOf(message, 'empty')).toBe('  empty (object, empty): {}');
    expect(lineOf(message, 'none')).toBe('  none (array, empty): []');
    expect(lineOf(message, 'flag')).toBe('  flag (boolean): true');
    expect(lineOf(message, 'nothing')).toBe('  nothing (null): null');
    expect(lineOf(message, 'count')).toBe('  count (number): 2.5');
    expect(message).toContain('Arguments (15 values;');
  });

  it('lists all of 500 keys: in full while the budget lasts, then by name and size', () => {
    const args = Object.fromEntries(Array.from({ length: 500 }, (_, i) => [`k${i}`, `value ${i}`]));
    const message = prompt(args);
    for (let i = 0; i < 500; i++) expect(message).toMatch(new RegExp(`(^|\\n  |; |: )k${i} \\(`));
    expect(message).toMatch(/\n {2}… and \d+ more, by key with size: k\d+ \(string, \d+ characters\); /);
    expect(lineOf(message, 'k0')).toBe('  k0 (string): "value 0"');
    expect(message).toContain('k499 (string, 9 characters)');
    expect(message.length).toBeLessThan(MAX_PROMPT_CHARS);
  });

  it('refuses to build a prompt when even the compact list of keys would not fit', () => {
    const args = Object.fromEntries(Array.from({ length: 5_000 }, (_, i) => [`key_number_${i}`, i]));
    expect(() => prompt(args)).toThrow(TooManyKeysToShow);
    expect(() => prompt(args)).toThrow('its arguments have 5,000 keys, more than an approval prompt can list (40,000 characters)');
  });

  it('cuts a 5,000-character key name, with its length, and still shows the keys after it', () => {
    const long = `${'k'.repeat(4_990)}1234567890`;
    const message = prompt({ [long]: 'x', bcc: 'after@evil.example' });
    expect(message).toContain(`\n  ["${'k'.repeat(60)}"…(5,000-character key)] (string): "x"\n`);
    expect(message).not.toContain('1234567890');
    expect(lineOf(message, 'bcc')).toBe('  bcc (string): "after@evil.example"');
  });

  it('quotes keys that are not plain names, so `headers.bcc` at the top differs from bcc inside headers', () => {
    const message = prompt({ 'headers.bcc': 'top', headers: { bcc: 'inner' }, 'line\nbreak': 1, 'a b': 2 });
    expect(message).toContain('\n  ["headers.bcc"] (string): "top"\n');
    expect(message).toContain('\n  headers.bcc (string): "inner"\n');
    expect(message).toContain('\n  ["line\\nbreak"] (number): 1\n');
    expect(message).toContain('\n  ["a b"] (number): 2\n');
  });

  it('writes out bidi, zero-width and control characters in values and keys, and line breaks stay on one line', () => {
    const message = prompt({ path: 'invoice\u202Efdp.exe', note: 'a\u200Bb\u2066c', 'k\u200Dey': 'v', body: 'line one\nbcc: fake@example.com\u0007' });
    expect(lineOf(message, 'path')).toBe('  path (string): "invoice\\u{202E}fdp.exe"');
    expect(lineOf(message, 'note')).toBe('  note (string): "a\\u{200B}b\\u{2066}c"');
    expect(message).toContain('\n  ["k\\u{200D}ey"] (string): "v"\n');
    expect(lineOf(message, 'body')).toBe('  body (string): "line one\\nbcc: fake@example.com\\u0007"');
    expect(message).not.toMatch(/[\u202E\u200B\u2066\u200D\u0007]/);
    expect(message.split('\n').filter((line) => line.startsWith('bcc'))).toEqual([]);
  });

  it('keeps a value that tries to close its quotes and forge lines on its own line', () => {
    const args = JSON.parse('{"subject": "hi\\"\\n  bcc (string): \\"none\\"", "__proto__": {"bcc": "proto@evil.example"}}') as Record<string, unknown>;
    const message = prompt(args);
    expect(lineOf(message, 'subject')).toBe('  subject (string): "hi\\"\\n  bcc (string): \\"none\\""');
    expect(lineOf(message, '__proto__.bcc')).toBe('  __proto__.bcc (string): "proto@evil.example"');
    expect(message.split('\n').filter((line) => line.startsWith('  bcc'))).toEqual([]);
  });

  it('redacts secrets in values and under secret keys, but shows every key', () => {
    const message = prompt({ attachment: `here it is: ${PEM}`, api_key: 'abc123', login: { user: 'ann', password: 'hunter2' }, credentials: { user: 'bob' }, token: { nested: 'x' }, to: 'ann@example.com' });
    expect(lineOf(message, 'attachment')).toBe('  attachment (string, 124 characters): "here it is: [REDACTED]"… (first 80 of 124 characters shown)');
    expect(lineOf(message, 'api_key')).toBe('  api_key (string): [REDACTED]');
    expect(lineOf(message, 'login.user')).toBe('  login.user (string): "ann"');
    expect(lineOf(message, 'login.password')).toBe('  login.password (string): [REDACTED]');
    expect(lineOf(message, 'credentials.user')).toBe('  credentials.user (string): [REDACTED]');
    expect(lineOf(message, 'token.nested')).toBe('  token.nested (string): [REDACTED]');
    expect(lineOf(prompt({ secret: 's'.repeat(500), password: ['a', 'b'] }), 'secret')).toBe('  secret (string): [REDACTED]');
    expect(lineOf(prompt({ password: ['a', 'b'] }), 'password')).toBe('  password (array): [REDACTED]');
    expect(message).not.toContain('hunter2');
    expect(message).not.toContain('abc123');
    expect(message).not.toContain('b3BlbnNzaC1rZXktdjEAAAAABG5vbmUAAAAEbm9uZQ');
  });

  it('redacts a secret that starts inside the shown part and ends past the cut', () => {
    const message = prompt({ body: `${'x'.repeat(70)} AKIAIOSFODNN7EXAMPLE ${'y'.repeat(500)}` });
    expect(message).not.toContain('AKIA');
    expect(lineOf(message, 'body')).toBe(`  body (string, 592 characters): "${'x'.repeat(70)} [REDACTED"… (first 80 of 592 characters shown)`);
  });

  it('redacts values under the extra keys of audit.yaml', () => {
    const message = prompt({ customer_ssn: '123-45-6789' }, { redactKeys: ['ssn'] });
    expect(lineOf(message, 'customer_ssn')).toBe('  customer_ssn (string): [REDACTED]');
  });

  it('shows the risk in words and the first lines of the preview, with how many more', () => {
    const diff = ['--- a/x', '+++ b/x', ...Array.from({ length: 100 }, (_, i) => `+line ${i}`)].join('\n');
    const message = prompt({ path: 'x' }, { risk: 'classified medium: writes files', preview: { text: `${diff}\n` } });
    expect(message).toContain(`Asked because: ${REASON}.\nRisk: classified medium: writes files\n`);
    expect(message).toContain("\nWhat will happen (the tool's preview):\n  --- a/x\n  +++ b/x\n  +line 0\n");
    expect(message).toContain('\n  +line 37\n  … 62 more lines\n');
    expect(message).not.toContain('+line 38');
  });

  it('cuts long preview lines, writes out their invisible characters and redacts their secrets', () => {
    const message = prompt({ path: 'x' }, { preview: { text: `+${'z'.repeat(1_000)}\n+name\u202Etxt.exe\n+${PEM.split('\n')[0]}` } });
    expect(message).toContain(`\n  +${'z'.repeat(159)}…(1,001 characters)\n  +name\\u{202E}txt.exe\n  +[REDACTED]\n`);
  });

  it('redacts a private key that spans many lines of a diff', () => {
    const diff = ['--- a/id', '+++ b/id', ...PEM.split('\n').map((line) => `+${line}`), '+after the key'].join('\n');
    const message = prompt({ path: 'id' }, { preview: { text: diff } });
    expect(message).toContain("What will happen (the tool's preview):\n  --- a/id\n  +++ b/id\n  +[REDACTED]\n  +after the key\n");
    expect(message).not.toContain('b3BlbnNzaC1rZXktdjEAAAAABG5vbmUAAAAEbm9uZQ');
  });

  it('counts the lines of a preview too long to read whole', () => {
    const message = prompt({ path: 'x' }, { preview: { text: Array.from({ length: 100_000 }, (_, i) => `+${i}`).join('\n') } });
    expect(message).toContain('\n  +39\n  … 99,960 more lines\n');
  });

  it('says when the tool could not preview the call', () => {
    const message = prompt({ path: 'x' }, { preview: { failed: 'old_string was not found in x' } });
    expect(message).toContain('\nWhat will happen: the tool could not tell:\n  old_string was not found in x\n');
  });

  it('keeps every key ahead of the preview and the long values even when both are large', () => {
    const diff = Array.from({ length: 500 }, (_, i) => `+${'w'.repeat(150)} ${i}`).join('\n');
    const args = { ...Object.fromEntries(Array.from({ length: 30 }, (_, i) => [`long${i}`, 'v'.repeat(5_000)])), bcc: 'last@evil.example' };
    const message = prompt(args, { preview: { text: diff } });
    expect(message.indexOf('  bcc (string): "last@evil.example"')).toBeLessThan(message.indexOf('What will happen'));
    expect(message).toContain('more long values not excerpted here: ');
    expect(message.length).toBeLessThan(16_000);
  });

  it('gives every value it cut in full in the rest, in parts, each headed by the call', () => {
    const to = Array.from({ length: 1_000 }, (_, i) => `p${i}@example.com`).join(',');
    const { message, rest } = build({ to, subject: 'short', body: 'b'.repeat(301), bcc: 'x@evil.example' });
    expect(message).toContain('(3 parts)');
    expect(rest).toHaveLength(3);
    const joined = rest.join('\n');
    // The to value, in pieces: put back together, it is whole.
    const pieces = [...joined.matchAll(/^ {2}to \((?:string, [\d,]+ characters|continued)\): (".*")$/gm)].map((match) => JSON.parse(match[1]!) as string);
    expect(pieces.join('')).toBe(to);
    expect(joined).toContain(`\n  body (string, 301 characters): "${'b'.repeat(301)}"`);
    expect(joined).not.toContain('subject');
    for (const part of rest) expect(part.length).toBeLessThan(6_100);
    expect(restMessage('mail:send_mail', rest, 1).startsWith('Allow mail:send_mail? The rest of its arguments in full, part 2 of 3 (secrets redacted):\n\n  to (continued): "')).toBe(true);
  });

  it('lists in the rest the values of keys past the budget, with secrets still redacted', () => {
    const args = { ...Object.fromEntries(Array.from({ length: 500 }, (_, i) => [`k${i}`, `value ${i}`])), password: 'hunter2', note: `key ${PEM}` };
    const { message, rest } = build(args);
    expect(message).toContain('; password (redacted); note (string, 116 characters)');
    const joined = rest.join('\n');
    expect(joined).toContain('\n  k499 (string): "value 499"');
    expect(joined).toContain('\n  password (string): [REDACTED]');
    expect(joined).toContain('\n  note (string, 116 characters): "key [REDACTED]"');
    expect(joined).not.toContain('hunter2');
    expect(`${message}${joined}`).not.toContain('b3BlbnNzaC1rZXktdjEAAAAABG5vbmUAAAAEbm9uZQ');
  });

  it('bounds the rest and says how much is left unshown', () => {
    const { rest } = build({ body: 'z'.repeat(200_000), after: 'q'.repeat(500) });
    expect(rest).toHaveLength(19);
    const last = rest.at(-1)!;
    expect(last).not.toContain('  after (');
    expect(last).toMatch(/"\n {2}… 90,\d{3} more characters are not shown \(the parts hold at most 110,000 characters in all\), and nothing of after; decline if you need to see them\.$/);
  });

  it('writes out line breaks and invisible characters in the rest too', () => {
    const { rest } = build({ body: `${'a'.repeat(400)}\u202E\nbcc: fake` });
    expect(rest).toEqual([`  body (string, 411 characters): "${'a'.repeat(400)}\\u{202E}\\nbcc: fake"`]);
  });

  it('has no rest when nothing was cut', () => {
    expect(build({ to: 'a@example.com', body: 'c'.repeat(250) }).rest).toEqual([]);
  });
});
