import { mkdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ApprovalStore, PermissionGate } from '@bulkhead/core';
import { startStdioServer, tempWorkspace, type ServerProcess, type TempWorkspace } from '@bulkhead/core/testing';
import { consoleLink, launchBrowser, loggedIn, screenshot } from './console-browser.js';
import { GATEWAY_CLI, text } from './helpers.js';

/**
 * The flow of issue 17 as a new user meets it: a client without elicitation (Claude Desktop)
 * asks the gateway, started as README says, to write a file; the human opens the console with
 * `bulkhead console`, sees the call and its diff, and decides; the waiting call returns.
 */

let browser: Browser;
beforeAll(async () => {
  browser = await launchBrowser();
});
afterAll(async () => {
  await browser?.close();
});

/** The gateway as README starts it, in an empty folder whose permissions.yaml sets only how long a call waits. */
async function gatewayIn(ws: TempWorkspace, approvalWaitMs: number): Promise<ServerProcess> {
  mkdirSync(join(ws.root, '.bulkhead'), { recursive: true });
  writeFileSync(join(ws.root, '.bulkhead', 'permissions.yaml'), `approval_wait_ms: ${approvalWaitMs}\n`);
  const gateway = await startStdioServer({ script: GATEWAY_CLI, args: ['start', '--root', ws.root], cwd: ws.root });
  await gateway.client.callTool({ name: 'load_tools', arguments: { names: ['fs_write__write_file', 'fs_write__create_directory'] } });
  return gateway;
}

/** The console's URL, from the start banner on the gateway's stderr. */
async function bannerUrl(gateway: ServerProcess): Promise<string> {
  for (let i = 0; i < 100; i++) {
    const url = /console: (http:\/\/127\.0\.0\.1:\d+\/console\/) \(open it with `bulkhead console`\)/.exec(gateway.stderr())?.[1];
    if (url) return url;
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  throw new Error(`no console line in the banner:\n${gateway.stderr()}`);
}

const write = (gateway: ServerProcess, path: string, content: string) =>
  gateway.client.callTool({ name: 'fs_write__write_file', arguments: { path, content } }, undefined, { timeout: 60_000 });

/** The card of the one pending approval of `tool`, once the page shows it (by itself, with live updates; by reloading, without). */
async function pendingCard(page: Page, live: boolean) {
  const card = page.locator('section.approval');
  if (live) await card.waitFor({ timeout: 20_000 });
  else {
    for (let i = 0; i < 100 && (await card.count()) === 0; i++) {
      await new Promise((resolve) => setTimeout(resolve, 200));
      await page.reload();
    }
  }
  expect(await card.count()).toBe(1);
  return card;
}

describe('a client without elicitation, approved in the console', () => {
  let ws: TempWorkspace;
  let gateway: ServerProcess;
  let consoleUrl: string;
  let page: Page;

  beforeAll(async () => {
    ws = tempWorkspace({ 'notes.txt': 'first line\nold line\n' });
    gateway = await gatewayIn(ws, 20_000);
    const shown = await bannerUrl(gateway);
    const link = await consoleLink(join(ws.root, '.bulkhead'));
    // The login link leads under the banner's address to the console's own base path, its session cookie's scope.
    expect(link.url).toMatch(new RegExp(`^${shown.replace(/[.]/g, '\\.')}[A-Za-z0-9_-]{22}/$`));
    consoleUrl = link.url;
    expect(link.stderr()).toBe('');
    ({ page } = await loggedIn(browser, link.link));
  });
  afterAll(async () => {
    await gateway?.close();
    ws?.cleanup();
  });

  it('shows the pending call with its diff, and Allow once lets the waiting call write the file', async () => {
    expect(page.url()).toBe(consoleUrl);
    expect(await page.locator('#none-pending').textContent()).toContain('No call is waiting for approval.');
    const call = write(gateway, 'notes.txt', 'first line\nnew line\n');

    // The page was open before the call: it shows it by itself, through the live updates.
    const card = await pendingCard(page, true);
    expect(await card.locator('h2').textContent()).toMatch(/^fs_write:write_file · [a-z0-9]+$/);
    expect(await card.locator('.prompt').textContent()).toContain('Allow fs_write:write_file?');
    expect(await card.locator('.diff .del').allTextContents()).toEqual(['-old line']);
    expect(await card.locator('.diff .add').allTextContents()).toEqual(['+new line']);
    expect(await card.locator('dd').nth(3).textContent()).toContain('fs_write:write_file');
    expect(await card.locator('button').allTextContents()).toEqual(['Allow once', 'Allow for this session', 'Always allow', 'Deny']);
    await screenshot(page, 'console-approvals', { forDocs: true });
    const id = (await card.getAttribute('data-approval'))!;

    await card.getByRole('button', { name: 'Allow once' }).click();
    await page.waitForURL(/\?outcome=/);
    expect(await page.locator('.outcome').textContent()).toBe(`Allowed once: fs_write:write_file (${id}).`);
    const result = await call;
    expect(result.isError).toBeFalsy();
    expect(readFileSync(ws.path('notes.txt'), 'utf8')).toBe('first line\nnew line\n');
    const decided = page.locator(`#decided tr[data-approval="${id}"]`);
    // The held call claimed the decision before it ran; the page says so once it is read again.
    await page.reload();
    expect((await decided.locator('td').allTextContents()).map((cell) => cell.trim())).toEqual([
      `fs_write:write_file${id}`,
      'Allowed once',
      'the Bulkhead console (127.0.0.1)',
      expect.stringMatching(/^\d{4}-\d\d-\d\dT.*ago\)$/),
      'ran',
    ]);
    await screenshot(page, 'console-approvals-decided');
  });

  it('Deny refuses the waiting call, naming the console, and writes nothing', async () => {
    await page.goto(consoleUrl);
    const call = write(gateway, 'denied.txt', 'never\n');
    const card = await pendingCard(page, true);
    await card.getByRole('button', { name: 'Deny' }).click();
    await page.waitForURL(/\?outcome=/);
    expect(await page.locator('.outcome').textContent()).toMatch(/^Denied: fs_write:write_file \([a-z0-9]+\)\.$/);
    const result = await call;
    expect(result.isError).toBe(true);
    const id = /\(([a-z0-9]+)\)\.$/.exec((await page.locator('.outcome').textContent())!)![1];
    expect(text(result)).toMatch(new RegExp(`^Permission denied: the Bulkhead console \\(127\\.0\\.0\\.1\\) denied fs_write:write_file \\(approval ${id}\\) at [^.]+\\. Nothing was run\\.$`));
    expect(() => readFileSync(ws.path('denied.txt'))).toThrow(/ENOENT/);
  });

  it('works without JavaScript: the decision is a plain form post', async () => {
    const link = await consoleLink(join(ws.root, '.bulkhead'));
    const { context, page: plain } = await loggedIn(browser, link.link, { javaScriptEnabled: false });
    try {
      const call = write(gateway, 'plain.txt', 'by form\n');
      const card = await pendingCard(plain, false);
      await card.getByRole('button', { name: 'Allow once' }).click();
      await plain.waitForURL(/\?outcome=/);
      expect(await plain.locator('.outcome').textContent()).toMatch(/^Allowed once: fs_write:write_file \([a-z0-9]+\)\.$/);
      expect((await call).isError).toBeFalsy();
      expect(readFileSync(ws.path('plain.txt'), 'utf8')).toBe('by form\n');
    } finally {
      await context.close();
    }
  });

  it('Allow for this session lets the call run, and the next call of that tool runs unasked', async () => {
    await page.goto(consoleUrl);
    const mkdir = (path: string) => gateway.client.callTool({ name: 'fs_write__create_directory', arguments: { path } }, undefined, { timeout: 60_000 });
    const call = mkdir('made/by/session');
    const card = await pendingCard(page, true);
    expect(await card.locator('h2').textContent()).toMatch(/^fs_write:create_directory · /);
    await card.getByRole('button', { name: 'Allow for this session' }).click();
    await page.waitForURL(/\?outcome=/);
    expect(await page.locator('.outcome').textContent()).toMatch(/^Allowed for the rest of its session: fs_write:create_directory \([a-z0-9]+\)\.$/);
    expect((await call).isError).toBeFalsy();
    const next = await mkdir('made/again');
    expect(next.isError).toBeFalsy();
    expect(statSync(ws.path('made/again')).isDirectory()).toBe(true);
    expect(new ApprovalStore(join(ws.root, '.bulkhead')).pending()).toEqual([]);
  });

  it('Always allow writes a rule the real loader reads, and the next call runs unasked', async () => {
    await page.goto(consoleUrl);
    const call = write(gateway, 'always.txt', 'one\n');
    const card = await pendingCard(page, true);
    await card.getByRole('button', { name: 'Always allow' }).click();
    await page.waitForURL(/\?outcome=/);
    expect(await page.locator('.outcome').textContent()).toMatch(/^Always allowed: fs_write:write_file \([a-z0-9]+\); added .*fs_write:write_file.*\.$/);
    expect((await call).isError).toBeFalsy();
    expect(readFileSync(ws.path('always.txt'), 'utf8')).toBe('one\n');

    const permissions = PermissionGate.load(join(ws.root, '.bulkhead'));
    expect(permissions.decide({ qualifiedName: 'fs_write:write_file', risk: 'medium', args: { path: 'other.txt', content: 'x' } }).verdict).toBe('allow');
    expect(readFileSync(join(ws.root, '.bulkhead', 'permissions.yaml'), 'utf8')).toContain('approval_wait_ms: 20000');

    const next = await write(gateway, 'always.txt', 'two\n');
    expect(next.isError).toBeFalsy();
    expect(readFileSync(ws.path('always.txt'), 'utf8')).toBe('two\n');
  });
});

describe('a call that gave up waiting', () => {
  let ws: TempWorkspace;
  let gateway: ServerProcess;

  beforeAll(async () => {
    ws = tempWorkspace({});
    gateway = await gatewayIn(ws, 500);
  });
  afterAll(async () => {
    await gateway?.close();
    ws?.cleanup();
  });

  it('is approved in the console afterwards, and the identical retry runs', async () => {
    const first = await write(gateway, 'later.txt', 'approved later\n');
    expect(first.isError).toBe(true);
    const id = /approval ([a-z0-9]+)/.exec(text(first))?.[1];
    expect(id).toBeDefined();
    // Where to approve it: the running console, by its address.
    expect(text(first)).toContain(`the Bulkhead console (${await bannerUrl(gateway)})`);
    expect(() => readFileSync(ws.path('later.txt'))).toThrow(/ENOENT/);

    const link = await consoleLink(join(ws.root, '.bulkhead'));
    const { context, page } = await loggedIn(browser, link.link);
    try {
      const card = page.locator(`section.approval[data-approval="${id}"]`);
      expect(await card.locator('dd').nth(2).textContent()).toContain('the call gave up waiting: an identical retry finds your decision');
      await card.getByRole('button', { name: 'Allow once' }).click();
      await page.waitForURL(/\?outcome=/);
      expect(await page.locator('.outcome').textContent()).toBe(`Allowed once: fs_write:write_file (${id}).`);
    } finally {
      await context.close();
    }
    const retry = await write(gateway, 'later.txt', 'approved later\n');
    expect(retry.isError).toBeFalsy();
    expect(readFileSync(ws.path('later.txt'), 'utf8')).toBe('approved later\n');
  });
});
