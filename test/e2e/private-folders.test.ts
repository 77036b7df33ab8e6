import { execFileSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { existsSync, lstatSync, readdirSync, readFileSync, symlinkSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startStdioServer, tempWorkspace, type ServerProcess, type TempWorkspace } from '@bulkhead/core/testing';
import { FS_CLI, GATEWAY_CLI, GIT_CLI, SHELL_CLI, text, WEB_CLI } from './helpers.js';

/**
 * The attacks of a model on the control plane's private folders, through the built CLIs as a
 * client starts them: `keys/` (bearer tokens, the console's secret and registry) and `approvals/`
 * (the pending calls and their decisions). Every secret value is distinct, so any of them in any
 * answer fails the test.
 */
const CONTROL_PLANE = {
  '.bulkhead/keys/console.secret': 'CONSOLE_SECRET_0123\n',
  '.bulkhead/keys/bulkhead.http.token': 'TOKEN_SECRET_4567\n',
  '.bulkhead/keys/consoles/4242.json': '{"pid":4242,"url":"http://127.0.0.1:43123/console/"}\n',
  '.bulkhead/approvals/ap-7f3a.json': '{"id":"ap-7f3a","tool":"fs_write:write_file","arguments":{"content":"APPROVAL_SECRET"}}\n',
  '.bulkhead/permissions.yaml': 'allow:\n  - fs\n  - fs_write\n  - shell\n  - git\n  - web\n',
  '.bulkhead/shell_policy.yaml': 'enabled: true\n',
  'notes.txt': 'ordinary notes\n',
};
const FS_WRITE_CLI = fileURLToPath(new URL('../../servers/fs-write/dist/cli.js', import.meta.url));
const VALUES = /CONSOLE_SECRET|TOKEN_SECRET|APPROVAL_SECRET|4242/;
const NAMES = /ap-7f3a|console\.secret|http\.token|consoles/;
/** Matches every secret value but not itself: the audit log keeps every pattern searched for. */
const PROBE = '[C]ONSOLE_SECRET|[T]OKEN_SECRET|[A]PPROVAL_SECRET|"pid":[4]242';
const approvalsRefusal = (path: string) => `${path} is in the control-plane folder's approvals (pending approvals are decided by a human, not read by tools); it cannot be read`;
const keysRefusal = (path: string) => `${path} is in the control-plane folder's keys (bearer tokens, signing keys); it cannot be read`;

/** Every name and byte under the two folders, to prove that nothing in them changed. */
function fingerprint(ws: TempWorkspace): string {
  const hash = createHash('sha256');
  const walk = (folder: string) => {
    for (const name of readdirSync(folder).sort()) {
      const path = join(folder, name);
      hash.update(`${path}\0`);
      if (lstatSync(path).isDirectory()) walk(path);
      else hash.update(readFileSync(path));
    }
  };
  walk(ws.path('.bulkhead/keys'));
  walk(ws.path('.bulkhead/approvals'));
  return hash.digest('hex');
}

type Call = (tool: string, args: Record<string, unknown>) => Promise<{ isError: boolean; text: string }>;

function caller(server: ServerProcess, viaGateway: boolean): Call {
  return async (tool, args) => {
    const result = viaGateway ? await server.client.callTool({ name: 'call_tool', arguments: { name: tool, arguments: args } }) : await server.client.callTool({ name: tool.split(':')[1]!, arguments: args });
    return { isError: result.isError === true, text: text(result) };
  };
}

/** The reading attacks, the same standalone and behind the gateway. */
async function fsReadAttacks(call: Call, ws: TempWorkspace, controlFiles: readonly string[] = []): Promise<void> {
  const refusals: [string, string][] = [
    ['.bulkhead/approvals/ap-7f3a.json', approvalsRefusal('.bulkhead/approvals/ap-7f3a.json')],
    ['.bulkhead/approvals/ap-0000.json', approvalsRefusal('.bulkhead/approvals/ap-0000.json')],
    ['approvals-link/ap-7f3a.json', approvalsRefusal('approvals-link/ap-7f3a.json')],
    ['.bulkhead/keys/console.secret', keysRefusal('.bulkhead/keys/console.secret')],
    ['.bulkhead/keys/no-such.secret', keysRefusal('.bulkhead/keys/no-such.secret')],
    [ws.path('.bulkhead/keys/consoles/4242.json'), keysRefusal(ws.path('.bulkhead/keys/consoles/4242.json'))],
  ];
  for (const [path, refusal] of refusals) expect(await call('fs:read_file', { path }), path).toEqual({ isError: true, text: refusal });
  for (const path of [undefined, '.bulkhead', 'control-link']) {
    const found = await call('fs:grep', { pattern: PROBE, hidden: true, output_mode: 'content', ...(path ? { path } : {}) });
    expect(found, path).toEqual({ isError: false, text: `No matches for ${JSON.stringify(PROBE)} in ${path ?? 'the root'}.` });
  }
  const globbed = await call('fs:glob_files', { pattern: '**', hidden: true, include_ignored: true });
  expect(globbed.text.split('\n').filter((path) => !path.startsWith('.bulkhead/audit/')).sort()).toEqual([...controlFiles, '.bulkhead/permissions.yaml', '.bulkhead/shell_policy.yaml', 'notes.txt'].sort());
  const listed = await call('fs:list_files', { depth: 5 });
  expect(listed.text).not.toMatch(NAMES);
  expect(listed.text).toContain('\n    approvals/ (hidden: pending approvals, decided by a human)\n');
  expect(listed.text).toContain('\n    keys/ (hidden: control-plane credentials)\n');
  expect(listed.text).toContain('\n  approvals-link -> (hidden: pending approvals, decided by a human)\n');
}

/** The writing attacks, the same standalone and behind the gateway. */
async function fsWriteAttacks(call: Call, ws: TempWorkspace): Promise<void> {
  const before = fingerprint(ws);
  const control = ws.path('.bulkhead');
  const inControlPlane = (path: string) => `${path} is inside the control-plane folder ${control}; tools never write there`;
  const attempts: [string, Record<string, unknown>, string][] = [
    ['fs_write:write_file', { path: '.bulkhead/approvals/ap-7f3a.decision.json', content: '{"decision":"once"}' }, inControlPlane('.bulkhead/approvals/ap-7f3a.decision.json')],
    ['fs_write:write_file', { path: '.bulkhead/approvals/x.decision.json', content: '{"decision":"always"}' }, inControlPlane('.bulkhead/approvals/x.decision.json')],
    ['fs_write:write_file', { path: '.bulkhead/keys/console.secret', content: 'guessed' }, inControlPlane('.bulkhead/keys/console.secret')],
    ['fs_write:write_file', { path: 'approvals-link/forged.decision.json', content: '{"decision":"once"}' }, inControlPlane('approvals-link/forged.decision.json')],
    ['fs_write:edit_file', { path: '.bulkhead/approvals/ap-7f3a.json', old_string: 'APPROVAL_SECRET', new_string: 'changed' }, inControlPlane('.bulkhead/approvals/ap-7f3a.json')],
    ['fs_write:create_directory', { path: '.bulkhead/approvals/sub' }, inControlPlane('.bulkhead/approvals/sub')],
    ['fs_write:move_path', { source: '.bulkhead/approvals/ap-7f3a.json', destination: 'stolen.json' }, inControlPlane('.bulkhead/approvals/ap-7f3a.json')],
    ['fs_write:move_path', { source: '.bulkhead/approvals', destination: 'approvals-copy' }, inControlPlane('.bulkhead/approvals')],
    ['fs_write:move_path', { source: 'notes.txt', destination: '.bulkhead/approvals/ap-9999.json' }, inControlPlane('.bulkhead/approvals/ap-9999.json')],
    ['fs_write:move_path', { source: 'notes.txt', destination: 'approvals-link/ap-9999.json' }, inControlPlane('approvals-link/ap-9999.json')],
    ['fs_write:delete_path', { path: '.bulkhead/approvals/ap-7f3a.json' }, inControlPlane('.bulkhead/approvals/ap-7f3a.json')],
    ['fs_write:delete_path', { path: '.bulkhead/keys' }, inControlPlane('.bulkhead/keys')],
    ['fs_write:delete_path', { path: 'approvals-link/ap-7f3a.json' }, inControlPlane('approvals-link/ap-7f3a.json')],
    // Look-alikes in the control-plane folder are in it: refused as it is.
    ['fs_write:write_file', { path: '.bulkhead/APPROVALS/x.decision.json', content: 'x' }, inControlPlane('.bulkhead/APPROVALS/x.decision.json')],
    ['fs_write:write_file', { path: '.bulkhead/ａｐｐｒｏｖａｌｓ/x.decision.json', content: 'x' }, inControlPlane('.bulkhead/ａｐｐｒｏｖａｌｓ/x.decision.json')],
    // A case variant of the control-plane folder is refused as it would be on a case-insensitive file system.
    ['fs_write:write_file', { path: '.BULKHEAD/approvals/x.decision.json', content: 'x' }, inControlPlane('.BULKHEAD/approvals/x.decision.json')],
  ];
  for (const [tool, args, refusal] of attempts) expect(await call(tool, args), `${tool} ${JSON.stringify(args)}`).toEqual({ isError: true, text: refusal });
  // Look-alikes outside the control-plane folder are other folders: written where they are, and nothing reaches the real one.
  for (const path of ['approvals/x.decision.json', '.bulkhead\u200b/approvals/x.decision.json', 'keys/console.secret']) {
    const written = await call('fs_write:write_file', { path, content: 'look-alike' });
    expect(written.isError, path).toBe(false);
    expect(readFileSync(ws.path(path), 'utf8')).toBe('look-alike');
  }
  expect(fingerprint(ws)).toBe(before);
  expect(existsSync(ws.path('stolen.json'))).toBe(false);
  expect(existsSync(ws.path('approvals-copy'))).toBe(false);
  expect(readFileSync(ws.path('notes.txt'), 'utf8')).toBe('ordinary notes\n');
}

function workspace(): TempWorkspace {
  const ws = tempWorkspace(CONTROL_PLANE, 'bulkhead-private-');
  symlinkSync('.bulkhead', ws.path('control-link'));
  symlinkSync('.bulkhead/approvals', ws.path('approvals-link'));
  return ws;
}

describe('bulkhead-fs served alone', () => {
  let ws: TempWorkspace;
  let server: ServerProcess;
  beforeAll(async () => {
    ws = workspace();
    server = await startStdioServer({ script: FS_CLI, args: ['--root', ws.root] });
  });
  afterAll(async () => {
    await server.close();
    ws.cleanup();
  });

  it('refuses, hides and never lists keys/ and approvals/', async () => {
    await fsReadAttacks(caller(server, false), ws);
  });
});

describe("another workspace's control-plane folder under a root (--root ~)", () => {
  let ws: TempWorkspace;
  let server: ServerProcess;
  beforeAll(async () => {
    ws = tempWorkspace({
      'project/.bulkhead/keys/console.secret': 'OTHER_CONSOLE_SECRET\n',
      'project/.bulkhead/approvals/k3m9q2xa.json': '{"id":"k3m9q2xa","args":{"content":"OTHER_APPROVAL"}}\n',
      'project/.bulkhead/permissions.yaml': 'autonomy: supervised\n',
      'project/notes.txt': 'ordinary notes\n',
    });
    server = await startStdioServer({ script: FS_CLI, args: ['--root', ws.root] });
  });
  afterAll(async () => {
    await server.close();
    ws.cleanup();
  });

  it('is read, searched and globbed like a credential: never (fs deny_read default)', async () => {
    const call = caller(server, false);
    const secret = await call('fs:read_file', { path: 'project/.bulkhead/keys/console.secret' });
    expect(secret).toEqual({ isError: true, text: 'project/.bulkhead/keys/console.secret is a protected secret (matches `**/.bulkhead/keys` in deny_read of fs_policy.yaml); it cannot be read' });
    const approval = await call('fs:read_file', { path: 'project/.bulkhead/approvals/k3m9q2xa.json' });
    expect(approval).toEqual({ isError: true, text: 'project/.bulkhead/approvals/k3m9q2xa.json is a protected secret (matches `**/.bulkhead/approvals` in deny_read of fs_policy.yaml); it cannot be read' });
    const grep = await call('fs:grep', { pattern: 'OTHER_|k3m9q2xa', path: '.' });
    expect(grep.text).not.toMatch(/OTHER_CONSOLE_SECRET|OTHER_APPROVAL|console\.secret|k3m9q2xa\.json/);
    const glob = await call('fs:glob_files', { pattern: '**/*' });
    expect(glob.text).toContain('project/notes.txt');
    expect(glob.text).not.toMatch(/console\.secret|k3m9q2xa/);
    // Its policy files stay readable: only the private folders are credentials.
    expect((await call('fs:read_file', { path: 'project/.bulkhead/permissions.yaml' })).text).toContain('autonomy: supervised');
  });
});

describe('bulkhead-fs-write served alone', () => {
  it('writes, creates, moves in and out of, and deletes nothing there', async () => {
    const ws = workspace();
    const server = await startStdioServer({ script: FS_WRITE_CLI, args: ['--root', ws.root] });
    try {
      await fsWriteAttacks(caller(server, false), ws);
    } finally {
      await server.close();
      ws.cleanup();
    }
  });
});

describe('the gateway over stdio, with every compartment', () => {
  let ws: TempWorkspace;
  let server: ServerProcess;
  let call: Call;
  beforeAll(async () => {
    ws = workspace();
    ws.write('.bulkhead/bulkhead.yaml', 'servers:\n  fs: {}\n  fs_write: {}\n  shell: {}\n  git: {}\n');
    server = await startStdioServer({ script: GATEWAY_CLI, args: ['start', '--root', ws.root] });
    call = caller(server, true);
  });
  afterAll(async () => {
    await server.close();
    ws.cleanup();
  });

  it('fs: refuses, hides and never lists them, whatever the gateway itself keeps there', async () => {
    await fsReadAttacks(call, ws, ['.bulkhead/bulkhead.yaml', '.bulkhead/pins.json']);
    // Whatever the gateway wrote into keys/ on its start (its console's secret, say) stays out of every answer too.
    const kept = readdirSync(ws.path('.bulkhead/keys'), { recursive: true, withFileTypes: true }).filter((entry) => entry.isFile());
    const listing = (await call('fs:list_files', { depth: 5 })).text + (await call('fs:glob_files', { pattern: '**', hidden: true, include_ignored: true })).text;
    for (const entry of kept) {
      expect(listing).not.toContain(entry.name);
      const value = readFileSync(join(entry.parentPath, entry.name), 'utf8').trim();
      if (value.length >= 16) expect((await call('fs:grep', { pattern: value.slice(0, 16), literal: true, hidden: true })).text).toBe(`No matches for ${JSON.stringify(value.slice(0, 16))} in the root.`);
    }
  });

  it('fs_write: writes, creates, moves in and out of, and deletes nothing there, also through a planted symlink', async () => {
    await fsWriteAttacks(call, ws);
  });

  it('shell: the sandbox shows both folders empty and read-only', async () => {
    const shown = await call('shell:run_shell', { command: 'ls -A .bulkhead/keys .bulkhead/approvals; cat .bulkhead/approvals/ap-7f3a.json approvals-link/ap-7f3a.json 2>&1; { echo x > .bulkhead/approvals/x.decision.json; } 2>&1; echo "exit $?"' });
    expect(shown.text.split('\n[exit code')[0]).toBe(
      [
        '.bulkhead/approvals:',
        '',
        '.bulkhead/keys:',
        'cat: .bulkhead/approvals/ap-7f3a.json: No such file or directory',
        'cat: approvals-link/ap-7f3a.json: No such file or directory',
        '/usr/bin/bash: line 1: .bulkhead/approvals/x.decision.json: Read-only file system',
        'exit 1',
      ].join('\n'),
    );
    expect(existsSync(ws.path('.bulkhead/approvals/x.decision.json'))).toBe(false);
  });
});

describe('bulkhead-shell served alone', () => {
  it('hides both folders from cat, find and grep in its sandbox', async () => {
    const ws = workspace();
    const server = await startStdioServer({ script: SHELL_CLI, args: ['--root', ws.root] });
    try {
      const result = await caller(server, false)('shell:run_shell', { command: 'cat .bulkhead/keys/console.secret 2>&1; find .bulkhead -path "*keys*" -o -path "*approvals*"; grep -rl SECRET . ; echo done' });
      expect(result.text).not.toMatch(VALUES);
      expect(result.text.split('\n[exit code')[0]).toBe(['cat: .bulkhead/keys/console.secret: No such file or directory', '.bulkhead/approvals', '.bulkhead/keys', 'done'].join('\n'));
    } finally {
      await server.close();
      ws.cleanup();
    }
  });
});

const GIT_ENV = { PATH: process.env['PATH']!, HOME: '/nonexistent', GIT_CONFIG_GLOBAL: '/dev/null', GIT_CONFIG_NOSYSTEM: '1', GIT_AUTHOR_NAME: 'A', GIT_AUTHOR_EMAIL: 'a@x', GIT_COMMITTER_NAME: 'A', GIT_COMMITTER_EMAIL: 'a@x' };

describe('bulkhead-git on a repository whose work tree holds the control-plane folder (not ignored)', () => {
  let ws: TempWorkspace;
  let server: ServerProcess;
  let call: Call;
  beforeAll(async () => {
    ws = workspace();
    const git = (...args: string[]) => execFileSync('git', ['-c', 'init.defaultBranch=main', ...args], { cwd: ws.root, env: GIT_ENV, encoding: 'utf8' });
    git('init', '-q');
    // A user's `git add -A` before they ignored the folder: a token and an approval committed.
    git('add', '-A');
    git('commit', '-q', '-m', 'everything, secrets included');
    ws.write('.bulkhead/approvals/ap-7f3a.json', '{"id":"ap-7f3a","arguments":{"content":"APPROVAL_SECRET changed"}}\n');
    ws.write('.bulkhead/approvals/ap-new1.json', '{"id":"ap-new1","arguments":"APPROVAL_SECRET new"}\n');
    ws.write('.bulkhead/keys/console.secret', 'CONSOLE_SECRET_rotated\n');
    ws.write('notes.txt', 'ordinary notes, changed\n');
    server = await startStdioServer({ script: GIT_CLI, args: ['--root', ws.root] });
    call = caller(server, false);
  });
  afterAll(async () => {
    await server.close();
    ws.cleanup();
  });

  it('git_status names nothing in them, tracked or untracked', async () => {
    const status = await call('git:git_status', {});
    expect(status.text).not.toMatch(NAMES);
    expect(status.text).toBe(status.text.startsWith('On branch main at ') ? `${status.text.split('\n')[0]}\nNot staged (1):\n  modified: notes.txt` : 'unexpected');
  });

  it('git_show_file and git_blame refuse them at any commit', async () => {
    for (const tool of ['git:git_show_file', 'git:git_blame']) {
      expect(await call(tool, { rev: 'HEAD', path: '.bulkhead/approvals/ap-7f3a.json' }), tool).toEqual({ isError: true, text: approvalsRefusal('.bulkhead/approvals/ap-7f3a.json') });
      expect(await call(tool, { rev: 'HEAD', path: '.bulkhead/keys/console.secret' }), tool).toEqual({ isError: true, text: keysRefusal('.bulkhead/keys/console.secret') });
    }
    expect((await call('git:git_show_file', { rev: 'HEAD', path: 'notes.txt' })).text).toBe('     1\tordinary notes');
  });

  it('git_diff and git_show never print their lines', async () => {
    const diff = await call('git:git_diff', {});
    expect(diff.text).not.toMatch(VALUES);
    expect(diff.text).not.toMatch(NAMES);
    expect(diff.text).toContain('+ordinary notes, changed');
    const against = await call('git:git_diff', { from: 'HEAD~0', path: '.bulkhead', stat_only: false });
    expect(against.text).not.toMatch(VALUES);
    expect(against.text).not.toMatch(NAMES);
    expect(against.text).toBe('No differences.');
    const show = await call('git:git_show', { rev: 'HEAD' });
    expect(show.text).not.toMatch(VALUES);
    expect(show.text).not.toMatch(NAMES);
    expect(show.text).toContain('added .bulkhead/permissions.yaml');
    expect(show.text).toContain('+ordinary notes');
  });
});

describe('web_fetch and a console on 127.0.0.1', () => {
  let site: Server;
  let port: number;
  const seen: string[] = [];
  beforeAll(async () => {
    // The only network this touches: a console-like page on 127.0.0.1.
    site = createServer((request, response) => {
      seen.push(request.url ?? '');
      response.end('<title>Bulkhead console</title>');
    });
    await new Promise<void>((resolve) => site.listen(0, '127.0.0.1', resolve));
    port = (site.address() as AddressInfo).port;
  });
  afterAll(async () => {
    site.closeAllConnections();
    await new Promise<void>((resolve) => site.close(() => resolve()));
  });

  const LOOPBACK = 'is refused: it is a loopback address (allow_private in web_policy.yaml lists CIDRs that may be reached)';
  const REFUSALS: Record<string, string> = {
    '127.0.0.1': `127.0.0.1 ${LOOPBACK}`,
    localhost: 'localhost is refused: it names the local host or a cloud metadata service',
    '[::ffff:7f00:1]': `127.0.0.1 ${LOOPBACK}`,
  };

  it.each([
    ['bulkhead-web alone', WEB_CLI, [], false],
    ['the gateway', GATEWAY_CLI, ['start'], true],
  ] as const)('is refused by the SSRF guard of %s, with the secret in the URL or not, and nothing reaches the page', async (_name, script, command, viaGateway) => {
    const ws = tempWorkspace({ '.bulkhead/permissions.yaml': 'allow:\n  - web\n', '.bulkhead/bulkhead.yaml': 'servers:\n  web: {}\n' });
    const server = await startStdioServer({ script, args: [...command, '--root', ws.root] });
    try {
      const call = caller(server, viaGateway);
      for (const url of [`http://127.0.0.1:${port}/console/?secret=CONSOLE_SECRET_0123`, `http://127.0.0.1:${port}/console/approvals/ap-7f3a`, `http://localhost:${port}/console/`, `http://[::ffff:127.0.0.1]:${port}/console/`]) {
        const fetched = await call('web:web_fetch', { url });
        expect(fetched.isError, url).toBe(true);
        expect(fetched.text, url).toBe(REFUSALS[new URL(url).hostname]);
      }
      expect(seen).toEqual([]);
    } finally {
      await server.close();
      ws.cleanup();
    }
  });
});
