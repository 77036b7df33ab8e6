import { symlinkSync } from 'node:fs';
import { pathToFileURL } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { tempWorkspace, type TempWorkspace } from '@bulkhead/core/testing';
import { narrowRoots } from '../src/relay/roots.js';

describe('narrowRoots', () => {
  let ws: TempWorkspace;
  const uri = (relative: string) => pathToFileURL(ws.path(relative)).href;
  const gateway = () => [{ folder: ws.path('proj'), root: { uri: uri('proj'), name: 'proj' } }];
  beforeAll(() => {
    ws = tempWorkspace({ 'proj/sub/a.txt': 'a', 'proj/..notes/b.txt': 'b', 'proj_evil/c.txt': 'c', 'outside/d.txt': 'd' });
    symlinkSync(ws.path('outside'), ws.path('proj/out'));
    symlinkSync(ws.path('proj/sub'), ws.path('outside/back'));
  });
  afterAll(() => ws.cleanup());

  it('keeps a client root inside the gateway root, under the client name, by its real path', () => {
    expect(narrowRoots([{ uri: uri('proj/sub'), name: 'mine' }], gateway())).toEqual([{ uri: uri('proj/sub'), name: 'mine' }]);
    expect(narrowRoots([{ uri: uri('proj/..notes') }], gateway())).toEqual([{ uri: uri('proj/..notes'), name: '..notes' }]);
    // A symlink outside that leads into the root is that folder inside it.
    expect(narrowRoots([{ uri: uri('outside/back') }], gateway())).toEqual([{ uri: uri('proj/sub'), name: 'sub' }]);
  });

  it('gives the gateway root for a client root that holds it, once', () => {
    expect(narrowRoots([{ uri: pathToFileURL(ws.root).href }, { uri: uri('proj') }], gateway())).toEqual([{ uri: uri('proj'), name: 'proj' }]);
  });

  it('drops a root outside, a look-alike beside the root, a symlink out of it, a missing folder, a non-file URI and a malformed one', () => {
    const dropped = [uri('outside'), uri('proj_evil'), uri('proj/out'), uri('proj/missing'), 'https://example.com/proj', 'file://host/share', 'not a uri', `${uri('proj')}/%00`];
    expect(narrowRoots(dropped.map((each) => ({ uri: each })), gateway())).toEqual([]);
  });
});
