import { fileURLToPath } from 'node:url';

export const FS_CLI = fileURLToPath(new URL('../../servers/fs/dist/cli.js', import.meta.url));
export const AUDIT_CLI = fileURLToPath(new URL('../../shared/dist/audit/cli.js', import.meta.url));
