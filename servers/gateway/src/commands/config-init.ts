import { constants, mkdirSync, openSync, writeSync, closeSync } from 'node:fs';
import { join } from 'node:path';

/**
 * Where editors find the JSON Schema of each policy file: the published copy in the repository's
 * schemas/ folder. A path would not do: an installed package does not carry schemas/, a path
 * into one machine's install is wrong on the next, and the control-plane folder is meant to be
 * committed and shared. A URL is the same for everyone who clones the project.
 */
export const SCHEMA_BASE_URL = 'https://raw.githubusercontent.com/bulkhead-mcp/bulkhead/main/schemas/';

/** The YAML language server's modeline naming the schema of `file` (VS Code, Neovim, Zed, JetBrains read it). */
export function schemaLine(file: string): string {
  return `# yaml-language-server: $schema=${SCHEMA_BASE_URL}${file.replace(/\.yaml$/, '.schema.json')}`;
}

/**
 * The starting point of every policy file, commented. Each says what a folder without it gets:
 * an init'd folder and no folder at all run the same compartments and tools.
 */
const POLICIES: Record<string, string> = {
  'bulkhead.yaml': `# Which MCP servers the gateway runs, by namespace. Tools are named namespace:tool in policies
# and namespace__tool on the wire. These six are what runs without this file.
servers:
  fs: {}              # built-in: read-only files under the roots
  fs_write: {}        # built-in: writes, edits, moves and recoverable deletes (each call asks)
  shell: {}           # built-in: runs, but registers no tool while shell_policy.yaml says enabled: false
                      #   (commands run in a bubblewrap sandbox once you turn it on there)
  web: {}             # built-in: web_fetch and web_search behind the SSRF guard (web_policy.yaml)
  git: {}             # built-in: reads repositories; commit_changeset stays off (git_policy.yaml allow_write)
  ladder: {}          # built-in: the Ladder and Lanes and Asks on a SQLite file in this folder (ladder_policy.yaml)
  # web: { enabled: false }   # leaves a server out entirely
  # weather:          # any stdio MCP server
  #   command: npx
  #   args: [-y, some-mcp-server]
  #   env: { API_KEY: "..." }
  # remote:           # any Streamable HTTP MCP server
  #   url: https://mcp.example/mcp
  #   headers: { Authorization: "Bearer ..." }
call_timeout_ms: 300000
# Named views for --profile NAME or for a bearer token; they narrow, never widen.
profiles: {}
#  readonly:
#    namespaces: [fs, git]
#    autonomy: read_only
# Over HTTP: more accepted bearer tokens (files in this folder, kept out of git), each mapped to a profile.
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
#   supervised: low runs, medium asks, high is denied (so every fs_write call asks, and
#               role_grant is hidden until a list allows it)
#   full: everything runs (always_ask still asks)
autonomy: supervised
allow: []             # e.g. - git   or   - "shell:run_shell(npm test*)"
ask: []               # e.g. - web:web_fetch
deny: []              # e.g. - fs_write:delete_path
always_ask: []        # asked even under full autonomy
`,
  'audit.yaml': `# One hash-chained JSON line per call in audit/<namespace>.jsonl, made by the first call;
# check with: bulkhead audit verify
enabled: true
receipts: false       # sign successful calls (the receipt comes back in the result's _meta; key in keys/)
redact_keys: []       # argument keys redacted besides the built-in secret-looking ones
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
  'shell_policy.yaml': `# Off until you turn it on: commands change the machine in ways no other compartment can,
# so running them is a choice made here, not a default. With enabled: false the shell server
# starts (bulkhead.yaml lists it) and registers no tool.
enabled: false                 # true registers run_shell and the task tools
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
  max_background_tasks: 100    # 0 turns run_in_background off; task logs go to shell/ in this folder
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
  'ladder_policy.yaml': `enabled: true
tools: {}             # e.g. ladder_reindex: { enabled: false }
database: ladder.db   # the SQLite file of rungs, lanes, asks, roles and tokens, relative to this folder;
                      # made by the first call that writes (reads before it answer from an empty ladder)
# actor: ada          # who calls over stdio act as (default: the OS user running the server); the first
                      # to call on a repository with no owner becomes its owner
lease_ms: 900000      # how long a claim holds an ask when the claim names no lease (15 minutes)
max_attempts: 5       # claims an ask may lapse or be released before it expires
extra_kinds: []       # ask kinds beyond the built-in ones, e.g.
#  - { name: design_review, scope: maintainer, answers: [grant, deny] }
repo: {}              # the repository the rungs describe:
#  name: acme/widgets  # the name calls use when they give none (default: local/<folder name>)
#  root: ../widgets    # its git folder, relative to the first root (default: the first root)
# zz's public repositories: their reading tools answer on the HTTP tool endpoint without a token
public_read:
  repos: []           # owner/name of each public repository (default: none)
  tools: [lane_list, ladder_tree]
`,
};

/**
 * What the servers write into the control-plane folder at run time, and the secrets it may hold:
 * kept out of git, while the policy files beside them are meant to be committed.
 */
const GITIGNORE = `# Written by bulkhead config init. The policy files (*.yaml) are meant to be committed; what the
# servers write here at run time, and secrets, are not. Each of these is made by its first use.

# Audit logs, one hash-chained file per server (bulkhead audit verify)
/audit/
# What fs_write deleted or replaced, kept recoverable (bulkhead trash list | restore ID | purge)
/trash/
# The ladder's SQLite database (ladder_policy.yaml database: ladder.db) and its WAL files
*.db
*.db-wal
*.db-shm
*.db-journal
# Background task logs of the shell compartment
/shell/
# Tool definitions pinned on first sight on this machine (delete this line to share reviewed pins)
/pins.json
# Secrets: the receipt key, bearer token files (bulkhead.yaml tokens), API key files
/keys/
*.token
*.key
# Temporary files of atomic writes
*.tmp
`;

/** Every file config init writes, by name: the policy files with their schema line first, and the .gitignore. */
export function configFiles(): Record<string, string> {
  return {
    ...Object.fromEntries(Object.entries(POLICIES).map(([name, body]) => [name, `${schemaLine(name)}\n${body}`])),
    '.gitignore': GITIGNORE,
  };
}

/** Writes each file that does not exist yet; never overwrites. Returns one line per file: wrote or kept. */
export function initConfig(controlDir: string): string[] {
  mkdirSync(controlDir, { recursive: true, mode: 0o700 });
  return Object.entries(configFiles()).map(([name, body]) => {
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
