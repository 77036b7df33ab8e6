// `pnpm bench NAME [flags]`: runs one benchmark from bench/.
const benches = {
  fs: { module: './fs.mjs', about: 'bulkhead-fs vs @modelcontextprotocol/server-filesystem and raw rg' },
  'fs-write': { module: './fs-write.mjs', about: 'bulkhead-fs-write vs @modelcontextprotocol/server-filesystem: 1 and 50 MiB writes, 100 edits, a 50-edit multi_edit, correctness' },
  git: { module: './git.mjs', about: 'bulkhead-git vs @cyanheads/git-mcp-server and raw git: log at the tip and at skip=50,000, a 1,000-file diff, a large file at an old commit, blame of a page and a whole file (100,000-commit repo)' },
  gateway: { module: './gateway.mjs', about: 'gateway: tools/list tokens eager vs deferred (527 LiveMCPTool tools), call overhead vs direct' },
  web: { module: './web.mjs', about: 'bulkhead-web web_fetch vs mcp-fetch-server: fetch-and-extract time, output size and article quality on the 130 Readability test pages' },
  shell: { module: './shell.mjs', about: 'bulkhead-shell run_shell vs mcp-server-commands and raw bash -c: per-command overhead on 500 trivial commands, without and with the bubblewrap sandbox; classification rate on 10,000 commands' },
  ladder: { module: './ladder.mjs', about: 'ladder work queue: claim+answer throughput with 1/4/8 processes over 10,000 asks vs raw SQLite statements; ladder_search p50/p99 over 100,000 rungs; ladder_tree on 20,000 files' },
  approvals: { module: './approvals.mjs', about: 'the extra time a pending approval adds to a fs_write call (held and approved at once by a decider polling the store) vs the same call allowed by policy' },
  'tool-search': { module: './tool-search.mjs', about: 'gateway tool_search index: retrieval quality (mcpproxy-golden, MetaTool) and build/search speed (LiveMCPTool)' },
};

const [name, ...args] = process.argv.slice(2);
const bench = benches[name];
if (!bench) {
  const list = Object.entries(benches).map(([key, { about }]) => `  ${key.padEnd(12)} ${about}`);
  process.stderr.write(`${name ? `unknown benchmark: ${name}\n\n` : ''}usage: pnpm bench NAME [flags]\n\nbenchmarks:\n${list.join('\n')}\n`);
  process.exit(2);
}
const { main } = await import(bench.module);
await main(args);
