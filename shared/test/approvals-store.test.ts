import { createHook } from 'node:async_hooks';
import { execFile } from 'node:child_process';
import { existsSync, mkdirSync, readdirSync, readFileSync, renameSync, rmSync, statSync, symlinkSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { promisify } from 'node:util';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { APPROVAL_KEEP_MS, ApprovalError, ApprovalStore, callSha256, canonicalJson, describeDecision, isApprovalId, newApprovalId, sha256, type NewApproval } from '@bulkhead/core';
import { tempWorkspace, type TempWorkspace } from '@bulkhead/core/testing';

const run = promisify(execFile);
const CORE = resolve(import.meta.dirname, '../dist/index.js');
const CONSOLE = 'the Bulkhead console (127.0.0.1)';

let ws: TempWorkspace;
let controlDir: string;
let clock: Date;
let store: ApprovalStore;

beforeEach(() => {
  ws = tempWorkspace();
  controlDir = ws.path('.bulkhead');
  clock = new Date('2026-12-02T02:29:00.000Z');
  store = new ApprovalStore(controlDir, { now: () => clock });
});
afterEach(() => ws.cleanup());

function newApproval(overrides: Partial<NewApproval> = {}): NewApproval {
  const args = overrides.args ?? { path: 'notes/todo.md', content: '# Todo\n' };
  const tool = overrides.tool ?? 'fs_write:write_file';
  return {
    server: 'fs_write',
    pid: process.pid,
    tool,
    caller: 'claude-ai/0.1.0',
    callSha256: callSha256(tool, args),
    args,
    prompt: `Allow ${tool}?`,
    rest: [],
    reason: `${tool} is medium risk and autonomy is supervised`,
    offers: ['once', 'session', 'always', 'deny'],
    ...overrides,
  };
}

function modeOf(path: string): number {
  return statSync(path).mode & 0o777;
}

/** The store's module in a stack, as built or as its source map names it. */
const STORE_MODULE = /\/shared\/(?:dist|src)\/approvals\/store\.[jt]s:/;

/**
 * The timers and file watchers the store made since `trackHandles()` that are still alive, by
 * kind, once the loop has settled (a closed watcher goes on a later turn).
 */
function trackHandles(): { open(): Promise<string[]>; stop(): void } {
  const live = new Map<number, string>();
  const hook = createHook({
    init(id, type) {
      // Only the store's own (vitest keeps timers of its own).
      if ((type === 'Timeout' || type === 'FSEVENTWRAP') && STORE_MODULE.test(new Error().stack ?? '')) live.set(id, type);
    },
    destroy(id) {
      live.delete(id);
    },
  }).enable();
  return {
    async open() {
      await new Promise((done) => setTimeout(done, 30));
      await new Promise((done) => setImmediate(done));
      return [...live.values()].sort();
    },
    stop: () => hook.disable(),
  };
}

async function until(condition: () => boolean, what: string, ms = 5_000): Promise<void> {
  const deadline = Date.now() + ms;
  while (!condition()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((done) => setTimeout(done, 20));
  }
}

describe('ids', () => {
  it('are 8 characters of the unambiguous lower-case alphabet, from random bytes', () => {
    const ids = Array.from({ length: 2_000 }, newApprovalId);
    for (const id of ids) expect(id).toMatch(/^[abcdefghijkmnpqrstuvwxyz23456789]{8}$/);
    expect(new Set(ids).size).toBe(ids.length);
    const seen = new Set(ids.join(''));
    for (const ambiguous of ['0', 'o', '1', 'l']) expect(seen.has(ambiguous)).toBe(false);
    // 16,000 draws of 32 symbols: every one shows up.
    expect(seen.size).toBe(32);
  });

  it.each([
    ['../x', '"../x"'],
    ['../../etc/passwd', '"../../etc/passwd"'],
    ['a/b', '"a/b"'],
    ['abcd/efg', '"abcd/efg"'],
    ['/etc/hosts', '"/etc/hosts"'],
    ['abcdefg\u0000', '"abcdefg\\u0000"'],
    ['K3M9Q2XA', '"K3M9Q2XA"'],
    ['k3m9Q2xa', '"k3m9Q2xa"'],
    ['k3m9q2x', '"k3m9q2x"'],
    ['k3m9q2xaa', '"k3m9q2xaa"'],
    ['k3m9q2x0', '"k3m9q2x0"'],
    ['k3m9q2xo', '"k3m9q2xo"'],
    ['k3m9q2x1', '"k3m9q2x1"'],
    ['k3m9q2xl', '"k3m9q2xl"'],
    [' k3m9q2xa', '" k3m9q2xa"'],
    ['k3m9q2xa\n', '"k3m9q2xa\\n"'],
    ['', '""'],
  ])('refuses %j before touching the file system', async (id, shown) => {
    const message = `not an approval id: ${shown} (an id is 8 lower-case letters and digits, such as k3m9q2xa)`;
    expect(isApprovalId(id)).toBe(false);
    expect(() => store.get(id)).toThrow(new ApprovalError(message));
    expect(() => store.decide(id, 'once', CONSOLE)).toThrow(message);
    expect(() => store.use(id)).toThrow(message);
    expect(() => store.markTimedOut(id)).toThrow(message);
    expect(() => store.waitForDecision(id, 10, new AbortController().signal)).toThrow(message);
    // Not even the folder was made.
    expect(existsSync(controlDir)).toBe(false);
  });

  it('a record of the right shape outside the folder is not reachable by a traversing id', () => {
    const planted = { ...newApproval(), id: 'evilevil', created: clock.toISOString(), expires: new Date(clock.getTime() + 1e6).toISOString(), state: 'waiting' };
    mkdirSync(controlDir, { recursive: true });
    writeFileSync(join(controlDir, 'x.json'), JSON.stringify(planted));
    expect(() => store.get('../x')).toThrow(ApprovalError);
    expect(store.pending()).toEqual([]);
  });
});

describe('create, get, pending and recent', () => {
  it('writes one 0600 file per approval in a 0700 folder, and reads it back whole', () => {
    const approval = store.create(newApproval({ principal: 'alice', risk: 'medium: writes a file', preview: { text: '+# Todo' } }));
    expect(isApprovalId(approval.id)).toBe(true);
    expect(approval).toMatchObject({ created: '2026-12-02T02:29:00.000Z', expires: '2026-12-03T02:29:00.000Z', state: 'waiting', principal: 'alice', preview: { text: '+# Todo' } });
    expect(modeOf(store.folder)).toBe(0o700);
    expect(readdirSync(store.folder)).toEqual([`${approval.id}.json`]);
    expect(modeOf(join(store.folder, `${approval.id}.json`))).toBe(0o600);
    expect(JSON.parse(readFileSync(join(store.folder, `${approval.id}.json`), 'utf8'))).toEqual(approval);
    expect(new ApprovalStore(controlDir).get(approval.id)).toEqual(approval);
    expect(store.get('k3m9q2xa')).toBeUndefined();
  });

  it('narrows a folder that was made too wide', () => {
    mkdirSync(join(controlDir, 'approvals'), { recursive: true, mode: 0o755 });
    store.create(newApproval());
    expect(modeOf(store.folder)).toBe(0o700);
  });

  it('refuses an approvals folder that is a symbolic link', () => {
    const elsewhere = ws.mkdir('elsewhere');
    mkdirSync(controlDir);
    symlinkSync(elsewhere, join(controlDir, 'approvals'));
    expect(() => store.create(newApproval())).toThrow(`${store.folder} is not a folder (a symbolic link or a file is there); approvals are kept only in a real folder`);
    expect(readdirSync(elsewhere)).toEqual([]);
  });

  it('refuses a new approval that does not have the shape of one, and writes nothing', () => {
    expect(() => store.create({ ...newApproval(), callSha256: 'not a hash' })).toThrow();
    expect(readdirSync(store.folder)).toEqual([]);
  });

  it('pending is the undecided ones oldest first; recent is every kept one newest first', () => {
    const first = store.create(newApproval());
    clock = new Date(clock.getTime() + 1_000);
    const second = store.create(newApproval());
    clock = new Date(clock.getTime() + 1_000);
    const third = store.create(newApproval());
    store.decide(second.id, 'deny', CONSOLE);
    expect(store.pending().map((a) => a.id)).toEqual([first.id, third.id]);
    expect(store.recent(10).map((a) => a.id)).toEqual([third.id, second.id, first.id]);
    expect(store.recent(2).map((a) => a.id)).toEqual([third.id, second.id]);
    expect(store.recent(0)).toEqual([]);
    expect(new ApprovalStore(ws.path('nowhere')).pending()).toEqual([]);
  });

  it('skips corrupt and foreign files instead of failing the list', () => {
    const real = store.create(newApproval());
    const valid = JSON.parse(readFileSync(join(store.folder, `${real.id}.json`), 'utf8')) as Record<string, unknown>;
    const junk: Record<string, string> = {
      'notes.txt': 'hello',
      'zzzzzzzz.json': '{ not json',
      'aaaaaaaa.json': JSON.stringify({ hello: 'world' }),
      'bbbbbbbb.json': JSON.stringify({ ...valid, id: 'cccccccc' }),
      'dddddddd.json': JSON.stringify({ ...valid, id: 'dddddddd', offers: ['everything'] }),
      'eeeeeeee.json': JSON.stringify({ ...valid, id: 'eeeeeeee', created: 'yesterday' }),
      'ffffffff.json': '',
      'gggggggg.json': 'null',
      'UPPERCAS.json': JSON.stringify({ ...valid, id: 'UPPERCAS' }),
    };
    for (const [name, text] of Object.entries(junk)) writeFileSync(join(store.folder, name), text);
    mkdirSync(join(store.folder, 'hhhhhhhh.json'));
    writeFileSync(ws.path('outside.json'), JSON.stringify({ ...valid, id: 'iiiiiiii' }));
    symlinkSync(ws.path('outside.json'), join(store.folder, 'iiiiiiii.json'));
    writeFileSync(join(store.folder, `${real.id}.decision.json`), '{"decision": "once"');
    expect(store.pending().map((a) => a.id)).toEqual([real.id]);
    expect(store.recent(50).map((a) => a.id)).toEqual([real.id]);
    expect(store.get('bbbbbbbb')).toBeUndefined();
    expect(store.get('iiiiiiii')).toBeUndefined();
    // A decision file that cannot be read blocks a decision and is never used as one.
    expect(() => store.decide(real.id, 'once', CONSOLE)).toThrow(`approval ${real.id} was already decided: its decision file cannot be read`);
    expect(store.use(real.id)).toBe(false);
  });
});

describe('decide', () => {
  it('records the decision once, in its own 0600 file; a second decider is told who won', () => {
    const approval = store.create(newApproval());
    clock = new Date('2026-12-02T02:31:07.000Z');
    const decided = store.decide(approval.id, 'once', CONSOLE);
    expect(decided.decision).toEqual({ decision: 'once', by: CONSOLE, at: '2026-12-02T02:31:07.000Z' });
    const decisionFile = join(store.folder, `${approval.id}.decision.json`);
    expect(modeOf(decisionFile)).toBe(0o600);
    const message = `approval ${approval.id} was already decided: allowed once by the Bulkhead console (127.0.0.1) at 02:31:07 UTC`;
    for (const second of ['once', 'deny', 'session', 'always'] as const) {
      expect(() => new ApprovalStore(controlDir).decide(approval.id, second, 'bulkhead approvals (user bob)')).toThrow(new ApprovalError(message));
    }
    expect(readFileSync(decisionFile, 'utf8')).toBe(`${JSON.stringify(decided.decision)}\n`);
    expect(store.pending()).toEqual([]);
    expect(store.get(approval.id)?.decision).toEqual(decided.decision);
    // The always a late decider asked for wrote no rule.
    expect(existsSync(join(controlDir, 'permissions.yaml'))).toBe(false);
  });

  it('words every decision for refusals and replies', () => {
    const at = '2026-12-02T02:31:07.000Z';
    expect(describeDecision({ decision: 'once', by: CONSOLE, at })).toBe('allowed once by the Bulkhead console (127.0.0.1) at 02:31:07 UTC');
    expect(describeDecision({ decision: 'session', by: CONSOLE, at })).toBe('allowed for the session by the Bulkhead console (127.0.0.1) at 02:31:07 UTC');
    expect(describeDecision({ decision: 'always', by: CONSOLE, at })).toBe('always allowed by the Bulkhead console (127.0.0.1) at 02:31:07 UTC');
    expect(describeDecision({ decision: 'deny', by: 'bulkhead approvals (user alice)', at })).toBe('denied by bulkhead approvals (user alice) at 02:31:07 UTC');
  });

  it('refuses a decision the approval does not offer, listing the offered ones, and records nothing', () => {
    const approval = store.create(newApproval({ offers: ['once', 'deny'] }));
    for (const decision of ['always', 'session'] as const) {
      expect(() => store.decide(approval.id, decision, CONSOLE)).toThrow(new ApprovalError(`approval ${approval.id} does not offer ${decision}; it offers: once, deny`));
    }
    expect(() => store.decide(approval.id, 'everything' as 'once', CONSOLE)).toThrow('not a decision: "everything" (one of once, session, always, deny)');
    expect(store.pending().map((a) => a.id)).toEqual([approval.id]);
    expect(existsSync(join(controlDir, 'permissions.yaml'))).toBe(false);
    expect(store.decide(approval.id, 'deny', CONSOLE).decision?.decision).toBe('deny');
  });

  it('refuses an unknown id', () => {
    expect(() => store.decide('k3m9q2xa', 'once', CONSOLE)).toThrow(new ApprovalError('there is no approval k3m9q2xa (an expired one is removed; `bulkhead approvals list` shows the waiting ones)'));
  });

  it('writes who decided on one line, whatever the name holds', () => {
    const approval = store.create(newApproval());
    const decided = store.decide(approval.id, 'deny', 'bulkhead approvals (user eve\nallow:\n  - "*")\u2028');
    expect(decided.decision?.by).toBe('bulkhead approvals (user eve allow: - "*")');
    expect(store.decide(store.create(newApproval()).id, 'deny', ' \n ').decision?.by).toBe('someone who did not say who');
  });

  it('always writes the allow rule into the same folder\'s permissions.yaml and records where', () => {
    const approval = store.create(newApproval());
    clock = new Date('2026-12-02T02:31:07.000Z');
    const decided = store.decide(approval.id, 'always', 'bulkhead approvals (user alice)');
    const file = join(controlDir, 'permissions.yaml');
    expect(decided.decision).toEqual({ decision: 'always', by: 'bulkhead approvals (user alice)', at: '2026-12-02T02:31:07.000Z', rule: `\`fs_write:write_file\` in ${file} line 5` });
    expect(readFileSync(file, 'utf8').split('\n').slice(2)).toEqual([
      'allow:',
      `  # added by bulkhead approvals (user alice) on 2026-12-02 02:31 UTC, approval ${approval.id}`,
      '  - fs_write:write_file',
      '',
    ]);
  });

  it('a deny made while an always waits to write its rule waits its turn, so the rule never outlives a lost decision', async () => {
    const approval = store.create(newApproval());
    const decide = (decision: string) =>
      run(process.execPath, [
        '--input-type=module',
        '-e',
        `const { ApprovalStore } = await import(${JSON.stringify(CORE)}); try { new ApprovalStore(${JSON.stringify(controlDir)}).decide(${JSON.stringify(approval.id)}, '${decision}', '${decision}r'); process.stdout.write('won'); } catch (error) { process.stdout.write(error.message); }`,
      ]);
    // The test holds permissions.yaml's lock, so the always stops between its checks and its rule.
    const permissionsLock = join(controlDir, 'permissions.yaml.lock');
    writeFileSync(permissionsLock, 'test\n');
    const always = decide('always');
    await until(() => existsSync(join(store.folder, `${approval.id}.deciding`)), 'the always to start deciding', 15_000);
    const deny = decide('deny');
    await new Promise((done) => setTimeout(done, 700));
    rmSync(permissionsLock);
    const [alwaysSaid, denySaid] = await Promise.all([always, deny]);
    const winner = store.get(approval.id)!.decision!;
    expect(alwaysSaid.stdout).toBe('won');
    expect(denySaid.stdout).toBe(`approval ${approval.id} was already decided: ${describeDecision(winner)}`);
    expect(winner).toMatchObject({ decision: 'always', by: 'alwaysr' });
    expect(readFileSync(join(controlDir, 'permissions.yaml'), 'utf8')).toContain('  - fs_write:write_file\n');
    expect(readdirSync(store.folder)).toEqual([`${approval.id}.decision.json`, `${approval.id}.json`]);
  });

  it('always with a permissions.yaml that cannot take the rule leaves the approval undecided and the file as it was', () => {
    const approval = store.create(newApproval());
    const file = join(controlDir, 'permissions.yaml');
    writeFileSync(file, 'autonomy: sometimes\n');
    expect(() => store.decide(approval.id, 'always', CONSOLE)).toThrow(
      new ApprovalError(
        `approval ${approval.id} is still undecided: the always rule for fs_write:write_file was not written: ${file}: invalid configuration\n  - \`autonomy\` (line 1): must be one of "read_only", "supervised", "full"\nfix the file, or allow the call once or for this session`,
      ),
    );
    expect(readFileSync(file, 'utf8')).toBe('autonomy: sometimes\n');
    expect(store.get(approval.id)?.decision).toBeUndefined();
    expect(existsSync(join(store.folder, `${approval.id}.decision.json`))).toBe(false);
    expect(store.decide(approval.id, 'once', CONSOLE).decision?.decision).toBe('once');
  });
});

describe('expiry', () => {
  it('an expired approval is never decided, and is removed with its files by whoever looks', () => {
    const approval = store.create(newApproval());
    store.decide(approval.id, 'once', CONSOLE);
    const undecided = store.create(newApproval());
    clock = new Date(clock.getTime() + APPROVAL_KEEP_MS);
    expect(() => store.decide(undecided.id, 'once', CONSOLE)).toThrow(new ApprovalError(`approval ${undecided.id} expired at 2026-12-03 02:29 UTC; the call was not run`));
    expect(() => store.decide(undecided.id, 'once', CONSOLE)).toThrow(`there is no approval ${undecided.id}`);
    expect(store.use(approval.id)).toBe(false);
    expect(store.get(approval.id)).toBeUndefined();
    expect(readdirSync(store.folder)).toEqual([]);
  });

  it('keeps an approval until the last millisecond', () => {
    const approval = store.create(newApproval());
    clock = new Date(clock.getTime() + APPROVAL_KEEP_MS - 1);
    expect(store.pending().map((a) => a.id)).toEqual([approval.id]);
    clock = new Date(clock.getTime() + 1);
    expect(store.pending()).toEqual([]);
    expect(store.recent(10)).toEqual([]);
  });

  it('a list removes decisions and claims whose approval is gone', () => {
    mkdirSync(store.folder, { recursive: true });
    writeFileSync(join(store.folder, 'k3m9q2xa.decision.json'), JSON.stringify({ decision: 'once', by: CONSOLE, at: clock.toISOString() }));
    writeFileSync(join(store.folder, 'k3m9q2xa.used'), '{}');
    expect(store.pending()).toEqual([]);
    expect(readdirSync(store.folder)).toEqual([]);
  });
});

describe('use, markTimedOut and findFor', () => {
  it('use claims an allowing decision exactly once, and never an undecided or denied one', () => {
    const approval = store.create(newApproval());
    expect(store.use(approval.id)).toBe(false);
    expect(store.use('k3m9q2xa')).toBe(false);
    store.decide(approval.id, 'once', CONSOLE);
    expect(store.use(approval.id)).toBe(true);
    expect(store.use(approval.id)).toBe(false);
    expect(new ApprovalStore(controlDir).use(approval.id)).toBe(false);
    expect(store.get(approval.id)?.used).toBe(clock.toISOString());
    const denied = store.create(newApproval());
    store.decide(denied.id, 'deny', CONSOLE);
    expect(store.use(denied.id)).toBe(false);
  });

  it('exactly one of several processes claiming at once wins', async () => {
    const approval = store.create(newApproval());
    store.decide(approval.id, 'once', CONSOLE);
    const start = Date.now() + 1_500;
    const script = `const { ApprovalStore } = await import(${JSON.stringify(CORE)}); const store = new ApprovalStore(${JSON.stringify(controlDir)}); while (Date.now() < ${start}); process.stdout.write(String(store.use(${JSON.stringify(approval.id)})));`;
    const outcomes = await Promise.all(Array.from({ length: 4 }, () => run(process.execPath, ['--input-type=module', '-e', script])));
    expect(outcomes.map((outcome) => outcome.stdout).sort()).toEqual(['false', 'false', 'false', 'true']);
  });

  it('markTimedOut rewrites the state by rename and keeps the decision', () => {
    const approval = store.create(newApproval());
    store.markTimedOut(approval.id);
    expect(store.get(approval.id)?.state).toBe('timed_out');
    expect(store.pending().map((a) => a.id)).toEqual([approval.id]);
    expect(modeOf(join(store.folder, `${approval.id}.json`))).toBe(0o600);
    expect(readdirSync(store.folder)).toEqual([`${approval.id}.json`]);
    store.decide(approval.id, 'once', CONSOLE);
    store.markTimedOut(approval.id);
    expect(store.get(approval.id)).toMatchObject({ state: 'timed_out', decision: { decision: 'once' } });
    expect(() => store.markTimedOut('k3m9q2xa')).not.toThrow();
    expect(existsSync(join(store.folder, 'k3m9q2xa.json'))).toBe(false);
  });

  it('findFor finds the newest kept approval of the identical call that is undecided or allowed and unused', () => {
    const args = { path: 'notes/todo.md', content: '# Todo\n' };
    const sha = callSha256('fs_write:write_file', args);
    const older = store.create(newApproval({ args }));
    clock = new Date(clock.getTime() + 1_000);
    const newer = store.create(newApproval({ args }));
    store.create(newApproval({ args: { ...args, content: 'other' } }));
    store.create(newApproval({ args, principal: 'alice' }));
    expect(store.findFor('fs_write:write_file', sha, undefined)?.id).toBe(newer.id);
    store.decide(newer.id, 'deny', CONSOLE);
    expect(store.findFor('fs_write:write_file', sha, undefined)?.id).toBe(older.id);
    store.decide(older.id, 'once', CONSOLE);
    expect(store.findFor('fs_write:write_file', sha, undefined)?.decision?.decision).toBe('once');
    store.use(older.id);
    expect(store.findFor('fs_write:write_file', sha, undefined)).toBeUndefined();
    expect(store.findFor('fs_write:write_file', sha, 'alice')?.principal).toBe('alice');
    expect(store.findFor('fs_write:write_file', sha, 'bob')).toBeUndefined();
    expect(store.findFor('fs_write:edit_file', sha, 'alice')).toBeUndefined();
    clock = new Date(clock.getTime() + APPROVAL_KEEP_MS);
    expect(store.findFor('fs_write:write_file', sha, 'alice')).toBeUndefined();
  });

  it('callSha256 is sha256 of the canonical JSON of tool and arguments, whatever the key order', () => {
    expect(callSha256('fs:read_file', { b: 1, a: [2, { d: 3, c: 4 }] })).toBe(callSha256('fs:read_file', { a: [2, { c: 4, d: 3 }], b: 1 }));
    expect(callSha256('fs:read_file', { a: 1 })).toBe(sha256(canonicalJson({ tool: 'fs:read_file', args: { a: 1 } })));
    expect(callSha256('fs:read_file', { a: 1 })).not.toBe(callSha256('fs:read_file', { a: '1' }));
    expect(callSha256('fs:read_file', { a: 1 })).not.toBe(callSha256('fs:read_files', { a: 1 }));
  });
});

describe('watch and waitForDecision', () => {
  let handles: ReturnType<typeof trackHandles>;
  beforeEach(() => {
    handles = trackHandles();
  });
  afterEach(() => handles.stop());

  it('watch reports a create and a decision from another store, debounced, and stops for good', async () => {
    let calls = 0;
    const stop = store.watch(() => calls++);
    expect(await handles.open()).toEqual(['FSEVENTWRAP', 'Timeout']);
    const other = new ApprovalStore(controlDir);
    const approval = other.create(newApproval());
    await until(() => calls === 1, 'the create');
    other.decide(approval.id, 'once', CONSOLE);
    await until(() => calls === 2, 'the decision');
    await new Promise((done) => setTimeout(done, 700));
    expect(calls).toBe(2);
    stop();
    expect(await handles.open()).toEqual([]);
    other.create(newApproval());
    await new Promise((done) => setTimeout(done, 700));
    expect(calls).toBe(2);
  });

  it('watch still reports changes fs.watch cannot see (the folder was replaced), by polling', async () => {
    let calls = 0;
    const stop = store.watch(() => calls++);
    try {
      rmSync(store.folder, { recursive: true });
      mkdirSync(store.folder, { mode: 0o700 });
      await new Promise((done) => setTimeout(done, 700));
      const settled = calls;
      store.create(newApproval());
      await until(() => calls > settled, 'the poll');
    } finally {
      stop();
    }
  });

  it('waitForDecision settles with the decision another store records', async () => {
    const approval = store.create(newApproval());
    const waiting = store.waitForDecision(approval.id, 10_000, new AbortController().signal);
    // The poll and the time-out, and the folder's watcher.
    expect(await handles.open()).toEqual(['FSEVENTWRAP', 'Timeout', 'Timeout']);
    setTimeout(() => new ApprovalStore(controlDir).decide(approval.id, 'session', CONSOLE), 100);
    await expect(waiting).resolves.toMatchObject({ decision: 'session', by: CONSOLE });
    expect(await handles.open()).toEqual([]);
  });

  it('waitForDecision finds a decision in a replaced folder, by polling', async () => {
    const approval = store.create(newApproval());
    const waiting = store.waitForDecision(approval.id, 10_000, new AbortController().signal);
    renameSync(store.folder, `${store.folder}.old`);
    renameSync(`${store.folder}.old`, ws.path('moved'));
    mkdirSync(store.folder, { mode: 0o700 });
    renameSync(join(ws.path('moved'), `${approval.id}.json`), join(store.folder, `${approval.id}.json`));
    new ApprovalStore(controlDir).decide(approval.id, 'once', CONSOLE);
    await expect(waiting).resolves.toMatchObject({ decision: 'once' });
  });

  it('waitForDecision gives undefined on time-out and on abort, and leaves nothing running', async () => {
    const approval = store.create(newApproval());
    await expect(store.waitForDecision(approval.id, 150, new AbortController().signal)).resolves.toBeUndefined();
    expect(await handles.open()).toEqual([]);
    const controller = new AbortController();
    const waiting = store.waitForDecision(approval.id, 60_000, controller.signal);
    setTimeout(() => controller.abort(), 50);
    await expect(waiting).resolves.toBeUndefined();
    expect(await handles.open()).toEqual([]);
    const aborted = new AbortController();
    aborted.abort();
    await expect(store.waitForDecision(approval.id, 60_000, aborted.signal)).resolves.toBeUndefined();
    expect(await handles.open()).toEqual([]);
    expect(store.get(approval.id)?.decision).toBeUndefined();
  });

  it('waitForDecision answers at once when the decision is there already', async () => {
    const approval = store.create(newApproval());
    store.decide(approval.id, 'deny', CONSOLE);
    await expect(store.waitForDecision(approval.id, 60_000, new AbortController().signal)).resolves.toMatchObject({ decision: 'deny' });
    expect(await handles.open()).toEqual([]);
  });
});
