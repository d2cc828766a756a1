// Issue 46 item 8, the pages in a real browser (headless Debian Chromium): a long query wraps instead of widening the
// page, an over-long one is refused with the API's own message, and a Manage-a-URL error line appears once.
import t from 'tap';
import type { Page } from 'playwright-core';
import { chromiumMissing, launchBrowser, type Browser, type PageRecord } from './browser-harness.js';
import { startWebService, type WebService } from './web-service.js';

const missing = chromiumMissing();
if (missing) {
  t.fail(missing);
} else {
  const svc: WebService = await startWebService({ crawl: false });
  const browser: Browser = await launchBrowser();
  t.teardown(async () => {
    await browser.close();
    await svc.close();
  });

  const openWithKey = async (path: string, width: number): Promise<PageRecord> => {
    const rec = await browser.newPage({ viewport: { width, height: 800 } });
    await rec.page.goto(svc.url + '/manage-url');
    await rec.page.locator('#key-input').fill(svc.key);
    await rec.page.getByRole('button', { name: 'Use this key' }).click();
    await rec.page.goto(svc.url + path);
    return rec;
  };
  /** The document's laid-out width against the viewport's. */
  const widths = (page: Page): Promise<{ doc: number; viewport: number }> =>
    page.evaluate('({ doc: document.documentElement.scrollWidth, viewport: window.innerWidth })');

  for (const width of [1280, 375]) {
    t.test(`issue 46: a 300-character query wraps within a ${width} px viewport`, async (t) => {
      const q = 'x'.repeat(300);
      const { page } = await openWithKey(`/?q=${q}`, width);
      await page
        .locator('#search-status')
        .filter({ hasText: /for “x+”|No results/ })
        .waitFor();
      const w = await widths(page);
      t.ok(w.doc <= w.viewport, `document ${w.doc} px within the ${w.viewport} px viewport`);
    });

    t.test(`issue 46: a 301-character query is refused with the API's message, within a ${width} px viewport`, async (t) => {
      const q = 'y'.repeat(301);
      const { page } = await openWithKey(`/?q=${q}`, width);
      const box = page.locator('#search-error');
      await box.waitFor({ state: 'visible' });
      const api = await fetch(`${svc.url}/api/v1/search?q=${q}`, { headers: { authorization: `Bearer ${svc.key}` } });
      t.equal(api.status, 422);
      const problem = (await api.json()) as { title: string; detail: string; code: string; errors: { path: string[]; issue: string }[] };
      t.equal(await box.locator('.problem-title').textContent(), `${problem.title} (422, ${problem.code})`);
      t.equal(await box.locator('.problem-detail').textContent(), problem.detail, 'the API detail, verbatim');
      t.same(
        await box.locator('.problem-errors li').allTextContents(),
        problem.errors.map((e) => `${e.path.join('.')}: ${e.issue}`),
        "the API's field issue (q too long)",
      );
      t.match(problem.errors[0], { path: ['q'] });
      t.equal(await page.locator('#results li').count(), 0, 'no results shown');
      const w = await widths(page);
      t.ok(w.doc <= w.viewport, `document ${w.doc} px within the ${w.viewport} px viewport`);
    });
  }

  t.test('issue 46: a Manage-a-URL error line appears once', async (t) => {
    const { page } = await openWithKey('/manage-url', 1280);
    await page.getByLabel('Discovery').check();
    await page.getByLabel('URL', { exact: true }).fill('not a url');
    await page.getByRole('button', { name: 'Send request' }).click();
    const box = page.locator('#manage-error');
    await box.waitFor({ state: 'visible' });
    const api = await fetch(`${svc.url}/api/v1/requests`, {
      method: 'POST',
      headers: { authorization: `Bearer ${svc.key}`, 'content-type': 'application/json' },
      body: JSON.stringify({ type: 'discovery', url: 'not a url' }),
    });
    const problem = (await api.json()) as { detail: string; errors: { path: string[]; issue: string }[] };
    t.equal(
      `${problem.errors[0]!.path.join('.')}: ${problem.errors[0]!.issue}`,
      problem.detail,
      'the API repeats its detail as a field issue',
    );
    const text = (await box.innerText()).split('\n').map((l) => l.trim());
    t.equal(text.filter((l) => l === problem.detail).length, 1, `the error line appears once: ${JSON.stringify(text)}`);
    t.equal(await box.locator('.problem-errors li').count(), 0, 'no list repeating it');
  });
}
