import { constants, mkdirSync, openSync, writeSync, closeSync } from 'node:fs';
import { join } from 'node:path';

/** The commented starting point of every control-plane file, with the schema hint for editors. */
const FILES: Record<string, string> = {
  'bulkhead.yaml': `# Which MCP servers the gateway runs, by namespace. Tools are named namespace:tool in policies
# and namespace__tool on the wire.
servers:
  fs: {}              # built-in: read-only files under the roots
  fs_write: {}        # built-in: writes, edits, moves and recoverable deletes (each call asks)
  git: {}             # built-in: reads repositories; commit_changeset stays off (git_policy.yaml allow_write)
  # web: {}           # built-in: web_fetch and web_search behind the SSRF guard (web_policy.yaml)
  # shell: {}         # built-in: bash in a bubblewrap sandbox; also needs enabled: true in shell_policy.yaml
  # weather:          # any stdio MCP server
  #   command: npx
  #   args: [-y, some-mcp-server]
  #   env: { API_KEY: "..." }
  # remote:           # any Streamable HTTP MCP server
  #   url: https://mcp.example/mcp
  #   headers: { Authorization: "Bearer ..." }
call_timeout_ms: 300000
# Named views for --profile NAME or for a bearer token; they narrow, never widen.
profiles:
  readonly:
    namespaces: [fs, git]
    autonomy: read_only
# Over HTTP: more accepted bearer tokens (files in this folder), each mapped to a profile.
tokens: []
#  - file: readonly.token
#    profile: readonly
`,
  'tool_policy.yaml': `# Core tools are always bound; everything else is found with tool_search and used through
# call_tool or load_tools.
core_tools:
  - fs:read_file
  - fs:grep
  - fs:glob_files
max_active: 12        # loaded tools per session; the least recently used is unloaded past it
mode: dynamic         # dynamic: load_tools changes the list; stable: the list never changes
`,
  'permissions.yaml': `# deny wins over ask wins over allow; calls no list names follow autonomy over risk:
#   read_only: low runs, the rest is denied
#   supervised: low runs, medium asks, high is denied
#   full: everything runs (always_ask still asks)
autonomy: supervised
allow:
  - fs
ask:
  - fs_write          # every write, edit, move and delete is confirmed first
deny: []
always_ask: []
`,
  'audit.yaml': `# One hash-chained JSON line per call in audit/<namespace>.jsonl; check with: bulkhead audit verify
enabled: true
receipts: false       # sign successful calls (the receipt comes back in the result's _meta)
redact_keys: []
`,
  'hooks.yaml': `# Commands run around calls (sh -c, in the first root) with the call as JSON on stdin.
# pre_tool: exit 2 blocks the call with stderr as the reason; {"arguments": {...}} on stdout
# replaces the arguments. post_tool: sees the result. Both are audited.
pre_tool: []
#  - matcher: "fs_write:*"
#    command: ./scripts/check-write.sh
#    timeout_ms: 10000
post_tool: []
`,
  'fs_policy.yaml': `enabled: true
tools: {}             # e.g. grep: { enabled: false }
roots: []             # more roots, relative to the first
search_engine: auto   # auto | ripgrep | builtin
# deny_read replaces the default list of secrets (.env*, *.pem, *.key, id_rsa*, .ssh/, …)
limits:
  read_max_lines: 2000
  read_max_bytes: 262144
`,
  'fs_write_policy.yaml': `enabled: true
tools: {}             # e.g. delete_path: { enabled: false }
roots: []             # more roots, relative to the first
protect: []           # globs added to the protected set (.git/, .env*, keys, policy files, … always apply)
limits:
  max_file_bytes: 10485760   # largest file written or edited
  diff_max_lines: 400        # lines of diff a result shows
# Deleted and replaced entries go to trash/ in this folder: bulkhead trash list | restore ID | purge
trash:
  retention_days: 7          # purged at start and after each delete once older than this
  max_bytes: 1073741824      # and oldest first past this size
`,
  'git_policy.yaml': `enabled: true
tools: {}             # e.g. git_blame: { enabled: false }
roots: []             # more roots, relative to the first
allow_write: false    # true registers commit_changeset (each call asks under supervised autonomy)
protect: []           # globs commit_changeset refuses besides the built-in protected set
committer: { name: Bulkhead, email: bulkhead@localhost }
limits:
  timeout_ms: 30000              # each git process is killed after this long
  diff_total_max_bytes: 204800   # patch bytes one git_diff or git_show shows
`,
  'shell_policy.yaml': `enabled: false                 # true registers run_shell and the task tools
sandbox: bubblewrap            # the system read-only, the roots writable, a private /tmp; none only by choice
network: false                 # commands in the sandbox reach no network
env_passthrough: []            # variables passed besides PATH, HOME, LANG, LC_* and TERM=dumb
allow_commands: []             # parsed commands counted as low risk: "npm test", "git push *"
deny_commands: []              # parsed commands never run: "rm -rf *"
project_commands: []           # counted as medium besides known test runners, builds and formatters
limits:
  default_timeout_ms: 120000
  max_output_bytes: 32768      # output kept per command; 0 keeps it all
  max_processes: 256           # a fork bomb stops here
  max_background_tasks: 100    # 0 turns run_in_background off
`,
  'web_policy.yaml': `enabled: true
tools: {}             # e.g. web_fetch: { enabled: false }
allow_private: []     # CIDRs of local/private addresses that may be fetched (intranet); metadata stays refused
allow_hosts: []       # non-empty: only host names matching these globs
deny_hosts: []        # host names refused
ports: []             # allowed besides 80 and 443
robots: { respect: true }        # false: fetch what robots.txt disallows
search:
  provider: duckduckgo           # duckduckgo (keyless), searxng (needs endpoint) or brave (needs a key)
  # endpoint: http://127.0.0.1:8888/   # searxng: the instance's base URL
  # allow_private_endpoint: true       # the endpoint is loopback/private (a self-hosted SearXNG)
  # api_key_env: BRAVE_SEARCH_API_KEY  # brave: the variable holding the key (or api_key_file: brave.key)
limits:
  max_response_bytes: 10485760   # read from one response, after decompression
  timeout_ms: 30000              # a whole fetch, redirects and conversion included
`,
};

/** Writes each file that does not exist yet; never overwrites. Returns one line per file. */
export function initConfig(controlDir: string): string[] {
  mkdirSync(controlDir, { recursive: true, mode: 0o700 });
  return Object.entries(FILES).map(([name, body]) => {
    const file = join(controlDir, name);
    try {
      const fd = openSync(file, constants.O_WRONLY | constants.O_CREAT | constants.O_EXCL, 0o600);
      try {
        writeSync(fd, body);
      } finally {
        closeSync(fd);
      }
      return `wrote ${file}`;
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === 'EEXIST') return `kept ${file} (it exists)`;
      throw error;
    }
  });
}
