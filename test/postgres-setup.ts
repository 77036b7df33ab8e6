import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { postgresBinDir, startCluster } from '../scripts/pg-cluster.mjs';

/**
 * Vitest's global setup: the PostgreSQL server the ladder's tests run against. .ci/run starts one
 * and names it in BULKHEAD_TEST_PG_URL (with BULKHEAD_TEST_PG_PASSWORD_FILE); `npm test` without
 * one starts a throwaway cluster here and stops it at the end. With no PostgreSQL installed, the
 * tests that need it fail (servers/ladder/test/postgres.ts says how to install it); none skips.
 */
export default async function setup(): Promise<(() => void) | undefined> {
  if (process.env.BULKHEAD_TEST_PG_URL) return undefined;
  if (!postgresBinDir()) return undefined;
  const cluster = await startCluster(mkdtempSync(join(tmpdir(), 'bulkhead-pg-')));
  process.env.BULKHEAD_TEST_PG_URL = cluster.url;
  process.env.BULKHEAD_TEST_PG_PASSWORD_FILE = cluster.passwordFile;
  return () => cluster.stop();
}
