// What the gate tells the approval desk: how long a call may wait (approval_wait_ms) and what
// decided the ask (Decision.from), which is what decides whether "always" can be offered.
import { afterEach, describe, expect, it } from 'vitest';
import { PermissionGate } from '@bulkhead/core';
import { tempWorkspace, type TempWorkspace } from '@bulkhead/core/testing';

let ws: TempWorkspace;
afterEach(() => ws?.cleanup());

function gate(yaml?: string): PermissionGate {
  ws = tempWorkspace(yaml === undefined ? {} : { 'permissions.yaml': yaml });
  return PermissionGate.load(ws.root);
}

describe('approval_wait_ms', () => {
  it('defaults to two minutes with no file, with a file that leaves it out, and narrowed to a profile', () => {
    expect(gate().approvalWaitMs).toBe(120_000);
    expect(gate('autonomy: supervised\n').approvalWaitMs).toBe(120_000);
    expect(gate('approval_wait_ms: 0\n').approvalWaitMs).toBe(0);
    expect(gate('autonomy: full\napproval_wait_ms: 1800000\n').narrowedTo('read_only').approvalWaitMs).toBe(1_800_000);
  });

  it('refuses a wait past half an hour, below zero or not a whole number of milliseconds, naming the key and line', () => {
    expect(() => gate('autonomy: supervised\napproval_wait_ms: 1800001\n')).toThrow('`approval_wait_ms` (line 2): Too big: expected number to be <=1800000');
    expect(() => gate('approval_wait_ms: -1\n')).toThrow('`approval_wait_ms` (line 1): Too small: expected number to be >=0');
    expect(() => gate('approval_wait_ms: 1.5\n')).toThrow('`approval_wait_ms` (line 1)');
    expect(() => gate('approval_wait_ms: "2 minutes"\n')).toThrow('`approval_wait_ms` (line 1)');
  });
});

describe('what decided', () => {
  const subject = (qualifiedName: string, risk: 'low' | 'medium' | 'high' = 'medium') => ({ qualifiedName, risk, args: { path: 'src/a.txt' }, subjectArg: 'path' });

  it('names the list whose entry decided, or the autonomy table', () => {
    const g = gate('allow:\n  - fs:*\nask:\n  - web:*\ndeny:\n  - git:*\nalways_ask:\n  - shell:*\n  - "fs_write:write_file(secret/**)"\n');
    expect(g.decide(subject('fs:read_file')).from).toBe('allow');
    expect(g.decide(subject('web:web_fetch')).from).toBe('ask');
    expect(g.decide(subject('git:git_log', 'low')).from).toBe('deny');
    expect(g.decide(subject('shell:run_shell', 'low')).from).toBe('always_ask');
    // An always_ask entry with an argument matcher decides only the calls it matches.
    expect(g.decide(subject('fs_write:write_file'))).toMatchObject({ verdict: 'ask', from: 'autonomy' });
    expect(g.decide({ ...subject('fs_write:write_file'), args: { path: 'secret/key' } })).toMatchObject({ verdict: 'ask', from: 'always_ask' });
    expect(g.decide(subject('ladder:lane_list', 'low'))).toMatchObject({ verdict: 'allow', from: 'autonomy' });
    expect(g.decide(subject('ladder:lane_list', 'high'))).toMatchObject({ verdict: 'deny', from: 'autonomy' });
  });

  it('says autonomy for an ask that an allow entry for the tool would turn into a run', () => {
    const asked = gate('autonomy: supervised\n').decide(subject('fs_write:write_file'));
    expect(asked).toMatchObject({ verdict: 'ask', from: 'autonomy' });
    expect(gate('autonomy: supervised\nallow:\n  - fs_write:write_file\n').decide(subject('fs_write:write_file'))).toMatchObject({ verdict: 'allow', from: 'allow' });
  });
});
