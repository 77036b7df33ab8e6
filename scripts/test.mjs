// `npm test`: installs and builds if needed (also when only a test changed, so changed tests are
// still type-checked), runs the whole vitest suite and ends with one plain line `N passed,
// M failed` read from vitest's JSON report.
import { spawnSync } from 'node:child_process';
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { ensureInstalledAndBuilt, repo } from './ensure.mjs';
import { summaryLine } from './summary.mjs';

ensureInstalledAndBuilt({ quiet: true, tests: true });
const reportDir = join(repo, '.test-results');
mkdirSync(reportDir, { recursive: true });
const report = join(reportDir, 'vitest.json');
const vitest = join(repo, 'node_modules', 'vitest', 'vitest.mjs');
const result = spawnSync(process.execPath, [vitest, 'run', '--reporter=default', '--reporter=json', `--outputFile.json=${report}`, ...process.argv.slice(2)], {
  cwd: repo,
  stdio: 'inherit',
});
process.stdout.write(`${summaryLine(report)}\n`);
process.exit(result.status ?? 1);
