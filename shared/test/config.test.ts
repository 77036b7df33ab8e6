import { afterEach, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { ConfigError, isToolEnabled, loadYamlFile, permissionsSchema, policyJsonSchema, serverPolicySchema } from '@bulkhead/core';
import { tempWorkspace, type TempWorkspace } from '@bulkhead/core/testing';

const demoSchema = serverPolicySchema(true, {
  mode: z.enum(['fast', 'safe']).default('safe').describe('how to run'),
  limits: z.strictObject({ max_bytes: z.number().int().default(10).describe('cap') }).default({ max_bytes: 10 }),
});

let ws: TempWorkspace;
afterEach(() => ws?.cleanup());

function load(text: string | undefined) {
  ws = tempWorkspace(text === undefined ? {} : { 'demo.yaml': text });
  return loadYamlFile(ws.root, 'demo.yaml', demoSchema);
}

function loadError(text: string): string {
  try {
    load(text);
  } catch (error) {
    expect(error).toBeInstanceOf(ConfigError);
    return (error as Error).message.replace(ws.root, '<dir>');
  }
  throw new Error('expected a ConfigError');
}

describe('loadYamlFile', () => {
  it('gives the defaults when the file is missing', () => {
    const loaded = load(undefined);
    expect(loaded.exists).toBe(false);
    expect(loaded.value).toEqual({ enabled: true, tools: {}, mode: 'safe', limits: { max_bytes: 10 } });
  });

  it('names the file, line, key and allowed values for a bad enum', () => {
    expect(loadError('enabled: true\nmode: turbo\n')).toBe(
      '<dir>/demo.yaml: invalid configuration\n  - `mode` (line 2): must be one of "fast", "safe"',
    );
  });

  it('names an unknown key and lists the allowed ones', () => {
    expect(loadError('enabeld: false\n')).toBe(
      '<dir>/demo.yaml: invalid configuration\n  - top level (line 1): unknown key `enabeld`; allowed keys: $schema, enabled, tools, mode, limits',
    );
  });

  it('reports nested type errors with their line', () => {
    expect(loadError('limits:\n  max_bytes: lots\n')).toBe(
      '<dir>/demo.yaml: invalid configuration\n  - `limits.max_bytes` (line 2): Invalid input: expected number, received string',
    );
  });

  it('reports YAML syntax errors with a line', () => {
    expect(loadError('mode: [fast\n')).toMatch(/^<dir>\/demo.yaml line \d+: not valid YAML: /);
  });

  it('knows the line of each value', () => {
    const loaded = load('mode: fast\ntools:\n  grep:\n    enabled: false\n');
    expect(loaded.lineOf(['tools', 'grep', 'enabled'])).toBe(4);
    expect(loaded.lineOf(['mode'])).toBe(1);
  });
});

describe('registration is the switch', () => {
  it('disables single tools and whole servers', () => {
    const policy = demoSchema.parse({ tools: { grep: { enabled: false } } });
    expect(isToolEnabled(policy, 'grep')).toBe(false);
    expect(isToolEnabled(policy, 'read_file')).toBe(true);
    expect(isToolEnabled(demoSchema.parse({ enabled: false }), 'read_file')).toBe(false);
  });
});

describe('JSON Schema for editors', () => {
  it('describes every key of permissions.yaml', () => {
    const schema = policyJsonSchema(permissionsSchema, 'permissions.yaml') as { title: string; properties: Record<string, { description?: string }> };
    expect(schema.title).toBe('permissions.yaml');
    expect(Object.keys(schema.properties).sort()).toEqual(['$schema', 'allow', 'always_ask', 'approval_wait_ms', 'ask', 'autonomy', 'deny']);
    for (const [key, property] of Object.entries(schema.properties)) expect(property.description, key).toBeTruthy();
  });
});
