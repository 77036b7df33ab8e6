import { readdirSync, readFileSync, statSync, utimesSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { consoleSecretFile } from '@bulkhead/core';
import { tempWorkspace, type TempWorkspace } from '@bulkhead/core/testing';
import { consoleSecret, ConsoleSessions, issueLoginTicket, LOGIN_TICKET_MS, redeemLoginTicket, sameSecret, SESSION_MS } from '../src/console/auth.js';

let ws: TempWorkspace | undefined;
afterEach(() => {
  ws?.cleanup();
  ws = undefined;
});

function controlDir(): string {
  ws = tempWorkspace({});
  return join(ws.root, '.bulkhead');
}

describe('the console secret', () => {
  it('is made once, 32 random bytes, 0600 in a 0700 keys folder, and read back the same', () => {
    const dir = controlDir();
    const secret = consoleSecret(dir);
    expect(secret).toMatch(/^[A-Za-z0-9_-]{43}$/);
    expect(readFileSync(consoleSecretFile(dir), 'utf8')).toBe(`${secret}\n`);
    expect(statSync(consoleSecretFile(dir)).mode & 0o777).toBe(0o600);
    expect(statSync(join(dir, 'keys')).mode & 0o777).toBe(0o700);
    expect(consoleSecret(dir)).toBe(secret);
    // No draft is left beside it.
    expect(readdirSync(join(dir, 'keys'))).toEqual(['console.secret']);
  });

  it('refuses a file that holds something else rather than trusting a weak secret', () => {
    const dir = controlDir();
    consoleSecret(dir);
    writeFileSync(consoleSecretFile(dir), 'password\n');
    expect(() => consoleSecret(dir)).toThrow(`${consoleSecretFile(dir)} holds no console secret (43 base64url characters); delete it and start again`);
  });

  it('compares in constant time and only whole', () => {
    expect(sameSecret('abc', 'abc')).toBe(true);
    expect(sameSecret('abc', 'abd')).toBe(false);
    expect(sameSecret('abc', 'ab')).toBe(false);
    expect(sameSecret('abc', '')).toBe(false);
  });
});

describe('login tickets', () => {
  it('work once, within a minute, and the folder names only their hashes', () => {
    const dir = controlDir();
    const now = Date.now();
    const ticket = issueLoginTicket(dir, now);
    expect(ticket).toMatch(/^[A-Za-z0-9_-]{43}$/);
    const files = readdirSync(join(dir, 'keys', 'console-tickets'));
    expect(files).toHaveLength(1);
    expect(files[0]).toMatch(/^[0-9a-f]{64}\.ticket$/);
    expect(files[0]).not.toContain(ticket);
    expect(statSync(join(dir, 'keys', 'console-tickets', files[0]!)).mode & 0o777).toBe(0o600);
    expect(redeemLoginTicket(dir, ticket, now + LOGIN_TICKET_MS)).toBe(true);
    expect(redeemLoginTicket(dir, ticket, now + 1)).toBe(false);
    expect(readdirSync(join(dir, 'keys', 'console-tickets'))).toEqual([]);
  });

  it('are refused late, made up, malformed or aimed at a path, and a late one is used up too', () => {
    const dir = controlDir();
    const now = Date.now();
    const late = issueLoginTicket(dir, now);
    expect(redeemLoginTicket(dir, late, now + LOGIN_TICKET_MS + 1)).toBe(false);
    expect(redeemLoginTicket(dir, late, now)).toBe(false);
    expect(redeemLoginTicket(dir, 'A'.repeat(43), now)).toBe(false);
    for (const odd of ['', 'short', `../${'a'.repeat(40)}`, `${'a'.repeat(43)}\n`, 'a'.repeat(44)]) expect(redeemLoginTicket(dir, odd, now)).toBe(false);
  });

  it('of another control-plane folder open nothing here', () => {
    const dir = controlDir();
    const other = join(ws!.root, 'other');
    const ticket = issueLoginTicket(other);
    expect(redeemLoginTicket(dir, ticket)).toBe(false);
    expect(redeemLoginTicket(other, ticket)).toBe(true);
  });

  it('left unused are removed when the next one is made', () => {
    const dir = controlDir();
    const now = Date.now();
    issueLoginTicket(dir, now - 10 * LOGIN_TICKET_MS);
    const folder = join(dir, 'keys', 'console-tickets');
    const [stale] = readdirSync(folder);
    const old = new Date(now - 10 * LOGIN_TICKET_MS);
    utimesSync(join(folder, stale!), old, old);
    issueLoginTicket(dir, now);
    expect(readdirSync(folder)).toHaveLength(1);
    expect(readdirSync(folder)).not.toContain(stale);
  });
});

describe('console sessions', () => {
  it('are found by their cookie until they expire, each with its own csrf token', () => {
    const sessions = new ConsoleSessions();
    const now = Date.now();
    const one = sessions.open(now);
    const two = sessions.open(now);
    expect(one.id).not.toBe(two.id);
    expect(one.csrf).not.toBe(two.csrf);
    expect(one.csrf).not.toBe(one.id);
    expect(sessions.find(one.id, now + SESSION_MS)).toBe(one);
    expect(sessions.find(one.id, now + SESSION_MS + 1)).toBeUndefined();
    expect(sessions.find(one.id, now)).toBeUndefined();
    expect(sessions.find(one.csrf, now)).toBeUndefined();
    expect(sessions.find('', now)).toBeUndefined();
  });

  it('stay bounded: past 64 the oldest is dropped', () => {
    const sessions = new ConsoleSessions();
    const now = Date.now();
    const first = sessions.open(now);
    const rest = Array.from({ length: 64 }, () => sessions.open(now));
    expect(sessions.find(first.id, now)).toBeUndefined();
    expect(rest.every((session) => sessions.find(session.id, now) === session)).toBe(true);
  });
});
