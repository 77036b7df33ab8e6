import { symlinkSync } from 'node:fs';
import { afterEach, describe, expect, it } from 'vitest';
import { canonicalPathValue, findProtectedArguments, isPathLikeName, isPathValue, pathValueForms, PermissionGate, protectedArgumentRefusal } from '@bulkhead/core';
import { tempWorkspace, type TempWorkspace } from '@bulkhead/core/testing';

/** Issue 16 item 6: the default deny of the protected set on third-party tools' path-like arguments. */

let ws: TempWorkspace | undefined;
afterEach(() => ws?.cleanup());

const hits = (args: Record<string, unknown>, options = {}) => findProtectedArguments(args, options).map((hit) => `${hit.at} ${hit.form}: ${hit.why}`);

describe('path-like arguments', () => {
  it('are known by their name, alone or inside a longer one', () => {
    const pathLike = ['path', 'paths', 'file', 'filename', 'file_path', 'filepath', 'source', 'destination', 'src', 'dest', 'target', 'directory', 'dir', 'folder', 'cwd', 'uri', 'root', 'source_path', 'targetDir', 'file-name', 'repo_path', 'outputFile'];
    expect(pathLike.filter((name) => !isPathLikeName(name))).toEqual([]);
    const notPathLike = ['query', 'content', 'url', 'name', 'text', 'command', 'pattern', 'profile', 'rooted'];
    expect(notPathLike.filter((name) => isPathLikeName(name))).toEqual([]);
  });
});

describe('path values', () => {
  it('have every form a server might take them in, and one canonical form for allow rules', () => {
    expect(pathValueForms('./a//b/../.env/')).toEqual(['a/.env']);
    expect(pathValueForms('file:///p/%2Eenv')).toEqual(['/p/.env', 'file:/p/%2Eenv', 'file:/p/.env']);
    expect(pathValueForms('a\\..\\%2Essh')).toEqual(['a\\..\\%2Essh', '%2Essh', 'a\\..\\.ssh', '.ssh']);
    expect(canonicalPathValue('./src/../src/a.ts')).toBe('src/a.ts');
    expect(canonicalPathValue('file:///home/u/a%20b.txt')).toBe('/home/u/a b.txt');
    // A plain path keeps its percent signs: to a server that does not decode, they are the name.
    expect(canonicalPathValue('100%25.txt')).toBe('100%25.txt');
  });

  it('are paths by name or by a file: URL; a URL of another scheme is not, a drive letter is', () => {
    expect(isPathValue('.env', true)).toBe(true);
    expect(isPathValue('.env', false)).toBe(false);
    expect(isPathValue('FILE:///x', false)).toBe(true);
    expect(isPathValue('https://example.com/.env', true)).toBe(false);
    expect(isPathValue('C:\\Users\\u\\.env', true)).toBe(true);
  });
});

describe('findProtectedArguments', () => {
  it('finds a protected entry in every spelling of a path', () => {
    const spellings: [string, string][] = [
      ['.env', '.env'],
      ['./.env', '.env'],
      ['sub/../.env', '.env'],
      ['a/../.env', '.env'],
      ['.//.env', '.env'],
      ['.env/', '.env'],
      ['/home/u/project/.env', '/home/u/project/.env'],
      ['/outside/the/roots/.env.production', '/outside/the/roots/.env.production'],
      ['file:///home/u/project/.env', '/home/u/project/.env'],
      ['file://localhost/home/u/.env', '/home/u/.env'],
      ['%2Eenv', '.env'],
      ['%252Eenv', '.env'],
      ['file:///p/%2Eenv', '/p/.env'],
      ['.ENV', '.ENV'],
      ['Id_RSA.pub', 'Id_RSA.pub'],
      ['sub\\..\\.env', 'sub\\..\\.env'],
    ];
    for (const [value, form] of spellings) {
      const glob = value.includes('RSA') ? 'id_rsa*' : '.env*';
      expect(hits({ path: value }), value).toEqual([`path ${form}: a protected file (credentials: ${glob})`]);
    }
  });

  it('says which rule and kind of entry: credentials, folders, code, persistence points, policy, the control plane', () => {
    expect(hits({ path: '~/.ssh/id_rsa' })).toEqual(['path ~/.ssh/id_rsa: a protected file (credentials: id_rsa*)']);
    expect(hits({ path: '~/.ssh/config' })).toEqual(['path ~/.ssh/config: inside a protected folder (credentials: .ssh/)']);
    expect(hits({ path: '/home/u/.aws' })).toEqual(['path /home/u/.aws: a protected folder (credentials: .aws/)']);
    expect(hits({ path: 'server.pem' })).toEqual(['path server.pem: a protected file (credentials: *.pem)']);
    expect(hits({ path: '.git/hooks/pre-commit' })).toEqual(['path .git/hooks/pre-commit: inside a protected folder (git internals: .git/)']);
    expect(hits({ path: '.mcp.json' })).toEqual(['path .mcp.json: a protected file (configuration that becomes code: .mcp.json)']);
    expect(hits({ path: '.github/workflows/ci.yml' })).toEqual(['path .github/workflows/ci.yml: inside a protected folder (configuration that becomes code: .github/)']);
    expect(hits({ path: '/home/u/.bashrc' })).toEqual(['path /home/u/.bashrc: a protected file (start-up configuration that runs programs: .bashrc)']);
    expect(hits({ path: '/home/u/.config/git/config' })).toEqual(['path /home/u/.config/git/config: inside a protected folder (start-up configuration that runs programs: .config/git)']);
    expect(hits({ path: 'permissions.yaml' })).toEqual(['path permissions.yaml: a protected file (Bulkhead policy: permissions.yaml)']);
    const control = { controlDir: '/ws/.bulkhead', cwd: '/ws' };
    expect(hits({ path: '.bulkhead/audit/gateway.jsonl' }, control)).toEqual(['path .bulkhead/audit/gateway.jsonl: inside the control-plane folder (/ws/.bulkhead)']);
    expect(hits({ path: '/WS/.Bulkhead/x' }, control)).toEqual(['path /WS/.Bulkhead/x: inside the control-plane folder (/ws/.bulkhead)']);
  });

  it('walks arrays and nested objects, and names where the value sits', () => {
    expect(hits({ paths: ['ok.txt', '.env'] })).toEqual(['paths[1] .env: a protected file (credentials: .env*)']);
    expect(hits({ edits: [{ path: 'notes.txt', content: 'x' }, { path: '.env', content: 'y' }] })).toEqual(['edits[1].path .env: a protected file (credentials: .env*)']);
    expect(hits({ files: [{ name: 'id_ed25519', body: '' }] })).toEqual(['files[0].name id_ed25519: a protected file (credentials: id_ed25519*)']);
    expect(hits({ a: { b: { c: [['file:///k/.env']] } } })).toEqual(['a.b.c[0][0] /k/.env: a protected file (credentials: .env*)']);
  });

  it('knows a path by its schema (format uri or uri-reference) or by being a file: URL, whatever its name', () => {
    const inputSchema = { type: 'object', properties: { location: { type: 'string', format: 'uri' }, refs: { type: 'array', items: { type: 'string', format: 'uri-reference' } } } };
    expect(hits({ location: '.env', refs: ['ok', '../.ssh/id_rsa'] }, { inputSchema })).toEqual(['location .env: a protected file (credentials: .env*)', 'refs[1] ../.ssh/id_rsa: a protected file (credentials: id_rsa*)']);
    expect(hits({ location: '.env' })).toEqual([]);
    expect(hits({ note: 'file:///etc/app/.env', url: 'FILE:///k/id_rsa' })).toEqual(['note /etc/app/.env: a protected file (credentials: .env*)', 'url /k/id_rsa: a protected file (credentials: id_rsa*)']);
  });

  it('follows symlinks on this machine when it knows where the server resolves paths (a stdio server\'s folder)', () => {
    ws = tempWorkspace({ '.env': 'S=1\n', '.ssh/id_ed25519': 'k', '.ssh/config': 'Host *', 'ok.txt': 'fine' });
    symlinkSync('.env', ws.path('notes.txt'));
    symlinkSync('.ssh', ws.path('keys'));
    symlinkSync(ws.path('ok.txt'), ws.path('fine-link.txt'));
    const options = { cwd: ws.root };
    expect(hits({ path: 'notes.txt' }, options)).toEqual([`path ${ws.path('.env')}: a protected file (credentials: .env*)`]);
    expect(hits({ path: ws.path('notes.txt') }, options)).toEqual([`path ${ws.path('.env')}: a protected file (credentials: .env*)`]);
    expect(hits({ path: 'keys/id_ed25519' }, options)).toEqual(['path keys/id_ed25519: a protected file (credentials: id_ed25519*)']);
    expect(hits({ path: 'keys/config' }, options)).toEqual([`path ${ws.path('.ssh/config')}: inside a protected folder (credentials: .ssh/)`]);
    // A file a tool would create in a linked folder is checked through the folder.
    expect(hits({ path: 'keys/new-file' }, options)).toEqual([`path ${ws.path('.ssh/new-file')}: inside a protected folder (credentials: .ssh/)`]);
    expect(hits({ path: 'fine-link.txt' }, options)).toEqual([]);
    expect(hits({ path: 'missing/deeper/file' }, options)).toEqual([]);
    // Without a folder (a server reached over HTTP may run elsewhere), names are all it has.
    expect(hits({ path: 'notes.txt' })).toEqual([]);
  });

  it('leaves alone what names no protected entry, text under names that are no paths, and URLs of other schemes', () => {
    expect(hits({ path: 'src/env.ts', paths: ['x.env', 'README.md'], source: 'https://example.com/.env', target: 'prod', query: '.env', content: 'see ~/.ssh/id_rsa', count: 3 })).toEqual([]);
  });
});

describe('protectedArgumentRefusal', () => {
  const permissions = (yaml: string) => {
    ws = tempWorkspace({ 'permissions.yaml': yaml });
    return PermissionGate.load(ws.root);
  };
  const refusal = (args: Record<string, unknown>, gate?: PermissionGate, qualifiedName = 'filesystem:read_text_file') =>
    protectedArgumentRefusal({ qualifiedName, args, trustFile: '/ws/.bulkhead/bulkhead.yaml', ...(gate ? { permissions: gate } : {}) })?.replaceAll(ws?.root ?? '\0', '<dir>');

  it('names the argument, the value, the rule and both ways to allow it', () => {
    expect(refusal({ path: '.env' }, permissions('autonomy: full\n'))).toBe(
      "Permission denied: filesystem:read_text_file's argument path names .env, a protected file (credentials: .env*). Third-party tools may not touch the protected set; to allow it, add `filesystem:read_text_file(path=.env)` under allow: in <dir>/permissions.yaml, or give the server trust: paths in /ws/.bulkhead/bulkhead.yaml. Nothing was run.",
    );
    expect(refusal({ path: 'a/../.env\u202E' })).toBe(
      "Permission denied: filesystem:read_text_file's argument path names a/../.env\\u{202E} (.env\\u{202E}), a protected file (credentials: .env*). Third-party tools may not touch the protected set; to allow it, add `filesystem:read_text_file(path=.env\\u{202E})` under allow: in permissions.yaml, or give the server trust: paths in /ws/.bulkhead/bulkhead.yaml. Nothing was run.",
    );
  });

  it('is lifted by an allow rule that names exactly that value, and by nothing else', () => {
    const gate = permissions('autonomy: full\nallow:\n  - filesystem\n  - "filesystem:*"\n  - "filesystem:read_text_file(path=.env)"\n  - "filesystem:read_multiple_files(paths=.env)"\n');
    expect(refusal({ path: '.env' }, gate)).toBeUndefined();
    expect(refusal({ path: './.env' }, gate)).toBeUndefined();
    expect(refusal({ path: '%2Eenv' }, gate)).toBeUndefined();
    expect(refusal({ path: '.env.local' }, gate)).toMatch(/^Permission denied: filesystem:read_text_file's argument path names \.env\.local, a protected file/);
    expect(refusal({ path: '/home/u/.env' }, gate)).toMatch(/add `filesystem:read_text_file\(path=\/home\/u\/\.env\)`/);
    expect(refusal({ source: '.env' }, gate)).toMatch(/argument source names \.env/);
    expect(refusal({ path: '.env' }, gate, 'filesystem:write_file')).toMatch(/^Permission denied: filesystem:write_file's argument path/);
    expect(refusal({ paths: ['.env', 'id_rsa'] }, gate, 'filesystem:read_multiple_files')).toMatch(/argument paths\[1\] names id_rsa, a protected file \(credentials: id_rsa\*\)/);
  });

  it('is lifted by a (*=glob) allow rule that matches the value', () => {
    const gate = permissions('allow:\n  - "filesystem:*(*=**/.env*)"\n');
    expect(refusal({ edits: [{ path: 'config/.env.test' }] }, gate)).toBeUndefined();
    expect(refusal({ edits: [{ path: 'config/.env.test' }, { path: 'key.pem' }] }, gate)).toMatch(/argument edits\[1\]\.path names key\.pem/);
  });
});
