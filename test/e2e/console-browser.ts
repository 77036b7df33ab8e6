import { spawn } from 'node:child_process';
import { copyFileSync, mkdirSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { chromium, type Browser, type BrowserContext, type Page } from 'playwright-core';
import { GATEWAY_CLI } from './helpers.js';

/** Debian's Chromium (`apt-get install chromium`; .ci/run installs it): the tests download no browser. */
export const CHROMIUM = process.env['BULKHEAD_CHROMIUM'] ?? '/usr/bin/chromium';
const REPO = fileURLToPath(new URL('../..', import.meta.url));
const SCREENSHOTS = join(REPO, '.test-results', 'screenshots');

/** One headless Chromium for a test file (launching is the slow part). */
export function launchBrowser(): Promise<Browser> {
  return chromium.launch({ executablePath: CHROMIUM, args: ['--no-sandbox'] });
}

export interface ConsoleLink {
  /** The one-time login link `bulkhead console --print` printed. */
  readonly link: string;
  /** The console's own URL (`http://127.0.0.1:PORT/console/`). */
  readonly url: string;
  /** What the command wrote to stderr (with no gateway: that it serves a console itself). */
  stderr(): string;
  /** Stops the command when it still runs (it serves a console itself when no gateway runs). */
  stop(): Promise<void>;
}

/**
 * Runs `bulkhead console --print --config DIR` as a user would and takes the login link from its
 * first line of stdout. With a gateway running the command exits at once; without one it goes on
 * serving a console until `stop()`.
 */
export function consoleLink(controlDir: string, extraArgs: readonly string[] = []): Promise<ConsoleLink> {
  const child = spawn(process.execPath, [GATEWAY_CLI, 'console', '--print', '--config', controlDir, ...extraArgs], { stdio: ['ignore', 'pipe', 'pipe'] });
  let stdout = '';
  let stderr = '';
  child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
  const stop = () =>
    new Promise<void>((done) => {
      if (child.exitCode !== null || child.signalCode !== null) return done();
      child.once('exit', () => done());
      child.kill('SIGTERM');
    });
  return new Promise((resolvePromise, reject) => {
    const timer = setTimeout(() => {
      void stop();
      reject(new Error(`bulkhead console printed no link within 15 s; stderr: ${stderr}`));
    }, 15_000);
    child.stdout.on('data', (chunk: Buffer) => {
      stdout += chunk.toString();
      const line = stdout.split('\n')[0]!;
      if (!stdout.includes('\n')) return;
      clearTimeout(timer);
      resolvePromise({ link: line, url: line.replace(/login\?ticket=.*$/, ''), stderr: () => stderr, stop });
    });
    child.once('exit', (code) => {
      if (stdout.includes('\n')) return;
      clearTimeout(timer);
      reject(new Error(`bulkhead console exited with ${code} and printed no link; stderr: ${stderr}`));
    });
  });
}

/** A fresh browser context logged in through a login link (a context of its own: its own cookie jar). */
export async function loggedIn(browser: Browser, link: string, options: { javaScriptEnabled?: boolean } = {}): Promise<{ context: BrowserContext; page: Page }> {
  const context = await browser.newContext({ javaScriptEnabled: options.javaScriptEnabled ?? true, viewport: { width: 1100, height: 900 } });
  const page = await context.newPage();
  const response = await page.goto(link);
  if (response?.status() !== 200) throw new Error(`the login link answered ${response?.status()}: ${await response?.text()}`);
  return { context, page };
}

/**
 * Saves a screenshot under .test-results/screenshots/; with BULKHEAD_SCREENSHOTS=docs/images set,
 * also copies it there for the docs (only the pictures the docs show are asked for by name).
 */
export async function screenshot(page: Page, name: string, options: { forDocs?: boolean } = {}): Promise<string> {
  mkdirSync(SCREENSHOTS, { recursive: true });
  const file = join(SCREENSHOTS, `${name}.png`);
  await page.screenshot({ path: file, fullPage: true });
  const docs = process.env['BULKHEAD_SCREENSHOTS'];
  if (docs && options.forDocs) {
    const folder = resolve(REPO, docs);
    mkdirSync(folder, { recursive: true });
    copyFileSync(file, join(folder, `${name}.png`));
  }
  return file;
}
