// A hostile model's text in the console: arguments, file names, diff lines and audited errors
// that are HTML are shown as text on every page that shows them, in a real Chromium, and run
// nothing. Real processes: the gateway started as README says, `bulkhead console` logging in.
import { mkdirSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { startStdioServer, tempWorkspace, type ServerProcess, type TempWorkspace } from '@bulkhead/core/testing';
import { consoleLink, launchBrowser, loggedIn } from './console-browser.js';
import { idIn } from './approvals-helpers.js';
import { GATEWAY_CLI, text } from './helpers.js';

/** Markup that would run or show something if a page put it into the HTML unescaped, in text and in an attribute. */
const HOSTILE = `"'><script>window.__owned = 1</script><img id="owned" src="x" onerror="window.__owned = 2"></pre></dd><b id="bold">bold</b>`;

describe('the console, shown what a hostile model chose', () => {
  let browser: Browser;
  let ws: TempWorkspace;
  let gateway: ServerProcess;
  let page: Page;
  const dialogs: string[] = [];
  let approvalId: string;

  beforeAll(async () => {
    browser = await launchBrowser();
    ws = tempWorkspace({ 'old.txt': `${HOSTILE}\nsecond line\n` });
    mkdirSync(join(ws.root, '.bulkhead'), { recursive: true });
    writeFileSync(join(ws.root, '.bulkhead', 'permissions.yaml'), 'approval_wait_ms: 0\n');
    gateway = await startStdioServer({ script: GATEWAY_CLI, args: ['start', '--root', ws.root], cwd: ws.root });
    await gateway.client.callTool({ name: 'load_tools', arguments: { names: ['fs_write__write_file', 'fs__read_file'] } });
    // Held: the file name, the new content and the diff against the old content all carry the markup.
    const held = (await gateway.client.callTool({ name: 'fs_write__write_file', arguments: { path: 'old.txt', content: `${HOSTILE}\n${HOSTILE} changed\n` } })) as CallToolResult;
    approvalId = idIn(text(held));
    // Audited with an error that names the hostile path.
    await gateway.client.callTool({ name: 'fs__read_file', arguments: { path: `${HOSTILE}.txt` } });
    const link = await consoleLink(join(ws.root, '.bulkhead'));
    ({ page } = await loggedIn(browser, link.link));
    page.on('dialog', (dialog) => {
      dialogs.push(dialog.message());
      void dialog.dismiss();
    });
  });

  afterAll(async () => {
    await browser?.close();
    await gateway?.close();
    ws?.cleanup();
  });

  /** Nothing of the markup became an element or ran. */
  async function expectInert(): Promise<void> {
    expect(await page.locator('#owned, #bold, main script, main img').count()).toBe(0);
    expect(await page.evaluate(() => (window as unknown as { __owned?: number }).__owned)).toBeUndefined();
    expect(dialogs).toEqual([]);
  }

  it('Approvals: the arguments, the prompt and the diff show the markup as text', async () => {
    const held = (await gateway.client.callTool({ name: 'fs_write__write_file', arguments: { path: 'old.txt', content: `${HOSTILE}\n${HOSTILE} changed\n` } })) as CallToolResult;
    expect(idIn(text(held))).toBe(approvalId);
    const card = page.locator(`#approval-${approvalId}`);
    await card.waitFor({ timeout: 20_000 });
    // The prompt quotes the values (as JSON strings); the markup between the quotes is there as text.
    expect(await card.locator('pre.prompt').innerText()).toContain('<script>window.__owned = 1</script><img id=\\"owned\\" src=\\"x\\" onerror=\\"window.__owned = 2\\"></pre></dd><b id=\\"bold\\">bold</b>');
    expect(await card.locator('pre.diff').innerText()).toContain(`+${HOSTILE} changed`);
    await expectInert();
  });

  it('Activity: an audited error that names the hostile path shows it as text', async () => {
    await page.goto(new URL('activity', page.url()).href);
    expect(await page.locator('#activity').innerText()).toContain(`${HOSTILE}.txt`);
    await expectInert();
  });

  it('its session cookie is not sent to another listener on 127.0.0.1 that a page points the browser at', async () => {
    // A model's preview server on another port of 127.0.0.1 (same site as the console, so SameSite
    // does not stop the cookie): it records the cookies the browser sends it for console-like paths.
    const cookies: string[] = [];
    const consolePort = new URL(page.url()).port;
    const listener = createServer((request, response) => {
      cookies.push(`${request.url} ${request.headers.cookie ?? ''}`);
      // Every console path a page could know; the console's own base path (keys/consoles/) it cannot.
      const lure = ['/console/', '/console/activity', '/console/x.png', '/console/approvals/decide', '/'];
      response.writeHead(200, { 'content-type': 'text/html' }).end(request.url === '/' ? lure.map((path) => `<img src="${path}">`).join('') : '');
    });
    await new Promise<void>((resolve) => listener.listen(0, '127.0.0.1', () => resolve()));
    try {
      const port = (listener.address() as AddressInfo).port;
      const other = await page.context().newPage();
      await other.goto(`http://127.0.0.1:${port}/`, { timeout: 10_000 });
      await other.goto(`http://127.0.0.1:${port}/console/`, { timeout: 10_000 });
      for (let i = 0; i < 50 && cookies.length < 7; i++) await new Promise((resolve) => setTimeout(resolve, 100));
      await other.close();
      expect(cookies.length).toBeGreaterThanOrEqual(7);
      expect(cookies.filter((line) => line.includes(`bulkhead_console_${consolePort}`))).toEqual([]);
      // The console itself still has the browser's session.
      await page.goto(new URL('.', page.url()).href, { timeout: 10_000, waitUntil: 'domcontentloaded' });
      expect(await page.locator('h1').first().innerText({ timeout: 10_000 })).toBe('Approvals');
    } finally {
      await new Promise<void>((resolve) => listener.close(() => resolve()));
    }
  });
});
