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
export const CODE_GLOBS: readonly string[] = ['.git/', '.mcp.json', '.claude/', '.vscode/'];

export const secretGlobs = new PathGlobSet(SECRET_GLOBS);
export const writeProtectedGlobs = new PathGlobSet([...SECRET_GLOBS, ...CODE_GLOBS]);
