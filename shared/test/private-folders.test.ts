import { mkdirSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { PathGlobSet, privateControlFolderGlobs, privateControlFolderOf, Roots, ToolError } from '@bulkhead/core';
import { tempWorkspace, type TempWorkspace } from '@bulkhead/core/testing';

let ws: TempWorkspace;
let control: string;

beforeAll(() => {
  ws = tempWorkspace({ 'project/.bulkhead/keys/console.secret': 'secret\n', 'project/.bulkhead/approvals/ap-1.json': '{}\n', 'project/.bulkhead/permissions.yaml': '' }, 'bulkhead-private-');
  control = ws.path('project/.bulkhead');
  symlinkSync('project/.bulkhead', ws.path('control-link'));
  // keys/ moved to another disk and linked back: private where it really is.
  mkdirSync(ws.path('elsewhere/keys'), { recursive: true });
  writeFileSync(ws.path('elsewhere/keys/receipt-signing.key'), 'key\n');
});

afterAll(() => ws.cleanup());

describe('privateControlFolderGlobs', () => {
  it('anchors both folders at each folder that holds them, and nowhere else', () => {
    expect(privateControlFolderGlobs([ws.root], control).sort()).toEqual(['/project/.bulkhead/approvals', '/project/.bulkhead/keys']);
    expect(privateControlFolderGlobs([ws.path('project')], control).sort()).toEqual(['/.bulkhead/approvals', '/.bulkhead/keys']);
    // A search run in the control-plane folder itself (where root-anchored globs would match nothing).
    expect(privateControlFolderGlobs([control], control).sort()).toEqual(['/approvals', '/keys']);
    // Given through a symlink, the control-plane folder is found where it really is.
    expect(privateControlFolderGlobs([ws.root], ws.path('control-link')).sort()).toEqual(['/control-link/approvals', '/control-link/keys', '/project/.bulkhead/approvals', '/project/.bulkhead/keys']);
    expect(privateControlFolderGlobs([ws.path('elsewhere')], control)).toEqual([]);
    // A folder inside a private folder: everything in it is private.
    expect(privateControlFolderGlobs([join(control, 'approvals')], control)).toEqual(['/**']);
  });

  it('gives globs that PathGlobSet matches for the folders and what they hold, not for look-alikes', () => {
    const globs = new PathGlobSet(privateControlFolderGlobs([ws.root], control));
    for (const path of ['project/.bulkhead/keys', 'project/.bulkhead/keys/console.secret', 'project/.bulkhead/approvals/ap-1.json']) expect(globs.match(path), path).toBeDefined();
    for (const path of ['project/.bulkhead/KEYS/x', 'project/.bulkhead/approvals-old/x', 'keys/x', 'other/.bulkhead/keys/x', 'project/.bulkhead/permissions.yaml']) expect(globs.match(path), path).toBeUndefined();
  });
});

describe('privateControlFolderOf', () => {
  it('names the folder that holds a path, by every form of the control-plane folder, and none for look-alikes', () => {
    expect(privateControlFolderOf(control, join(control, 'approvals'))).toBe('approvals');
    expect(privateControlFolderOf(control, join(control, 'approvals', 'ap-1.json'))).toBe('approvals');
    expect(privateControlFolderOf(ws.path('control-link'), join(control, 'keys', 'console.secret'))).toBe('keys');
    expect(privateControlFolderOf(control, ws.path('control-link/keys/console.secret'))).toBeUndefined();
    for (const lookalike of ['APPROVALS', 'approvals\u200b', 'approvals-old', 'ｋｅｙｓ']) expect(privateControlFolderOf(control, join(control, lookalike, 'x')), lookalike).toBeUndefined();
    expect(privateControlFolderOf(control, join(control, 'permissions.yaml'))).toBeUndefined();
  });
});

describe('Roots and the private folders', () => {
  const refusal = async (roots: Roots, input: string): Promise<string> => {
    try {
      await roots.confine(input, 'read');
    } catch (error) {
      if (error instanceof ToolError) return error.message;
      throw error;
    }
    return 'read';
  };

  it('refuses reads there whatever denyRead says, before looking up whether the file exists', async () => {
    const roots = new Roots([ws.root], { controlDir: control, denyRead: [] });
    const approvals = (input: string) => `${input} is in the control-plane folder's approvals (pending approvals are decided by a human, not read by tools); it cannot be read`;
    expect(await refusal(roots, 'project/.bulkhead/approvals/ap-1.json')).toBe(approvals('project/.bulkhead/approvals/ap-1.json'));
    expect(await refusal(roots, 'project/.bulkhead/approvals/ap-missing.json')).toBe(approvals('project/.bulkhead/approvals/ap-missing.json'));
    expect(await refusal(roots, 'control-link/approvals/ap-missing.json')).toBe(approvals('control-link/approvals/ap-missing.json'));
    expect(await refusal(roots, 'project/.bulkhead/keys/console.secret')).toBe("project/.bulkhead/keys/console.secret is in the control-plane folder's keys (bearer tokens, signing keys); it cannot be read");
    expect(await refusal(roots, 'project/.bulkhead/permissions.yaml')).toBe('read');
    expect(await refusal(roots, 'project/.bulkhead/APPROVALS/x')).toBe(`${ws.path('project/.bulkhead/APPROVALS/x')} does not exist`);
  });

  it('follows a keys/ that is a symlink to where it really is', async () => {
    const linked = tempWorkspace({ '.bulkhead/permissions.yaml': '' }, 'bulkhead-private-link-');
    try {
      symlinkSync(ws.path('elsewhere/keys'), linked.path('.bulkhead/keys'));
      const roots = new Roots([linked.root, ws.path('elsewhere')], { controlDir: linked.path('.bulkhead'), denyRead: [] });
      expect(await refusal(roots, ws.path('elsewhere/keys/receipt-signing.key'))).toBe(`${ws.path('elsewhere/keys/receipt-signing.key')} is in the control-plane folder's keys (bearer tokens, signing keys); it cannot be read`);
    } finally {
      linked.cleanup();
    }
  });

  it('refuses writes there as the rest of the control-plane folder, look-alikes inside it included', async () => {
    const roots = new Roots([ws.root], { controlDir: control, denyRead: [] });
    for (const input of ['project/.bulkhead/approvals/ap-1.decision.json', 'control-link/approvals/new.json', 'project/.bulkhead/APPROVALS/x', 'project/.bulkhead/keys/console.secret']) {
      await expect(roots.confine(input, 'write'), input).rejects.toThrow(`${input} is inside the control-plane folder ${control}; tools never write there`);
      await expect(roots.confineEntry(input), input).rejects.toThrow(`${input} is inside the control-plane folder ${control}; tools never write there`);
    }
  });
});
