import { readFileSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { policySchemaFiles, repo } from '../scripts/policy-schemas.mjs';

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
