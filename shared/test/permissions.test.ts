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
