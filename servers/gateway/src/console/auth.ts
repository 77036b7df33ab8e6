import { createHash, randomBytes, timingSafeEqual } from 'node:crypto';
import { linkSync, mkdirSync, readdirSync, readFileSync, statSync, unlinkSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { consoleSecretFile } from '@bulkhead/core';

/** 32 random bytes as base64url: 43 characters. */
const SECRET_BYTES = 32;
const SECRET_PATTERN = /^[A-Za-z0-9_-]{43}$/;
/** A login link works once, within this long of `bulkhead console` making it. */
export const LOGIN_TICKET_MS = 60_000;
/** A browser stays logged in this long (or until the console stops: sessions live in its memory). */
export const SESSION_MS = 12 * 60 * 60 * 1000;
/** More sessions than anyone opens by hand; past it the oldest is dropped, so memory stays bounded. */
const MAX_SESSIONS = 64;

/** Where `bulkhead console` leaves login tickets for the console to swap for a session cookie. */
function ticketFolder(controlDir: string): string {
  return join(controlDir, 'keys', 'console-tickets');
}

/** The private keys/ folder (0700), made when missing. */
function privateFolder(folder: string): void {
  mkdirSync(folder, { recursive: true, mode: 0o700 });
}

function randomSecret(): string {
  return randomBytes(SECRET_BYTES).toString('base64url');
}

/** Equal strings in time that does not depend on where they differ. */
export function sameSecret(expected: string, given: string): boolean {
  const a = Buffer.from(expected);
  const b = Buffer.from(given);
  return a.length === b.length && timingSafeEqual(a, b);
}

/**
 * The console's own secret, which a script sends as `Authorization: Bearer …`: made (mode 0600 in
 * the 0700 keys/ folder) the first time a console needs it. Written whole under another name and
 * linked, so two consoles starting at once end up with the same one.
 */
export function consoleSecret(controlDir: string): string {
  const file = consoleSecretFile(controlDir);
  privateFolder(dirname(file));
  const kept = readSecret(file);
  if (kept !== undefined) return kept;
  const secret = randomSecret();
  const draft = `${file}.${process.pid}.${randomBytes(6).toString('hex')}.draft`;
  writeFileSync(draft, `${secret}\n`, { mode: 0o600, flag: 'wx' });
  try {
    linkSync(draft, file);
    return secret;
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
    const other = readSecret(file);
    if (other === undefined) throw new Error(`${file} holds no console secret (43 base64url characters); delete it and start again`);
    return other;
  } finally {
    unlinkSync(draft);
  }
}

function readSecret(file: string): string | undefined {
  let text: string;
  try {
    text = readFileSync(file, 'utf8').trim();
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw error;
  }
  if (!SECRET_PATTERN.test(text)) throw new Error(`${file} holds no console secret (43 base64url characters); delete it and start again`);
  return text;
}

/** A ticket's file is named by its hash, so the folder's listing gives no ticket away. */
function ticketFile(controlDir: string, ticket: string): string {
  return join(ticketFolder(controlDir), `${createHash('sha256').update(ticket).digest('hex')}.ticket`);
}

/**
 * A one-time login ticket for the login link `bulkhead console` opens: the long-lived secret never
 * goes into a URL, the browser's history or `ps`. Only who can write keys/ can make one.
 */
export function issueLoginTicket(controlDir: string, now = Date.now()): string {
  const folder = ticketFolder(controlDir);
  privateFolder(folder);
  removeStaleTickets(folder, now);
  const ticket = randomSecret();
  writeFileSync(ticketFile(controlDir, ticket), `${now + LOGIN_TICKET_MS}\n`, { mode: 0o600, flag: 'wx' });
  return ticket;
}

/** Tickets nobody used: they would only pile up. */
function removeStaleTickets(folder: string, now: number): void {
  for (const name of readdirSync(folder)) {
    if (!name.endsWith('.ticket')) continue;
    try {
      if (statSync(join(folder, name)).mtimeMs < now - LOGIN_TICKET_MS) unlinkSync(join(folder, name));
    } catch {
      // Used or removed by another process meanwhile.
    }
  }
}

/** Whether the ticket is one `bulkhead console` made within the last minute; it is used up either way (whoever unlinks it first wins). */
export function redeemLoginTicket(controlDir: string, ticket: string, now = Date.now()): boolean {
  if (!SECRET_PATTERN.test(ticket)) return false;
  const file = ticketFile(controlDir, ticket);
  let expires: number;
  try {
    expires = Number(readFileSync(file, 'utf8').trim());
    unlinkSync(file);
  } catch {
    return false;
  }
  return Number.isFinite(expires) && now <= expires;
}

export interface ConsoleSession {
  readonly id: string;
  /** The hidden `csrf` field every form of this session carries. */
  readonly csrf: string;
  readonly expires: number;
}

/** The browser sessions of one console process, in memory: a restart logs every browser out. */
export class ConsoleSessions {
  private readonly sessions = new Map<string, ConsoleSession>();

  open(now = Date.now()): ConsoleSession {
    this.drop(now);
    while (this.sessions.size >= MAX_SESSIONS) this.sessions.delete(this.sessions.keys().next().value!);
    const session = { id: randomSecret(), csrf: randomSecret(), expires: now + SESSION_MS };
    this.sessions.set(session.id, session);
    return session;
  }

  /** The live session with this cookie value, if any. */
  find(id: string, now = Date.now()): ConsoleSession | undefined {
    if (!SECRET_PATTERN.test(id)) return undefined;
    const session = this.sessions.get(id);
    if (!session) return undefined;
    if (session.expires < now) {
      this.sessions.delete(id);
      return undefined;
    }
    return session;
  }

  private drop(now: number): void {
    for (const [id, session] of this.sessions) if (session.expires < now) this.sessions.delete(id);
  }
}
