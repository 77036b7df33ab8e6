// node run-scenarios.mjs <conformance dist/index.js> <url> <output dir> <scenario>...
//
// Runs `conformance server --url <url> --scenario <scenario> -o <output dir>/<scenario>` for each
// scenario in this one process, one after the other: a process per scenario spends about a second
// loading the suite's dependencies for a scenario that takes tens of milliseconds. The CLI is a
// bundle that exports nothing and parses process.argv when imported, so each run imports it afresh
// (another query string is another module instance; its dependencies stay loaded) with that
// scenario's argv, and the process.exit it calls when the scenario is done is caught to start the
// next one. The checks are in each scenario's checks.json, as with the CLI run alone.
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';

const [cli, url, outputDir, ...scenarios] = process.argv.slice(2);
if (!cli || !url || !outputDir || scenarios.length === 0) {
  console.error('usage: run-scenarios.mjs <conformance dist/index.js> <url> <output dir> <scenario>...');
  process.exit(2);
}
const exit = process.exit;
for (const scenario of scenarios) {
  const done = new Promise((resolve) => {
    process.exit = resolve;
  });
  process.argv = [process.execPath, cli, 'server', '--url', url, '--scenario', scenario, '-o', join(outputDir, scenario)];
  await import(`${pathToFileURL(cli).href}?scenario=${encodeURIComponent(scenario)}`);
  await done;
}
process.exit = exit;
process.exit(0);
