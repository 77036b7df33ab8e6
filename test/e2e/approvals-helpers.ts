// What the approvals end-to-end tests share: the human deciding in a terminal, the client's log
// notifications, a notify-send stand-in and the audit lines.
import { execFile } from 'node:child_process';
import { chmodSync, existsSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { expect } from 'vitest';
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { LoggingMessageNotificationSchema } from '@modelcontextprotocol/sdk/types.js';
import { GATEWAY_CLI } from './helpers.js';

/** An approval id, as a regular expression source. */
export const ID = '[a-km-np-z2-9]{8}';

/** The approval id a reply or a notice names. */
export function idIn(text: string): string {
  return new RegExp(`\\(approval (${ID})\\)`).exec(text)![1]!;
}

/** `bulkhead …` as a user runs it in a terminal: exit code and output. */
export function bulkhead(args: readonly string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    execFile(process.execPath, [GATEWAY_CLI, ...args], { encoding: 'utf8' }, (error, stdout, stderr) => resolve({ code: error ? Number(error.code) : 0, stdout, stderr }));
  });
}

/** The human's decision, made in a terminal as they would make it: `bulkhead approvals allow|deny`. */
export async function decide(controlDir: string, id: string, decision: 'once' | 'session' | 'always' | 'deny'): Promise<void> {
  const words = { once: ['allow', id], session: ['allow', id, '--session'], always: ['allow', id, '--always'], deny: ['deny', id] }[decision];
  const done = await bulkhead(['approvals', ...words, '--config', controlDir]);
  expect(done.code, done.stderr).toBe(0);
}

/** The MCP log notifications a client received, and the approval ids they named. */
export function listen(client: Client): { notices: string[]; nextId: () => Promise<string> } {
  const notices: string[] = [];
  let seen = 0;
  client.setNotificationHandler(LoggingMessageNotificationSchema, (notification) => {
    notices.push(`${notification.params.level} ${notification.params.logger}: ${String(notification.params.data)}`);
  });
  return {
    notices,
    /** The id of the next approval a held call announces. */
    nextId: async () => {
      await expect.poll(() => notices.length, { timeout: 15_000, interval: 20 }).toBeGreaterThan(seen);
      return idIn(notices[seen++]!);
    },
  };
}

/** A real `notify-send` stand-in: a script on PATH that writes its arguments, one per line, to a file. */
export function fakeNotifySend(): { folder: string; calls: () => string[][] } {
  const folder = mkdtempSync(join(tmpdir(), 'bulkhead-notify-'));
  const log = join(folder, 'calls.log');
  writeFileSync(join(folder, 'notify-send'), `#!/bin/sh\nfor arg in "$@"; do printf '%s\\n' "$arg"; done >> '${log}'\nprintf '%s\\n' '--end--' >> '${log}'\n`);
  chmodSync(join(folder, 'notify-send'), 0o755);
  return {
    folder,
    calls: () =>
      existsSync(log)
        ? readFileSync(log, 'utf8')
            .split('--end--\n')
            .filter(Boolean)
            .map((call) => call.trimEnd().split('\n'))
        : [],
  };
}

export const auditOf = (file: string) =>
  readFileSync(file, 'utf8')
    .trimEnd()
    .split('\n')
    .map((line) => JSON.parse(line) as { tool: string; decision: string; outcome: string; approval?: { id: string; by?: string } });
