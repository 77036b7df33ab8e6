// The gateway's half of passing identities: a token's principal in bulkhead.yaml is validated like
// a ladder principal, and the _meta of a relayed call names it only to a compartment the gateway
// started itself (tested end to end in test/e2e/gateway-identity.test.ts).
import { afterEach, describe, expect, it } from 'vitest';
import { loadYamlFile } from '@bulkhead/core';
import { tempWorkspace, type TempWorkspace } from '@bulkhead/core/testing';
import { gatewayConfigSchema } from '../src/config/schema.js';
import type { DownstreamSpec } from '../src/downstream/downstream.js';
import { relayedCallMeta } from '../src/relay/identity.js';

let ws: TempWorkspace | undefined;
afterEach(() => {
  ws?.cleanup();
  ws = undefined;
});

const child = { command: process.execPath, args: [], env: {}, cwd: '/' };

describe('the _meta of a relayed call', () => {
  it('names the principal to a built-in only, and nothing when there is none', () => {
    const builtin: DownstreamSpec = { kind: 'stdio', namespace: 'ladder', child, builtin: true, trust: new Set() };
    expect(relayedCallMeta(builtin, 'ada')).toEqual({ 'bulkhead/principal': 'ada' });
    expect(relayedCallMeta(builtin, undefined)).toBeUndefined();
    expect(relayedCallMeta({ kind: 'stdio', namespace: 'ladder', child, trust: new Set(['results', 'paths', 'annotations', 'descriptions']) }, 'ada')).toBeUndefined();
    expect(relayedCallMeta({ kind: 'http', namespace: 'ladder', url: 'http://127.0.0.1:1/mcp', headers: {}, builtin: true, trust: new Set() }, 'ada')).toBeUndefined();
  });
});

describe('tokens[].principal in bulkhead.yaml', () => {
  it('is refused unless it is a principal, with the line that holds it', () => {
    ws = tempWorkspace({
      '.bulkhead/bulkhead.yaml': [
        'tokens:',
        '  - file: a.token',
        '    principal: ""',
        '  - file: b.token',
        `    principal: ${'x'.repeat(201)}`,
        '  - file: c.token',
        '    principal: "ada\\tbob"',
        '  - file: d.token',
        '    principal: 7',
        '  - file: e.token',
        '    principal: ada',
        '',
      ].join('\n'),
    });
    const controlDir = ws.path('.bulkhead');
    expect(() => loadYamlFile(controlDir, 'bulkhead.yaml', gatewayConfigSchema)).toThrow(
      `${controlDir}/bulkhead.yaml: invalid configuration\n` +
        '  - `tokens.0.principal` (line 3): a principal has at least 1 character\n' +
        '  - `tokens.1.principal` (line 5): a principal has at most 200 characters\n' +
        '  - `tokens.2.principal` (line 7): a principal holds no control characters (a newline?)\n' +
        '  - `tokens.3.principal` (line 9): Invalid input: expected string, received number',
    );
    ws.write('.bulkhead/bulkhead.yaml', 'tokens:\n  - file: e.token\n    principal: Ada Lovelace (agent 2)\n');
    expect(loadYamlFile(controlDir, 'bulkhead.yaml', gatewayConfigSchema).value.tokens).toEqual([{ file: 'e.token', principal: 'Ada Lovelace (agent 2)' }]);
  });
});
