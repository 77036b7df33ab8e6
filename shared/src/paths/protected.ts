import { PathGlobSet } from './globs.js';

/** Files whose content is a credential: never read by default, never written. */
export const SECRET_GLOBS: readonly string[] = [
  '.env*',
  '*.pem',
  '*.key',
  '*.p12',
  '*.pfx',
  'id_rsa*',
  'id_dsa*',
  'id_ecdsa*',
  'id_ed25519*',
  '.ssh/',
  '.gnupg/',
  '.aws/',
  '.netrc',
];

/** Files and folders that become code or configuration an agent must not rewrite. */
export const CODE_GLOBS: readonly string[] = ['.git/', '.github/', '.mcp.json', '.claude/', '.vscode/', '.cursor/'];

/** Bulkhead's own policy files, wherever they sit: a tool must not loosen the rules it runs under. */
export const POLICY_GLOBS: readonly string[] = ['*_policy.yaml', 'permissions.yaml', 'hooks.yaml', 'bulkhead.yaml'];

/** What no write, move or delete may touch, whatever a policy says; policies can only add to it. */
export const WRITE_PROTECTED_GLOBS: readonly string[] = [...SECRET_GLOBS, ...CODE_GLOBS, ...POLICY_GLOBS];

export const secretGlobs = new PathGlobSet(SECRET_GLOBS);
