import { linkSync, mkdirSync, symlinkSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { auditPolicySchema, PermissionGate } from '@bulkhead/core';
import { connectInProcess, tempWorkspace, type TempWorkspace } from '@bulkhead/core/testing';
import { createFsServer } from '@bulkhead/fs';
import { fsPolicySchema } from '../src/policy.js';
import { toolCall, type ToolCall } from './helpers.js';

/** Every secret holds PROBE, and so does one ordinary file: a search that finds none of the secrets still finds that one. */
const SECRETS = {
  '.bulkhead/keys/console.secret': 'PROBE console secret CONSOLE_SECRET_0123\n',
  '.bulkhead/keys/bulkhead.http.token': 'PROBE bearer TOKEN_SECRET_4567\n',
  '.bulkhead/keys/consoles/4242.json': '{"pid":4242,"url":"http://127.0.0.1:43123/console/","probe":"PROBE"}\n',
  '.bulkhead/approvals/ap-7f3a.json': '{"id":"ap-7f3a","tool":"fs_write:write_file","arguments":{"content":"PROBE APPROVAL_SECRET"}}\n',
  '.bulkhead/approvals/ap-7f3a.decision.json': '{"decision":"once","by":"PROBE human"}\n',
};
const ORDINARY = {
  '.bulkhead/permissions.yaml': '# PROBE: an ordinary policy file, readable\nallow: []\n',
  // Look-alikes on a case-sensitive file system: other folders, readable, holding nothing of the real ones.
  '.bulkhead/APPROVALS/look.json': 'PROBE look-alike\n',
  '.bulkhead/approvals\u200b/zero-width.json': 'PROBE zero-width look-alike\n',
  'notes.txt': 'nothing to see\n',
};
const LEAKS = /CONSOLE_SECRET|TOKEN_SECRET|APPROVAL_SECRET|ap-7f3a|console\.secret|http\.token|4242|PROBE human/;

interface Served {
  readonly ws: TempWorkspace;
  call(name: string, args?: Record<string, unknown>): Promise<ToolCall>;
  close(): Promise<void>;
}

async function serve(engine: 'ripgrep' | 'builtin', root: (ws: TempWorkspace) => string = (ws) => ws.root): Promise<Served> {
  const ws = tempWorkspace({ ...SECRETS, ...ORDINARY }, 'bulkhead-fs-private-');
  symlinkSync('.bulkhead', ws.path('control-link'));
  symlinkSync('.bulkhead/approvals', ws.path('approvals-link'));
  symlinkSync('.bulkhead/keys/console.secret', ws.path('secret-link'));
  const controlDir = ws.path('.bulkhead');
  const server = createFsServer({
    roots: [root(ws)],
    controlDir,
    gate: { kind: 'self', permissions: PermissionGate.load(controlDir) },
    // Off, so that the listings of the control-plane folder are exact.
    audit: auditPolicySchema.parse({ enabled: false }),
    policy: fsPolicySchema.parse({ search_engine: engine, limits: {} }),
  });
  const { client, close } = await connectInProcess(server);
  return {
    ws,
    call: async (name, args = {}) => toolCall(await client.callTool({ name, arguments: args })),
    close: async () => {
      await close();
      await server.close();
      ws.cleanup();
    },
  };
}

const approvalsRefusal = (path: string) => `${path} is in the control-plane folder's approvals (pending approvals are decided by a human, not read by tools); it cannot be read`;
const keysRefusal = (path: string) => `${path} is in the control-plane folder's keys (bearer tokens, signing keys); it cannot be read`;

describe.each(['ripgrep', 'builtin'] as const)('the private folders with the %s engine', (engine) => {
  let fs: Served;
  beforeAll(async () => {
    fs = await serve(engine);
  });
  afterAll(async () => {
    await fs.close();
  });

  it('read_file refuses approvals/ and keys/ by name, whether the file exists or not, through symlinks and as absolute paths', async () => {
    const cases: [string, string][] = [
      ['.bulkhead/approvals/ap-7f3a.json', approvalsRefusal('.bulkhead/approvals/ap-7f3a.json')],
      ['.bulkhead/approvals/no-such-id.json', approvalsRefusal('.bulkhead/approvals/no-such-id.json')],
      ['.bulkhead/approvals', approvalsRefusal('.bulkhead/approvals')],
      ['.bulkhead/approvals/', approvalsRefusal('.bulkhead/approvals/')],
      ['.bulkhead/./keys/../approvals/ap-7f3a.decision.json', approvalsRefusal('.bulkhead/./keys/../approvals/ap-7f3a.decision.json')],
      ['approvals-link/ap-7f3a.json', approvalsRefusal('approvals-link/ap-7f3a.json')],
      ['approvals-link/no-such-id.json', approvalsRefusal('approvals-link/no-such-id.json')],
      ['control-link/approvals/ap-7f3a.json', approvalsRefusal('control-link/approvals/ap-7f3a.json')],
      ['.bulkhead/keys/console.secret', keysRefusal('.bulkhead/keys/console.secret')],
      ['.bulkhead/keys/no-such-secret', keysRefusal('.bulkhead/keys/no-such-secret')],
      ['.bulkhead/keys/consoles/4242.json', keysRefusal('.bulkhead/keys/consoles/4242.json')],
      ['secret-link', keysRefusal('secret-link')],
      ['control-link/keys/consoles', keysRefusal('control-link/keys/consoles')],
    ];
    for (const [path, refusal] of cases) expect(await fs.call('read_file', { path }), path).toEqual(expect.objectContaining({ isError: true, text: refusal }));
    const absolute = fs.ws.path('.bulkhead/approvals/ap-7f3a.json');
    expect((await fs.call('read_file', { path: absolute })).text).toBe(approvalsRefusal(absolute));
  });

  it('read_file still reads the rest of the control-plane folder and the look-alike folders, which are other folders here', async () => {
    expect((await fs.call('read_file', { path: '.bulkhead/permissions.yaml' })).text).toContain('# PROBE: an ordinary policy file');
    expect((await fs.call('read_file', { path: '.bulkhead/APPROVALS/look.json' })).text).toContain('PROBE look-alike');
    expect((await fs.call('read_file', { path: '.bulkhead/approvals\u200b/zero-width.json' })).text).toContain('PROBE zero-width look-alike');
  });

  it('grep never searches them: from the root, from the control-plane folder, from a symlink to it, in every mode', async () => {
    for (const path of [undefined, '.bulkhead', 'control-link', '.bulkhead/']) {
      for (const output_mode of ['files_with_matches', 'content', 'count'] as const) {
        const found = await fs.call('grep', { pattern: 'PROBE', hidden: true, output_mode, ...(path ? { path } : {}) });
        expect(found.isError, `${path} ${output_mode}`).toBe(false);
        expect(found.text, `${path} ${output_mode}`).not.toMatch(LEAKS);
        expect(found.text, `${path} ${output_mode}`).toContain('permissions.yaml');
        expect(found.text, `${path} ${output_mode}`).toContain('look.json');
      }
    }
    const files = await fs.call('grep', { pattern: 'PROBE', hidden: true, path: '.bulkhead' });
    expect(files.text).toBe(['.bulkhead/APPROVALS/look.json', '".bulkhead/approvals\\u200b/zero-width.json"', '.bulkhead/permissions.yaml'].join('\n'));
    for (const glob of ['*.json', 'approvals/**', '**/keys/**', '*.secret']) {
      expect((await fs.call('grep', { pattern: 'SECRET|human', hidden: true, glob })).text, glob).toBe(`No matches for "SECRET|human" in the root.`);
    }
  });

  it('grep refuses a private folder, or a file in it, named as its path', async () => {
    for (const [path, refusal] of [
      ['.bulkhead/approvals', approvalsRefusal('.bulkhead/approvals')],
      ['approvals-link', approvalsRefusal('approvals-link')],
      ['.bulkhead/approvals/ap-7f3a.json', approvalsRefusal('.bulkhead/approvals/ap-7f3a.json')],
      ['.bulkhead/keys', keysRefusal('.bulkhead/keys')],
    ]) {
      expect(await fs.call('grep', { pattern: 'PROBE', hidden: true, path }), path).toEqual(expect.objectContaining({ isError: true, text: refusal }));
    }
  });

  it('glob_files never lists them, whatever the pattern and the folder', async () => {
    for (const [pattern, path] of [['**/*', undefined], ['**', '.bulkhead'], ['**', 'control-link'], ['.bulkhead/**', undefined], ['**/approvals/*', undefined], ['**/*.secret', undefined], ['*', '.bulkhead']] as const) {
      const listed = await fs.call('glob_files', { pattern, hidden: true, include_ignored: true, ...(path ? { path } : {}) });
      expect(listed.text, `${pattern} in ${path}`).not.toMatch(LEAKS);
    }
    const inControl = await fs.call('glob_files', { pattern: '**', hidden: true, include_ignored: true, path: '.bulkhead' });
    expect(inControl.text.split('\n').sort()).toEqual(['".bulkhead/approvals\\u200b/zero-width.json"', '.bulkhead/APPROVALS/look.json', '.bulkhead/permissions.yaml']);
    expect((await fs.call('glob_files', { pattern: '**', path: '.bulkhead/approvals' })).text).toBe(approvalsRefusal('.bulkhead/approvals'));
  });

  it('list_files shows the two folders by name with a note and never what they hold, at any depth and through a symlink', async () => {
    const expected = (top: string) => [
      `${top}/`,
      '  APPROVALS/',
      '    look.json (17 B)',
      '  approvals/ (hidden: pending approvals, decided by a human)',
      '  "approvals\\u200b"/',
      '    zero-width.json (28 B)',
      '  keys/ (hidden: control-plane credentials)',
      '  permissions.yaml (53 B)',
    ];
    expect((await fs.call('list_files', { path: '.bulkhead', depth: 5 })).text).toBe(expected('.bulkhead').join('\n'));
    expect((await fs.call('list_files', { path: 'control-link', depth: 5 })).text).toBe(expected('.bulkhead').join('\n'));
    const whole = await fs.call('list_files', { depth: 5 });
    expect(whole.text).not.toMatch(LEAKS);
    expect(whole.text).toContain('    keys/ (hidden: control-plane credentials)');
    expect(whole.text).toContain('\n  approvals-link -> (hidden: pending approvals, decided by a human)\n  control-link -> .bulkhead\n');
    expect(whole.text).toContain('\n  secret-link -> (hidden: control-plane credentials)');
    expect((await fs.call('list_files', { path: '.bulkhead/keys/consoles' })).text).toBe(keysRefusal('.bulkhead/keys/consoles'));
  });

  it('a hard link to the console secret elsewhere in the root is refused like the secret itself', async () => {
    linkSync(fs.ws.path('.bulkhead/keys/console.secret'), fs.ws.path('innocent.txt'));
    expect(await fs.call('read_file', { path: 'innocent.txt' })).toEqual(expect.objectContaining({ isError: true, text: "innocent.txt cannot be read: it is a hard link to a file in the control-plane folder's keys/ or approvals/" }));
    expect((await fs.call('grep', { pattern: 'CONSOLE_SECRET' })).text).toBe('No matches for "CONSOLE_SECRET" in the root.');
  });
});

describe('a root that is the control-plane folder itself', () => {
  let fs: Served;
  beforeAll(async () => {
    fs = await serve('ripgrep', (ws) => ws.path('.bulkhead'));
  });
  afterAll(async () => {
    await fs.close();
  });

  it('keeps keys/ and approvals/ out of every fs tool there too', async () => {
    expect((await fs.call('read_file', { path: 'approvals/ap-7f3a.json' })).text).toBe(approvalsRefusal('approvals/ap-7f3a.json'));
    expect((await fs.call('read_file', { path: 'keys/console.secret' })).text).toBe(keysRefusal('keys/console.secret'));
    expect((await fs.call('grep', { pattern: 'PROBE', hidden: true })).text).toBe(['APPROVALS/look.json', '"approvals\\u200b/zero-width.json"', 'permissions.yaml'].join('\n'));
    expect((await fs.call('glob_files', { pattern: '**', include_ignored: true })).text.split('\n').sort()).toEqual(['"approvals\\u200b/zero-width.json"', 'APPROVALS/look.json', 'permissions.yaml']);
    expect((await fs.call('list_files', { depth: 3 })).text).not.toMatch(LEAKS);
    mkdirSync(join(fs.ws.path('.bulkhead'), 'approvals', 'nested'));
    expect((await fs.call('list_files', { depth: 3 })).text).not.toContain('nested');
  });
});
