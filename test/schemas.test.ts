import { readFileSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { policySchemaFiles, policySchemas, repo } from '../scripts/policy-schemas.mjs';

describe('published policy schemas', () => {
  it('match the code (run `node scripts/schemas.mjs` after changing a policy)', async () => {
    const generated = (await policySchemaFiles()) as Record<string, unknown>;
    const committed = readdirSync(join(repo, 'schemas')).filter((name) => name.endsWith('.schema.json')).sort();
    expect(committed).toEqual(Object.keys(generated).sort());
    for (const [name, schema] of Object.entries(generated)) {
      expect(JSON.parse(readFileSync(join(repo, 'schemas', name), 'utf8')), name).toEqual(schema);
    }
  });
});

describe('policy defaults', () => {
  // zod 4's .default() returns its value unparsed, so an object default whose fields have defaults
  // of their own comes back without them (the empty gateway of issue 14). A value the schema made
  // from nothing must be one it would make again from itself.
  it('are complete: what an absent file parses to parses to itself', async () => {
    const { entries } = await policySchemas();
    expect(entries.length).toBe(11);
    for (const [file, schema] of entries) {
      const fromNothing = schema.parse({});
      expect(schema.parse(JSON.parse(JSON.stringify(fromNothing))), file).toEqual(fromNothing);
    }
  });

  it('of bulkhead.yaml enable every built-in', async () => {
    const { entries } = await policySchemas();
    const gateway = entries.find(([file]) => file === 'bulkhead.yaml')![1];
    const servers = (gateway.parse({}) as { servers: Record<string, { enabled: boolean }> }).servers;
    expect(Object.entries(servers).map(([name, entry]) => [name, entry.enabled])).toEqual([
      ['fs', true], ['fs_write', true], ['shell', true], ['web', true], ['git', true], ['ladder', true],
    ]);
  });
});
