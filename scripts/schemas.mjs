// Writes the JSON Schema of every policy file to schemas/ (run after a build). A test checks that
// the committed files match, so the published schemas never drift from the code.
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { policySchemaFiles, repo } from './policy-schemas.mjs';

const dir = join(repo, 'schemas');
mkdirSync(dir, { recursive: true });
for (const [name, schema] of Object.entries(await policySchemaFiles())) {
  writeFileSync(join(dir, name), `${JSON.stringify(schema, null, 2)}\n`);
  process.stdout.write(`wrote schemas/${name}\n`);
}
