import { randomBytes } from 'node:crypto';
import { closeSync, constants, fstatSync, linkSync, mkdirSync, openSync, readFileSync, rmdirSync, statSync, unlinkSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { isLoopback } from './http.js';
import { readTokenFile, UsageError } from './options.js';

/** 32 random bytes, as base64url: 43 characters. */
const TOKEN_BYTES = 32;
const MIN_KEPT_TOKEN_CHARS = Math.ceil((TOKEN_BYTES * 4) / 3);
/** Mode bits are not access control on Windows; there the folder's ACL (the user's profile) decides. */
const CHECKS_MODES = process.platform !== 'win32';

/** Where a server keeps the bearer token it made for its HTTP clients: one per server, so that one server's token opens no other. */
export function httpTokenFile(controlDir: string, server: string): string {
  return join(controlDir, 'keys', `${server}.http.token`);
}

/** How an HTTP server authenticates its clients, as decided from the command line. */
export type HttpAuth =
  /**
   * Made at first start and kept in the control-plane folder (`created` on this start, in folders
   * of which `madeFolder` is the topmost made with it).
   */
  | { readonly kind: 'kept'; readonly token: string; readonly file: string; readonly created: boolean; readonly madeFolder?: string }
  | { readonly kind: 'token-file'; readonly token: string; readonly file: string }
  /** The gateway's `tokens:` of bulkhead.yaml. */
  | { readonly kind: 'configured' }
  /** `--no-auth`, on loopback. */
  | { readonly kind: 'none' };

export interface HttpAuthRequest {
  readonly controlDir: string;
  /** The command name, naming the kept token's file (`bulkhead-fs`, `bulkhead`). */
  readonly server: string;
  readonly host: string;
  /** `--token-file`, absolute. */
  readonly tokenFile?: string;
  readonly noAuth: boolean;
  /** How many tokens a configuration file gives (the gateway's `tokens:`). */
  readonly configuredTokens?: number;
}

/**
 * Every HTTP server needs a credential, loopback included: another local process (a browser
 * page's fetch, any program of any user on a shared machine) must not call tools. Unless the
 * user gives a token (or `--no-auth` on loopback), one is made and kept for the next start.
 */
export function resolveHttpAuth(request: HttpAuthRequest): HttpAuth {
  const configured = request.configuredTokens ?? 0;
  if (request.noAuth) {
    if (request.tokenFile !== undefined) throw new UsageError('--no-auth and --token-file contradict each other; give one of them');
    if (configured > 0) throw new UsageError('--no-auth cannot turn off the tokens: of bulkhead.yaml; remove them there, or leave out --no-auth');
    if (!isLoopback(request.host)) {
      throw new UsageError(`--no-auth is refused on ${request.host}: beyond loopback every client must present a bearer token (leave out --no-auth and one is made for you, or give --token-file)`);
    }
    return { kind: 'none' };
  }
  if (request.tokenFile !== undefined) return { kind: 'token-file', token: readTokenFile(request.tokenFile), file: request.tokenFile };
  if (configured > 0) return { kind: 'configured' };
  const file = httpTokenFile(request.controlDir, request.server);
  return { kind: 'kept', file, ...keptToken(file) };
}

/** The kept token, or a new one (mode 0600 in a folder of mode 0700) when there is none yet. */
function keptToken(file: string): { token: string; created: boolean; madeFolder?: string } {
  const madeFolder = mkdirSync(dirname(file), { recursive: true, mode: 0o700 });
  checkPrivateFolder(dirname(file));
  const existing = readKeptToken(file);
  if (existing !== undefined) return { token: existing, created: false };
  const token = randomBytes(TOKEN_BYTES).toString('base64url');
  // Written whole under another name, then linked: a server starting at the same moment reads a
  // complete token or makes none, and both end up with the same one.
  const draft = `${file}.${process.pid}.${randomBytes(6).toString('hex')}.draft`;
  writeFileSync(draft, `${token}\n`, { mode: 0o600, flag: 'wx' });
  try {
    linkSync(draft, file);
    return { token, created: true, ...(madeFolder !== undefined ? { madeFolder } : {}) };
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
    return { token: readKeptToken(file)!, created: false };
  } finally {
    unlinkSync(draft);
  }
}

function checkPrivateFolder(folder: string): void {
  if (!CHECKS_MODES) return;
  const mode = statSync(folder).mode & 0o777;
  if ((mode & 0o022) !== 0) {
    throw new Error(`the key folder ${folder} has mode ${mode.toString(8).padStart(4, '0')}, so other users may replace the bearer token kept in it; run chmod 700 ${folder}`);
  }
}

/** The token kept in `file`, undefined when there is none; a file others can read, or a short one, is refused. */
function readKeptToken(file: string): string | undefined {
  let fd: number;
  try {
    fd = openSync(file, constants.O_RDONLY | constants.O_NOFOLLOW);
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    if (code === 'ENOENT') return undefined;
    if (code === 'ELOOP') throw new Error(`the bearer token file ${file} is a symbolic link; a kept token is a plain file (delete the link and a new token is made)`);
    throw new Error(`the bearer token file ${file} cannot be read: ${(error as Error).message}`);
  }
  try {
    const stat = fstatSync(fd);
    if (!stat.isFile()) throw new Error(`the bearer token file ${file} is not a plain file; delete it and a new token is made`);
    const mode = stat.mode & 0o777;
    if (CHECKS_MODES && (mode & 0o077) !== 0) {
      throw new Error(`the bearer token file ${file} has mode ${mode.toString(8).padStart(4, '0')}, so other users may read it; run chmod 600 ${file}, or delete it and a new token is made`);
    }
    const token = readFileSync(fd, 'utf8').trim();
    if (token.length < MIN_KEPT_TOKEN_CHARS) {
      throw new Error(`the bearer token file ${file} holds ${token.length} characters, fewer than the ${MIN_KEPT_TOKEN_CHARS} of a made token; delete it and a new token is made`);
    }
    return token;
  } finally {
    closeSync(fd);
  }
}

/**
 * Forgets a token made on this start, and the folders made for it, when the server could not
 * start after all: a command that failed leaves the folder as it found it.
 */
export function discardMadeToken(auth: HttpAuth): void {
  if (auth.kind !== 'kept' || !auth.created) return;
  unlinkSync(auth.file);
  if (auth.madeFolder === undefined) return;
  for (let folder = dirname(auth.file); ; folder = dirname(folder)) {
    try {
      rmdirSync(folder);
    } catch {
      return;
    }
    if (folder === auth.madeFolder) return;
  }
}
