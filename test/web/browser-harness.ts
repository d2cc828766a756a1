/**
 * Headless Debian Chromium driven by playwright-core (no browser download): a fresh user-data-dir per run, every
 * page's console and CSP violations recorded, every request checked to stay on the service's origin, and
 * screenshots written under test-output/web/ (gitignored).
 */
import { existsSync, mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { chromium, type BrowserContext, type Page } from 'playwright-core';

/** Where Debian installs Chromium (npm test's pretest step, test/harness/ensure-chromium.sh, installs it). */
export const CHROMIUM = '/usr/bin/chromium';

/** The flags the project runs Chromium with (besides the user-data-dir playwright passes). */
export const CHROMIUM_ARGS = [
  '--headless',
  '--no-sandbox',
  '--disable-gpu',
  '--no-first-run',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
  '--disable-quic',
] as const;

/** test-output/web at the repository root. */
export const SCREENSHOT_DIR = resolve(dirname(fileURLToPath(import.meta.url)), '..', '..', 'test-output', 'web');

/** What a page did that the CSP test looks at. */
export interface PageRecord {
  readonly page: Page;
  /** Console messages: "type: text". */
  readonly console: string[];
  /** Uncaught page errors. */
  readonly errors: string[];
  /** Every request URL the page made. */
  readonly requests: string[];
  /** securitypolicyviolation events: "directive blocked-uri". */
  cspViolations(): Promise<string[]>;
}

export interface Browser {
  readonly context: BrowserContext;
  /** Opens a new tab (its own sessionStorage) with recording on. */
  newPage(opts?: { viewport?: { width: number; height: number } }): Promise<PageRecord>;
  /** Every page opened so far. */
  readonly pages: PageRecord[];
  screenshot(page: Page, name: string): Promise<string>;
  close(): Promise<void>;
}

/** Null when Chromium is not installed (the caller fails the test with a clear message). */
export function chromiumMissing(): string | null {
  return existsSync(CHROMIUM)
    ? null
    : `${CHROMIUM} is missing: install Debian's chromium (npm test's pretest step installs it when run as root; else apt-get install chromium) to run the browser tests`;
}

/** Launches Chromium with a fresh profile in a temp dir. */
export async function launchBrowser(): Promise<Browser> {
  const profile = mkdtempSync(join(tmpdir(), 'svc-chromium-'));
  const context = await chromium.launchPersistentContext(profile, {
    executablePath: CHROMIUM,
    headless: true,
    args: [...CHROMIUM_ARGS],
    viewport: { width: 1280, height: 900 },
    locale: 'en-CA',
    timeout: 60_000,
  });
  context.setDefaultTimeout(30_000);
  // Recorded before any page script runs; CDP-injected, so the page's CSP does not apply to this listener.
  await context.addInitScript(
    "window.__csp = []; document.addEventListener('securitypolicyviolation', (e) => window.__csp.push(e.violatedDirective + ' ' + e.blockedURI));",
  );
  const pages: PageRecord[] = [];
  mkdirSync(SCREENSHOT_DIR, { recursive: true });
  // A persistent context opens with one blank tab; close it so each test owns its tabs.
  for (const p of context.pages()) await p.close();
  return {
    context,
    pages,
    async newPage(opts = {}) {
      const page = await context.newPage();
      if (opts.viewport) await page.setViewportSize(opts.viewport);
      const rec: PageRecord = {
        page,
        console: [],
        errors: [],
        requests: [],
        cspViolations: async () => page.evaluate<string[]>('window.__csp || []'),
      };
      page.on('console', (m) => rec.console.push(`${m.type()}: ${m.text()}`));
      page.on('pageerror', (e) => rec.errors.push(e.message));
      page.on('request', (r) => rec.requests.push(r.url()));
      pages.push(rec);
      return rec;
    },
    async screenshot(page, name) {
      const file = join(SCREENSHOT_DIR, `${name}.png`);
      await page.screenshot({ path: file, fullPage: true });
      return file;
    },
    async close() {
      await context.close();
      rmSync(profile, { recursive: true, force: true });
    },
  };
}
