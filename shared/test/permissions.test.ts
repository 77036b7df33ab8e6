import { afterEach, describe, expect, it } from 'vitest';
import { PermissionGate, type CallSubject } from '@bulkhead/core';
import { tempWorkspace, type TempWorkspace } from '@bulkhead/core/testing';

let ws: TempWorkspace;
afterEach(() => ws?.cleanup());

function gate(yaml?: string): PermissionGate {
  ws = tempWorkspace(yaml === undefined ? {} : { 'permissions.yaml': yaml });
  return PermissionGate.load(ws.root);
}

const call = (qualifiedName: string, risk: CallSubject['risk'], args: Record<string, unknown> = {}, subjectArg?: string): CallSubject => ({
  qualifiedName,
  risk,
  args,
  ...(subjectArg ? { subjectArg } : {}),
});

const rel = (text: string) => text.replaceAll(ws.root, '<dir>');

describe('autonomy over risk', () => {
  it('supervised (the default): low runs, medium asks, high is denied', () => {
    const g = gate();
    expect(g.decide(call('fs:read_file', 'low')).verdict).toBe('allow');
    expect(g.decide(call('fs_write:write_file', 'medium')).verdict).toBe('ask');
    expect(g.decide(call('shell:run_shell', 'high')).verdict).toBe('deny');
  });

  it('read_only denies everything but low risk, even when allowed by name', () => {
    const g = gate('autonomy: read_only\nallow:\n  - fs_write:*\n');
    expect(g.decide(call('fs:read_file', 'low')).verdict).toBe('allow');
    const decision = g.decide(call('fs_write:write_file', 'medium'));
    expect(decision.verdict).toBe('deny');
    expect(rel(decision.reason)).toBe('fs_write:write_file is medium risk and autonomy is read_only (<dir>/permissions.yaml line 1)');
    expect(rel(decision.remedy!)).toBe('set autonomy: supervised or full in <dir>/permissions.yaml');
  });

  it('full runs everything unless always_ask says otherwise', () => {
    const g = gate('autonomy: full\nalways_ask:\n  - shell:run_shell\n');
    expect(g.decide(call('fs_write:delete_path', 'high')).verdict).toBe('allow');
    const decision = g.decide(call('shell:run_shell', 'high'));
    expect(decision.verdict).toBe('ask');
    expect(rel(decision.reason)).toBe('shell:run_shell must be confirmed: <dir>/permissions.yaml line 3 lists it under always_ask (`shell:run_shell`)');
  });
});

describe('allow, ask and deny lists', () => {
  it('deny wins over ask wins over allow, naming the deciding line', () => {
    const g = gate('allow:\n  - fs_write:*\nask:\n  - fs_write:write_file\ndeny:\n  - fs_write:delete_path\n');
    expect(g.decide(call('fs_write:edit_file', 'medium')).verdict).toBe('allow');
    const asked = g.decide(call('fs_write:write_file', 'medium'));
    expect(asked.verdict).toBe('ask');
    expect(rel(asked.reason)).toBe('fs_write:write_file must be confirmed: <dir>/permissions.yaml line 4 lists it under ask (`fs_write:write_file`)');
    const denied = g.decide(call('fs_write:delete_path', 'medium'));
    expect(denied.verdict).toBe('deny');
    expect(rel(denied.reason)).toBe('fs_write:delete_path is denied by <dir>/permissions.yaml line 6 (`fs_write:delete_path`)');
  });

  it('lets an explicit allow run a high-risk call under supervised', () => {
    const g = gate('allow:\n  - shell:run_shell(git status*)\n');
    expect(g.decide(call('shell:run_shell', 'high', { command: 'git status -s' }, 'command')).verdict).toBe('allow');
    expect(g.decide(call('shell:run_shell', 'high', { command: 'rm -rf /' }, 'command')).verdict).toBe('deny');
  });

  it('matches keyed argument matchers and ignores non-string arguments', () => {
    const g = gate('deny:\n  - "fs:read_file(path=secrets/*)"\n');
    expect(g.decide(call('fs:read_file', 'low', { path: 'secrets/a' })).verdict).toBe('deny');
    expect(g.decide(call('fs:read_file', 'low', { path: 'src/a' })).verdict).toBe('allow');
    expect(g.decide(call('fs:read_file', 'low', { path: 42 })).verdict).toBe('allow');
  });

  it('says how to allow a call that the matrix asks for', () => {
    const g = gate();
    const decision = g.decide(call('fs_write:write_file', 'medium'));
    expect(rel(decision.reason)).toBe('fs_write:write_file is medium risk and autonomy is supervised (the default; there is no <dir>/permissions.yaml)');
    expect(rel(decision.remedy!)).toBe('add `fs_write:write_file` under allow: in <dir>/permissions.yaml (create the file)');
  });

  it('points at the allow list when the file has one', () => {
    const g = gate('allow:\n  - fs:*\n');
    const decision = g.decide(call('fs_write:write_file', 'medium'));
    expect(rel(decision.reason)).toBe('fs_write:write_file is medium risk and autonomy is supervised (the default; <dir>/permissions.yaml does not set autonomy)');
    expect(rel(decision.remedy!)).toBe('add `fs_write:write_file` under allow: in <dir>/permissions.yaml (the allow list is at line 1)');
  });

  it('rejects an unknown autonomy level with the allowed values', () => {
    expect(() => gate('autonomy: yolo\n')).toThrow('`autonomy` (line 1): must be one of "read_only", "supervised", "full"');
  });
});

describe('argument matchers on tools without a subject argument', () => {
  it('fail closed: a bare deny matches, a bare allow does not', () => {
    const g = gate('autonomy: full\ndeny:\n  - "remote:exec(rm*)"\nallow:\n  - "other:run(ls*)"\n');
    expect(g.decide(call('remote:exec', 'medium', { cmd: 'ls' })).verdict).toBe('deny');
    const narrow = gate('allow:\n  - "other:run(ls*)"\n');
    expect(narrow.decide(call('other:run', 'medium', { cmd: 'ls' })).verdict).toBe('ask');
  });
});

describe('argument rules over any argument and over paths (issue 16 item 6)', () => {
  const thirdParty = (args: Record<string, unknown>) => call('filesystem:read_text_file', 'medium', args);

  it('(*=glob) denies when any string argument matches, nested in objects and arrays too', () => {
    const g = gate('autonomy: full\ndeny:\n  - "*:*(*=**/.env*)"\n');
    const denied = [{ path: '.env' }, { paths: ['ok.txt', 'config/.env.local'] }, { edits: [{ path: 'notes.txt' }, { path: '/home/u/project/.env' }] }, { deep: { a: { b: ['x', { c: 'sub/../.env' }] } } }];
    for (const args of denied) expect(g.decide(thirdParty(args)).verdict, JSON.stringify(args)).toBe('deny');
    expect(rel(g.decide(thirdParty({ path: '.env' })).reason)).toBe('filesystem:read_text_file is denied by <dir>/permissions.yaml line 3 (`*:*(*=**/.env*)`)');
    // Numbers, booleans and nulls are no paths: they neither match nor fail the wildcard closed.
    for (const args of [{ path: 'ok.txt' }, { count: 3, flag: true, none: null }, {}, { path: 'x.env' }]) expect(g.decide(thirdParty(args)).verdict, JSON.stringify(args)).toBe('allow');
  });

  it('(path=**/.env*) holds for a third-party tool in every spelling of the path', () => {
    const g = gate('autonomy: full\ndeny:\n  - "*:*(path=**/.env*)"\n');
    const spellings = ['.env', './.env', 'sub/../.env', './/.env', '.env/', '/home/u/project/.env', '/elsewhere/.env.production', 'file:///home/u/project/.env', '%2Eenv', 'file:///p/%2Eenv', 'a\\..\\.env'];
    for (const path of spellings) expect(g.decide(thirdParty({ path })).verdict, path).toBe('deny');
    expect(g.decide(thirdParty({ path: 'src/env.ts' })).verdict).toBe('allow');
    // A non-path argument is compared as text: `.env` there is a word, not a file.
    expect(g.decide(thirdParty({ query: '.env' })).verdict).toBe('allow');
  });

  it('an allow compares a path by its canonical form only, so `..` cannot climb out of what it names', () => {
    const g = gate('allow:\n  - "filesystem:read_text_file(path=src/**)"\n');
    expect(g.decide(thirdParty({ path: 'src/a.ts' })).verdict).toBe('allow');
    expect(g.decide(thirdParty({ path: './src/a.ts' })).verdict).toBe('allow');
    expect(g.decide(thirdParty({ path: 'file:///src/a.ts' })).verdict).toBe('ask');
    for (const path of ['src/../.env', 'src/../../etc/passwd', 'lib/a.ts']) expect(g.decide(thirdParty({ path })).verdict, path).toBe('ask');
  });

  it('arrays: a restrictive rule matches when any item does, an allow only when every item does', () => {
    const g = gate('allow:\n  - "x:read(paths=src/*)"\nask:\n  - "x:read(paths=*.pem)"\n');
    expect(g.decide(call('x:read', 'medium', { paths: ['src/a', 'src/b'] })).verdict).toBe('allow');
    expect(g.decide(call('x:read', 'medium', { paths: ['src/a', 'lib/b'] })).reason).toBe('x:read is medium risk and autonomy is supervised (the default; ' + `${ws.root}/permissions.yaml does not set autonomy)`);
    expect(g.decide(call('x:read', 'medium', { paths: [] })).verdict).toBe('ask');
    expect(g.decide(call('x:read', 'low', { paths: ['src/a', 'key.pem'] })).verdict).toBe('ask');
  });

  it('restrictive rules fail closed on values a glob cannot read; an allow never matches them', () => {
    const g = gate('autonomy: full\ndeny:\n  - "x:write(target=*.pem)"\n');
    expect(g.decide(call('x:write', 'low', { target: { path: 'key.pem' } })).verdict).toBe('deny');
    expect(g.decide(call('x:write', 'low', { target: null })).verdict).toBe('deny');
    expect(g.decide(call('x:write', 'low', { target: ['a.txt', { nested: true }] })).verdict).toBe('deny');
    expect(g.decide(call('x:write', 'low', { target: 'a.txt' })).verdict).toBe('allow');
    expect(g.decide(call('x:write', 'low', {})).verdict).toBe('allow');
    const allow = gate('allow:\n  - "x:write(target=*)"\n');
    expect(allow.decide(call('x:write', 'medium', { target: { path: 'a' } })).verdict).toBe('ask');
    expect(allow.decide(call('x:write', 'medium', { target: 'a' })).verdict).toBe('allow');
  });

  it('a number or boolean is compared as its text', () => {
    const g = gate('autonomy: full\ndeny:\n  - "x:y(count=1*)"\n');
    expect(g.decide(call('x:y', 'low', { count: 12 })).verdict).toBe('deny');
    expect(g.decide(call('x:y', 'low', { count: 5 })).verdict).toBe('allow');
  });

  it('(*=glob) as an allow needs every string argument to match', () => {
    const g = gate('allow:\n  - "x:y(*=src/*)"\n');
    expect(g.decide(call('x:y', 'medium', { path: 'src/a', also: ['src/b'] })).verdict).toBe('allow');
    expect(g.decide(call('x:y', 'medium', { path: 'src/a', note: '/etc/shadow' })).verdict).toBe('ask');
    expect(g.decide(call('x:y', 'medium', { count: 1 })).verdict).toBe('ask');
  });

  it('allowRuleFor names the allow rule of exactly that argument value, and nothing else lifts', () => {
    const g = gate('autonomy: full\nallow:\n  - filesystem\n  - "filesystem:read_text_file(path=.env)"\n  - "other:*(*=id_rsa)"\n');
    expect(g.allowRuleFor('filesystem:read_text_file', 'path', '.env')).toBe('filesystem:read_text_file(path=.env)');
    expect(g.allowRuleFor('filesystem:read_text_file', 'path', '.env.local')).toBeUndefined();
    expect(g.allowRuleFor('filesystem:read_text_file', 'source', '.env')).toBeUndefined();
    expect(g.allowRuleFor('filesystem:write_file', 'path', '.env')).toBeUndefined();
    expect(g.allowRuleFor('other:copy', 'dest', 'id_rsa')).toBe('other:*(*=id_rsa)');
  });
});
