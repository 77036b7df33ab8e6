import { dirname, join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';

export const repo = join(dirname(fileURLToPath(import.meta.url)), '..');

/** [file name, zod schema] for every policy file the suite reads. */
export async function policySchemas() {
  const core = await import(pathToFileURL(join(repo, 'shared/dist/index.js')).href);
  const fs = await import(pathToFileURL(join(repo, 'servers/fs/dist/policy.js')).href);
  const fsWrite = await import(pathToFileURL(join(repo, 'servers/fs-write/dist/policy.js')).href);
  const git = await import(pathToFileURL(join(repo, 'servers/git/dist/policy.js')).href);
  const web = await import(pathToFileURL(join(repo, 'servers/web/dist/policy.js')).href);
  const shell = await import(pathToFileURL(join(repo, 'servers/shell/dist/policy.js')).href);
  const ladder = await import(pathToFileURL(join(repo, 'servers/ladder/dist/policy.js')).href);
  const gateway = await import(pathToFileURL(join(repo, 'servers/gateway/dist/config/schema.js')).href);
  const hooks = await import(pathToFileURL(join(repo, 'servers/gateway/dist/config/hooks.js')).href);
  const entries = [
    ['permissions.yaml', core.permissionsSchema],
    ['audit.yaml', core.auditPolicySchema],
    ['fs_policy.yaml', fs.fsPolicySchema],
    ['fs_write_policy.yaml', fsWrite.fsWritePolicySchema],
    ['git_policy.yaml', git.gitPolicySchema],
    ['shell_policy.yaml', shell.shellPolicySchema],
    ['ladder_policy.yaml', ladder.ladderPolicySchema],
    ['web_policy.yaml', web.webPolicySchema],
    ['bulkhead.yaml', gateway.gatewayConfigSchema],
    ['tool_policy.yaml', gateway.toolPolicySchema],
    ['hooks.yaml', hooks.hooksSchema],
  ];
  return { core, entries };
}

/** file name → JSON Schema, for every policy file the suite reads. */
export async function policySchemaFiles() {
  const { core, entries } = await policySchemas();
  return Object.fromEntries(entries.map(([file, schema]) => [file.replace(/\.yaml$/, '.schema.json'), core.policyJsonSchema(schema, file)]));
}
