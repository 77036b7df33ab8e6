import { execFile } from 'node:child_process';
import { chmodSync, existsSync, mkdirSync, readdirSync, readFileSync, statSync, symlinkSync, utimesSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { promisify } from 'node:util';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { addAllowRule, ApprovalError, describeAllowRule, PermissionGate, permissionsSchema } from '@bulkhead/core';
import { tempWorkspace, type TempWorkspace } from '@bulkhead/core/testing';

const run = promisify(execFile);
const CORE = resolve(import.meta.dirname, '../dist/index.js');
const TOOL = 'fs_write:write_file';
const ORIGIN = { by: 'bulkhead approvals (user alice)', approvalId: 'k3m9q2xa', at: new Date('2026-12-02T02:31:07.000Z') };
const COMMENT = '# added by bulkhead approvals (user alice) on 2026-12-02 02:31 UTC, approval k3m9q2xa';

let ws: TempWorkspace;
let controlDir: string;
let file: string;

beforeEach(() => {
  ws = tempWorkspace();
  controlDir = ws.mkdir('.bulkhead');
  file = join(controlDir, 'permissions.yaml');
});
afterEach(() => ws.cleanup());

/** What the real loader decides for a medium-risk call of `tool` (what an ask is made of under supervised). */
function verdictFor(tool: string): string {
  return PermissionGate.load(controlDir).decide({ qualifiedName: tool, risk: 'medium', args: { path: 'notes/todo.md' } }).verdict;
}

/** Writes `before`, adds the rule, and returns the file's text after it (which the loader must accept). */
function addTo(before: string, layout: 'line by line' | 'printed' = 'line by line'): string {
  writeFileSync(file, before);
  expect(verdictFor(TOOL)).toBe('ask');
  const written = addAllowRule(controlDir, TOOL, ORIGIN);
  expect(written.added).toBe(true);
  const after = readFileSync(file, 'utf8');
  if (layout === 'line by line') {
    expect(after.split(/\r?\n/)[written.line - 1]?.trim()).toBe(`- ${TOOL}`);
    expect(after.split(/\r?\n/)[written.line - 2]?.trim()).toBe(COMMENT);
  }
  expect(verdictFor(TOOL)).toBe('allow');
  return after;
}

function refusal(problem: string): ApprovalError {
  return new ApprovalError(`the always rule for ${TOOL} was not written: ${problem}`);
}

describe('addAllowRule writes the rule', () => {
  it('creates a missing file with a header, and the loader allows the tool', () => {
    expect(verdictFor(TOOL)).toBe('ask');
    const written = addAllowRule(controlDir, TOOL, ORIGIN);
    expect(written).toEqual({ file, rule: TOOL, line: 5, added: true });
    expect(describeAllowRule(written)).toBe(`\`${TOOL}\` in ${file} line 5`);
    expect(readFileSync(file, 'utf8')).toBe(
      '# Bulkhead permissions (docs/configuration.md): deny wins over ask wins over allow; calls no list\n' +
        '# names follow autonomy over risk (supervised unless autonomy is set here).\n' +
        `allow:\n  ${COMMENT}\n  - ${TOOL}\n`,
    );
    expect(statSync(file).mode & 0o777).toBe(0o644);
    expect(verdictFor(TOOL)).toBe('allow');
    expect(verdictFor('fs_write:delete_path')).toBe('ask');
    expect(readdirSync(controlDir)).toEqual(['permissions.yaml']);
  });

  it('creates the control-plane folder when there is none', () => {
    controlDir = ws.path('fresh/.bulkhead');
    file = join(controlDir, 'permissions.yaml');
    expect(addAllowRule(controlDir, TOOL, ORIGIN).added).toBe(true);
    expect(verdictFor(TOOL)).toBe('allow');
  });

  it('an empty file', () => {
    expect(addTo('')).toBe(`allow:\n  ${COMMENT}\n  - ${TOOL}\n`);
  });

  it('a file of comments only', () => {
    expect(addTo('# nothing here yet\n')).toBe(`# nothing here yet\nallow:\n  ${COMMENT}\n  - ${TOOL}\n`);
  });

  it('the file bulkhead config init writes: every other byte, comment and alignment kept', () => {
    const init =
      '# deny wins over ask wins over allow; calls no list names follow autonomy over risk:\n' +
      '#   read_only: low runs, the rest is denied\n' +
      'autonomy: supervised\n' +
      'allow: []             # e.g. - git   or   - "shell:run_shell(npm test*)"\n' +
      'ask: []               # e.g. - web:web_fetch\n' +
      'deny: []              # e.g. - fs_write:delete_path\n' +
      'always_ask: []        # asked even under full autonomy\n';
    expect(addTo(init)).toBe(
      '# deny wins over ask wins over allow; calls no list names follow autonomy over risk:\n' +
        '#   read_only: low runs, the rest is denied\n' +
        'autonomy: supervised\n' +
        'allow:             # e.g. - git   or   - "shell:run_shell(npm test*)"\n' +
        `  ${COMMENT}\n` +
        `  - ${TOOL}\n` +
        'ask: []               # e.g. - web:web_fetch\n' +
        'deny: []              # e.g. - fs_write:delete_path\n' +
        'always_ask: []        # asked even under full autonomy\n',
    );
  });

  it('a flow list with entries becomes a block list, entries kept as written', () => {
    expect(addTo('autonomy: supervised\nallow: [git, "shell:run_shell(npm test*)"]\nask: []\n')).toBe(
      `autonomy: supervised\nallow:\n  - git\n  - "shell:run_shell(npm test*)"\n  ${COMMENT}\n  - ${TOOL}\nask: []\n`,
    );
    expect(verdictFor('git:git_status')).toBe('allow');
  });

  it('a block list with comments and blank lines around it: the entry goes after the last one', () => {
    const before = '$schema: ../schemas/permissions.schema.json\n\n# what runs\nallow:\n    - git        # read-only anyway\n    - "fs:*"\n\n# never\ndeny:\n    - fs_write:delete_path\n';
    expect(addTo(before)).toBe(
      `$schema: ../schemas/permissions.schema.json\n\n# what runs\nallow:\n    - git        # read-only anyway\n    - "fs:*"\n    ${COMMENT}\n    - ${TOOL}\n\n# never\ndeny:\n    - fs_write:delete_path\n`,
    );
  });

  it('an unindented block list at the end of a file without a final newline', () => {
    expect(addTo('allow:\n- git')).toBe(`allow:\n- git\n${COMMENT}\n- ${TOOL}\n`);
  });

  it('a file with other keys and no allow list', () => {
    expect(addTo('autonomy: supervised   # the default\nask:\n  - web:web_fetch\n')).toBe(`autonomy: supervised   # the default\nask:\n  - web:web_fetch\nallow:\n  ${COMMENT}\n  - ${TOOL}\n`);
  });

  it('a file with CRLF line ends keeps them', () => {
    expect(addTo('autonomy: supervised\r\nallow:\r\n  - git\r\n')).toBe(`autonomy: supervised\r\nallow:\r\n  - git\r\n  ${COMMENT}\r\n  - ${TOOL}\r\n`);
  });

  it('a layout the splice does not take (a flow map) goes through the YAML printer, and stays valid', () => {
    const after = addTo('{autonomy: supervised, allow: [git]}\n', 'printed');
    expect(after).toContain(COMMENT);
    expect(verdictFor('git:git_log')).toBe('allow');
  });

  it('keeps the mode of the file', () => {
    writeFileSync(file, 'allow: []\n');
    chmodSync(file, 0o640);
    addAllowRule(controlDir, TOOL, ORIGIN);
    expect(statSync(file).mode & 0o777).toBe(0o640);
  });

  it('writes who decided on one comment line, whatever the name holds', () => {
    writeFileSync(file, 'allow: []\n');
    addAllowRule(controlDir, TOOL, { ...ORIGIN, by: 'bulkhead approvals (user eve\nallow:\n  - "*"\r\n#)' });
    expect(readFileSync(file, 'utf8')).toBe(`allow:\n  # added by bulkhead approvals (user eve allow: - "*" #) on 2026-12-02 02:31 UTC, approval k3m9q2xa\n  - ${TOOL}\n`);
    expect(verdictFor('shell:run_shell')).toBe('ask');
  });

  it('does not add a rule that is there already, and says where it is', () => {
    const before = `allow:\n  - git\n  - ${TOOL}   # mine\n`;
    writeFileSync(file, before);
    const written = addAllowRule(controlDir, TOOL, ORIGIN);
    expect(written).toEqual({ file, rule: TOOL, line: 3, added: false });
    expect(describeAllowRule(written)).toBe(`\`${TOOL}\` in ${file} line 3 (it was there already)`);
    expect(readFileSync(file, 'utf8')).toBe(before);
  });

  it('two processes adding at once: both rules land, the file stays valid', async () => {
    writeFileSync(file, 'autonomy: supervised\nallow: []\n');
    const tools = ['fs_write:write_file', 'fs_write:edit_file', 'fs_write:delete_path', 'fs_write:move_path'];
    const start = Date.now() + 1_500;
    await Promise.all(
      tools.map((tool) =>
        run(process.execPath, [
          '--input-type=module',
          '-e',
          `const { addAllowRule } = await import(${JSON.stringify(CORE)}); while (Date.now() < ${start}); addAllowRule(${JSON.stringify(controlDir)}, ${JSON.stringify(tool)}, { by: 'test', approvalId: 'k3m9q2xa', at: new Date() });`,
        ]),
      ),
    );
    for (const tool of tools) expect(verdictFor(tool)).toBe('allow');
    const text = readFileSync(file, 'utf8');
    expect(text.match(/# added by test on /g)).toHaveLength(4);
    expect(readdirSync(controlDir)).toEqual(['permissions.yaml']);
  });

  it('takes over a lock left by a writer that died', () => {
    writeFileSync(`${file}.lock`, '999999\n');
    const old = new Date(Date.now() - 60_000);
    utimesSync(`${file}.lock`, old, old);
    expect(addAllowRule(controlDir, TOOL, ORIGIN).added).toBe(true);
    expect(existsSync(`${file}.lock`)).toBe(false);
  });
});

describe('addAllowRule refuses, and writes nothing', () => {
  it.each([
    ['not YAML', 'allow: [git\nask: []\n', (f: string) => `${f} line 2: not valid YAML: Flow sequence in block collection must be sufficiently indented and end with a ]`],
    ['an unknown key', 'allowed: [git]\n', (f: string) => `${f}: invalid configuration\n  - top level (line 1): unknown key \`allowed\`; allowed keys: ${Object.keys(permissionsSchema.shape).join(', ')}`],
    ['allow that is not a list', 'allow: git\n', (f: string) => `${f}: invalid configuration\n  - \`allow\` (line 1): Invalid input: expected array, received string`],
    ['an empty allow key', 'allow:\n', (f: string) => `${f}: invalid configuration\n  - \`allow\` (line 1): Invalid input: expected array, received null`],
  ])('a file that is %s', (_what, before, problem) => {
    writeFileSync(file, before);
    let thrown: unknown;
    try {
      addAllowRule(controlDir, TOOL, ORIGIN);
    } catch (error) {
      thrown = error;
    }
    expect(thrown).toBeInstanceOf(ApprovalError);
    expect((thrown as Error).message.split('\n')[0]).toBe(refusal(problem(file).split('\n')[0]!).message);
    expect((thrown as Error).message).toBe(refusal(`${problem(file)}\nfix the file, or allow the call once or for this session`).message);
    expect(readFileSync(file, 'utf8')).toBe(before);
    expect(readdirSync(controlDir)).toEqual(['permissions.yaml']);
  });

  it('an allow list another key shares through an alias, which the rule would widen too', () => {
    const before = 'allow: &shared [git]\nask: *shared\n';
    writeFileSync(file, before);
    expect(() => addAllowRule(controlDir, TOOL, ORIGIN)).toThrow(refusal(`${file} has a layout bulkhead cannot add to without changing something else; add \`- ${TOOL}\` under allow: by hand`));
    expect(readFileSync(file, 'utf8')).toBe(before);
  });

  it('a symbolic link, and the file it points to stays as it was', () => {
    const target = ws.write('elsewhere/permissions.yaml', 'allow: []\n');
    symlinkSync(target, file);
    expect(() => addAllowRule(controlDir, TOOL, ORIGIN)).toThrow(refusal(`${file} is a symbolic link, and bulkhead does not write through one; add \`- ${TOOL}\` under allow: in the file it points to`));
    expect(readFileSync(target, 'utf8')).toBe('allow: []\n');
  });

  it('a dangling symbolic link, which is not followed to create a file', () => {
    symlinkSync(ws.path('elsewhere/made.yaml'), file);
    expect(() => addAllowRule(controlDir, TOOL, ORIGIN)).toThrow(refusal(`${file} is a symbolic link, and bulkhead does not write through one; add \`- ${TOOL}\` under allow: in the file it points to`));
    expect(existsSync(ws.path('elsewhere'))).toBe(false);
  });

  it('a folder where the file should be', () => {
    mkdirSync(file);
    expect(() => addAllowRule(controlDir, TOOL, ORIGIN)).toThrow(refusal(`${file} is not a regular file`));
  });

  it.each(['fs_write:*', 'fs_write', '*:write_file', 'fs_write:write_?ile', 'fs_write:write_file(path=notes/**)', 'fs_write:[wx]rite_file', 'fs_write:write file', 'FS_WRITE:write_file', 'fs_write:', 'fs_write:write_file\nallow:'])(
    'a name that is not one exact tool: %j',
    (name) => {
      writeFileSync(file, 'allow: []\n');
      expect(() => addAllowRule(controlDir, name, ORIGIN)).toThrow(
        new ApprovalError(`the always rule for ${name} was not written: it is not one exact tool name (namespace:tool, without glob characters or an argument matcher)`),
      );
      expect(readFileSync(file, 'utf8')).toBe('allow: []\n');
    },
  );

  it.each([
    ['ask', 'ask:\n  - fs_write:*\n', 'ask lists `fs_write:*`'],
    ['always_ask', 'always_ask: [fs_write:write_file]\n', 'always_ask lists `fs_write:write_file`'],
    ['a bare namespace under ask', 'ask: [fs_write]\n', 'ask lists `fs_write`'],
  ])('a tool that %s would still ask for', (_what, before, listed) => {
    writeFileSync(file, before);
    expect(() => addAllowRule(controlDir, TOOL, ORIGIN)).toThrow(
      refusal(`${file}: ${listed}, which is checked before allow, so the rule would not stop the asking; edit that entry, or allow the call once or for this session`),
    );
    expect(readFileSync(file, 'utf8')).toBe(before);
  });

  it('but an ask narrowed by an argument leaves the other calls to the rule', () => {
    writeFileSync(file, 'ask:\n  - fs_write:write_file(path=secret/**)\n');
    expect(addAllowRule(controlDir, TOOL, ORIGIN).added).toBe(true);
    expect(verdictFor(TOOL)).toBe('allow');
  });
});
