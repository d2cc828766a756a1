// The pages in a real browser (headless Debian Chromium via playwright-core) against the real service on
// loopback, whose index was filled by the real crawler from the local test web. Issue 6.
import type { Page } from 'playwright-core';
import t from 'tap';
import { chromiumMissing, launchBrowser, type Browser, type PageRecord } from './browser-harness.js';
import { SNIPPET_HOST, startWebService, type WebService } from './web-service.js';

// Page-side code is passed as strings: the project's TypeScript has no DOM library.
const activeId = (page: Page): Promise<string> => page.evaluate<string>("document.activeElement ? document.activeElement.id : ''");
const storedKey = (page: Page): Promise<string | null> => page.evaluate<string | null>("sessionStorage.getItem('svc.apiKey')");
/** The part of the DOM the waiting predicates use (typed here because tsconfig has no DOM library). */
interface PageGlobals {
  document: { getElementById(id: string): { textContent: string | null } | null };
  __csp?: string[];
}
// waitForFunction gets a function, not a string: a string predicate is compiled in the page with eval, which the
// page's CSP rightly refuses (and reports as a violation).
const statusStartsWith = async (page: Page, prefix: string): Promise<void> => {
  try {
    await page.waitForFunction(
      (p) => ((globalThis as unknown as PageGlobals).document.getElementById('search-status')?.textContent ?? '').startsWith(p),
      prefix,
      { timeout: 20_000 },
    );
  } catch (err) {
    // Say what the page showed instead: a timeout alone explains nothing.
    const shown = await page.locator('#search-status').textContent();
    const problem = await page.locator('#search-error').textContent();
    throw new Error(
      `status never started with ${JSON.stringify(prefix)}; it reads ${JSON.stringify(shown)} (error box: ${JSON.stringify(problem)})`,
      { cause: err },
    );
  }
};

const missing = chromiumMissing();
if (missing) {
  t.fail(missing);
} else {
  const svc: WebService = await startWebService();
  const browser: Browser = await launchBrowser();
  t.teardown(async () => {
    await browser.close();
    await svc.close();
  });

  /** The search API's answer for the same query the page sends (limit 10). */
  const apiSearch = async (q: string, offset = 0) => {
    const res = await fetch(`${svc.url}/api/v1/search?${new URLSearchParams({ q, limit: '10', offset: String(offset) })}`, {
      headers: { authorization: `Bearer ${svc.key}` },
    });
    return (await res.json()) as {
      results: { url: string; title: string; host: string }[];
      collapsed_per_host: Record<string, number>;
    };
  };

  /** Opens `path` in a new tab and enters the key in the key panel. */
  const openWithKey = async (path: string, key = svc.key): Promise<PageRecord> => {
    const rec = await browser.newPage();
    await rec.page.goto(svc.url + path);
    await rec.page.locator('#key-input').fill(key);
    await rec.page.getByRole('button', { name: 'Use this key' }).click();
    return rec;
  };

  t.test('the crawl filled the index from the test web', async (t) => {
    t.ok(svc.crawlStats.indexed >= 20, `indexed ${svc.crawlStats.indexed} pages`);
    t.equal(svc.crawlStats.errors, 0);
  });

  t.test('issue 6: a search with operators shows results, highlights and provenance', async (t) => {
    const { page } = await openWithKey('/');
    t.ok(await page.locator('#key-present').isVisible(), 'key accepted into the tab');
    // Title phrase, URL exclusion and domain together.
    const q = 'bibliothèque intitle:"Ville de Québec" -inurl:json site:ville-quebec.test';
    await page.locator('#q').fill(q);
    await page.locator('#q').press('Enter');
    await page.locator('#results li.result').first().waitFor();
    await statusStartsWith(page, 'Results');

    const api = await apiSearch(q);
    const shown = await page.locator('#results li.result .result-url').allTextContents();
    // Compared as sets: equal-scored results may tie in either order between two calls of the index.
    t.same([...shown].sort(), api.results.map((r) => r.url).sort(), 'the page shows the API results');
    const titles = await page.locator('#results .result-title').allTextContents();
    t.ok(titles.includes('Bibliothèque Gabrielle-Roy — Ville de Québec'), 'the library page is found');
    t.notOk(
      shown.some((u) => u.includes('json')),
      '-inurl:json excluded the json-casse page',
    );
    t.same(
      [...shown].sort(),
      [svc.web.url('ville-quebec.test', '/'), svc.web.url('ville-quebec.test', '/bibliotheques/gabrielle-roy.html')].sort(),
      'exactly the two matching pages',
    );
    t.ok(shown.every((u) => new URL(u).hostname === 'ville-quebec.test'));

    const marks = (await page.locator('#results .excerpt mark').allTextContents()).map((m) => m.toLowerCase());
    t.ok(marks.includes('bibliothèque'), 'query term highlighted from the API offsets');
    const prov = await page.locator('#results .provenance').first().textContent();
    t.match(
      prov,
      /^Provenance: fetched by SvcBot \d{4}-\d\d-\d\d \d\d:\d\d:\d\d UTC · (dates from .+|no date found on the page) · excerpt shown · best passage #\d+ · page_ref \d+ · untrusted web content$/,
    );
    t.match(await page.locator('#results .result-dates').first().textContent(), /Fetched \d{4}-\d\d-\d\d/);
    t.match(await page.locator('#search-status').textContent(), new RegExp(`^Results 1–${api.results.length} for “${q}” · ranking: `));

    // The key stays in the tab's sessionStorage: not in the address, not in a cookie.
    t.equal(await storedKey(page), svc.key);
    t.equal(await page.evaluate<string>('document.cookie'), '');
    t.notOk(page.url().includes(svc.key), 'key not in the address');
    t.match(page.url(), /\?q=/);
    await browser.screenshot(page, 'search-operators');

    // An exact phrase with a file type: only the page that contains the phrase.
    await page.locator('#q').fill('"public secondary school" site:ontario-gov.test filetype:html');
    await page.getByRole('button', { name: 'Search', exact: true }).click();
    await statusStartsWith(page, 'Results 1–1 ');
    t.same(await page.locator('#results .result-url').allTextContents(), [
      svc.web.url('ontario-gov.test', '/schools/lakeshore-collegiate.html'),
    ]);
    t.ok(
      (await page.locator('#results .excerpt mark').allTextContents()).map((m) => m.toLowerCase()).includes('public secondary school'),
      'the phrase is highlighted',
    );
  });

  t.test('host-diversity collapse is visible and leads to the host; pagination moves by the results shown', async (t) => {
    const { page } = await openWithKey('/?q=generated+topic');
    await statusStartsWith(page, 'Results');
    const api = await apiSearch('generated topic');
    const collapsed = Object.entries(api.collapsed_per_host).filter(([, n]) => n > 0);
    t.ok(collapsed.length >= 3, 'the API capped several hosts');
    for (const [host, n] of collapsed) {
      const link = page.locator('.more-from-host a', { hasText: `${n} more from ${host}` });
      t.equal(await link.count(), 1, `"${n} more from ${host}" shown`);
      // It sits inside the last result of that host on the page.
      const lastOfHost = page.locator(`#results li.result[data-host="${host}"]`).last();
      t.equal(await lastOfHost.locator('.more-from-host').count(), 1, `${host}: under its last result`);
    }
    const firstPage = await page.locator('#results .result-url').allTextContents();
    t.equal(firstPage.length, api.results.length);
    t.ok(await page.locator('#pager').isVisible(), 'pager shown');
    t.ok(await page.locator('#pager-prev').isDisabled(), 'no previous page on the first page');
    await browser.screenshot(page, 'search-collapse');

    await page.locator('#pager-next').click();
    await statusStartsWith(page, `Results ${firstPage.length + 1}–`);
    const secondPage = await page.locator('#results .result-url').allTextContents();
    const api2 = await apiSearch('generated topic', firstPage.length);
    // The index breaks score ties in no fixed order, so pages are compared by shape, not by exact URLs.
    t.equal(secondPage.length, api2.results.length, 'page 2 has as many results as the API gives at offset = results shown');
    t.ok(secondPage.length > 0, 'page 2 is not empty');
    t.match(await page.locator('#pager-info').textContent(), `Results ${firstPage.length + 1}–${firstPage.length + secondPage.length}`);
    for (const pageUrls of [firstPage, secondPage]) {
      const perHost = new Map<string, number>();
      for (const u of pageUrls) perHost.set(new URL(u).hostname, (perHost.get(new URL(u).hostname) ?? 0) + 1);
      t.ok(
        [...perHost.values()].every((n) => n <= 2),
        'at most 2 results per host on a page',
      );
    }
    t.match(page.url(), new RegExp(`offset=${firstPage.length}$`));
    t.notOk(await page.locator('#pager-prev').isDisabled(), 'previous page available');
    t.equal(await activeId(page), 'search-status', 'focus moves to the new page summary');

    await page.locator('#pager-prev').click();
    await statusStartsWith(page, 'Results 1–');
    t.equal(await page.locator('#results .result-url').count(), firstPage.length, 'previous returns to page 1');
    t.notMatch(page.url(), /offset=/);

    const [host, n] = collapsed[0]!;
    await page.locator('.more-from-host a', { hasText: `${n} more from ${host}` }).click();
    await page.waitForURL(/site%3A/);
    await statusStartsWith(page, 'Results');
    const items = page.locator('#results li.result');
    const hosts: (string | null)[] = [];
    for (let i = 0; i < (await items.count()); i++) hosts.push(await items.nth(i).getAttribute('data-host'));
    t.ok(hosts.length > 2, 'a positive site: lifts the per-host cap');
    t.ok(
      hosts.every((h) => h === host),
      `all results from ${host}`,
    );
    t.equal(await page.locator('#q').inputValue(), `generated topic site:${host}`);
  });

  t.test('snippet rules are visible: nosnippet, max-snippet, data-nosnippet', async (t) => {
    const { page } = await openWithKey('/?q=maplewood+site%3Ashop-montreal.test');
    await statusStartsWith(page, 'Results 1–3 ');
    const result = (path: string) => page.locator(`#results li.result:has(.result-url:text-is("${svc.web.url(SNIPPET_HOST, path)}"))`);

    const none = result('/snippet-rules/nosnippet.html');
    t.equal(await none.locator('.excerpt').count(), 0, 'nosnippet: no excerpt');
    t.equal(await none.locator('.excerpt-none').textContent(), 'No excerpt: this page does not allow snippets.');
    t.match(await none.locator('.provenance').textContent(), /no excerpt: the page forbids snippets/);
    t.equal(
      await none.locator('.result-warning[data-code="snippet_restricted"]').textContent(),
      'The page restricts excerpts (nosnippet).',
    );

    const short = result('/snippet-rules/max-snippet-50.html');
    const text = (await short.locator('.excerpt').textContent()) ?? '';
    t.ok(text.length > 0 && text.length <= 50, `max-snippet:50 excerpt is ${text.length} characters`);
    t.match(await short.locator('.provenance').textContent(), /excerpt shortened to the page's max-snippet/);
    t.equal(await short.locator('.result-warning').count(), 1);

    const hidden = result('/snippet-rules/data-nosnippet.html');
    t.match(await hidden.locator('.excerpt').textContent(), /maplewood baguette/i);
    t.notMatch(await page.locator('#results').textContent(), /SECRET-NOSNIPPET|4471/, 'data-nosnippet text never shown');
    t.ok(await page.locator('#search-warnings').isHidden(), 'per-result warnings are not repeated above the list');
    await browser.screenshot(page, 'search-snippet-rules');
  });

  t.test('the language filter goes to the API and stays in the address', async (t) => {
    const { page } = await openWithKey('/');
    await page.locator('#q').fill('school');
    await page.getByLabel('Language of the pages').selectOption('fr');
    await page.getByRole('button', { name: 'Search', exact: true }).click();
    await statusStartsWith(page, 'No results for “school”');
    t.match(page.url(), /[?&]language=fr(&|$)/);
    await page.getByLabel('Language of the pages').selectOption('en');
    await page.getByRole('button', { name: 'Search', exact: true }).click();
    await statusStartsWith(page, 'Results 1–');
    t.match(await page.locator('#search-status').textContent(), /· pages in English ·/);
    const api = await fetch(`${svc.url}/api/v1/search?q=school&limit=10&language=en`, { headers: { authorization: `Bearer ${svc.key}` } });
    const body = (await api.json()) as { results: { url: string }[] };
    t.same((await page.locator('#results .result-url').allTextContents()).sort(), body.results.map((r) => r.url).sort());
    t.ok(body.results.length > 0, 'English pages match');
    await page.goBack();
    await statusStartsWith(page, 'No results for “school”');
    t.equal(await page.getByLabel('Language of the pages').inputValue(), 'fr', 'back restores the filter');
  });

  t.test('keyboard: skip link, focus order, visible focus', async (t) => {
    const { page } = await browser.newPage();
    await page.goto(svc.url + '/');
    await page.keyboard.press('Tab');
    t.equal(
      await page.evaluate<string>('document.activeElement && document.activeElement.className'),
      'skip-link',
      'first Tab reaches the skip link',
    );
    const outline = await page.evaluate<string>(
      '(() => { const s = getComputedStyle(document.activeElement); return s.outlineStyle + " " + s.outlineWidth; })()',
    );
    t.equal(outline, 'solid 3px', 'focus is visible');
    await page.keyboard.press('Enter');
    t.equal(await activeId(page), 'main', 'skip link moves focus to main');
    const order: string[] = [];
    for (let i = 0; i < 5; i++) {
      await page.keyboard.press('Tab');
      order.push(
        await page.evaluate<string>(
          "(() => { const a = document.activeElement; return a ? a.id || (a.textContent || '').trim() || a.tagName : ''; })()",
        ),
      );
    }
    t.same(order, ['key-input', 'Use this key', 'q', 'Search', 'language']);
    await page.keyboard.press('Tab');
    t.equal(
      await page.evaluate<string>("document.activeElement.tagName + ' ' + document.activeElement.textContent"),
      'SUMMARY Search operators',
    );
    // Labels: every form control has an accessible name.
    const unnamed = await page.evaluate<number>(
      `[...document.querySelectorAll('input, textarea, select')].filter((e) => !(e.id && document.querySelector('label[for="' + e.id + '"]')) && !e.getAttribute('aria-label')).length`,
    );
    t.equal(unnamed, 0, 'every control is labelled');
  });

  t.test('readable on a phone: no horizontal scrolling', async (t) => {
    const { page } = await browser.newPage({ viewport: { width: 360, height: 740 } });
    await page.goto(svc.url + '/?q=school');
    await page.locator('#key-input').fill(svc.key);
    await page.locator('#key-input').press('Enter');
    await statusStartsWith(page, 'Results');
    t.ok(await page.locator('#pager').isHidden(), 'one short page, nothing capped: no pager');
    for (const path of ['/?q=school', '/manage-url', '/webmasters']) {
      if (path !== '/?q=school') await page.goto(svc.url + path);
      const { scroll, client } = await page.evaluate<{ scroll: number; client: number }>(
        '({ scroll: document.documentElement.scrollWidth, client: document.documentElement.clientWidth })',
      );
      t.ok(scroll <= client, `${path}: content fits ${client}px (scrollWidth ${scroll})`);
      await browser.screenshot(page, `phone${path.replace(/[^a-z]+/g, '-')}`);
    }
  });

  t.test('issue 6: a recrawl request reaches a final status on screen', async (t) => {
    const { page } = await openWithKey('/');
    // The key is asked once per tab: navigating to /manage-url keeps it.
    await page.getByRole('link', { name: 'Manage a URL' }).click();
    await page.waitForURL(/\/manage-url$/);
    t.ok(await page.locator('#key-present').isVisible(), 'no second key prompt');
    await page.getByLabel('Recrawl').check();
    const target = svc.web.url('ville-quebec.test', '/bibliotheques/gabrielle-roy.html');
    await page.getByLabel('URL', { exact: true }).fill(target);
    await page.getByRole('button', { name: 'Send request' }).click();
    await page.locator('#request-panel').waitFor({ state: 'visible' });
    const id = (await page.locator('#request-id').textContent()) ?? '';
    t.match(id, /^req_[A-Za-z0-9_-]+$/, 'request id shown');
    t.equal(await page.locator('#request-type').textContent(), 'Recrawl');
    t.equal(await page.locator('#request-url').textContent(), target);
    t.match(await page.locator('#request-notice').textContent(), /guarantees neither indexing nor position/);

    await page.locator('#request-status[data-status="completed"], #request-status[data-status="failed"]').waitFor({ timeout: 45_000 });
    t.equal(await page.locator('#request-status').getAttribute('data-status'), 'completed');
    const outcome = (await page.locator('#request-outcome').getAttribute('data-outcome')) ?? '';
    t.ok(['unchanged', 'updated', 'indexed'].includes(outcome), `outcome ${outcome} for a live indexed page`);
    t.match(await page.locator('#request-live').textContent(), /^Final status: completed — /);
    const history = await page.locator('#request-history li').allTextContents();
    t.ok(history.length >= 3, `history shows the steps (${history.join(' | ')})`);
    t.match(history[0], /received$/);
    t.match(history[history.length - 1], /completed/);

    const api = await fetch(`${svc.url}/api/v1/requests/${id}`, { headers: { authorization: `Bearer ${svc.key}` } });
    const body = (await api.json()) as { request: { status: string; outcome: string } };
    t.same({ status: body.request.status, outcome: body.request.outcome }, { status: 'completed', outcome }, 'screen = API');
    await browser.screenshot(page, 'manage-url-recrawl');

    // The request id (never the key) is in the address: a reload shows the same request again.
    t.match(page.url(), new RegExp(`/manage-url\\?request=${id}$`));
    await page.reload();
    await page.locator('#request-id', { hasText: id }).waitFor();
    t.equal(await page.locator('#request-status').getAttribute('data-status'), 'completed', 'status shown after reload');
    t.notOk(page.url().includes(svc.key));
  });

  t.test('exact removal: done for a page now 410, refused with the reason for a live page', async (t) => {
    const { page } = await openWithKey('/manage-url');
    const gone = svc.web.url('gen-2.test', '/p/11.html');
    svc.web.setPage('gen-2.test', '/p/11.html', { status: 410, body: 'gone' });
    t.teardown(() => svc.web.setPage('gen-2.test', '/p/11.html', null));
    const live = svc.web.url('gen-2.test', '/p/9.html');
    const finalOf = async (
      url: string,
    ): Promise<{ status: string | null; outcome: string | null; reason: string | null; live: string | null }> => {
      await page.getByLabel('Exact removal').check();
      await page.getByLabel('URL', { exact: true }).fill(url);
      await page.getByRole('button', { name: 'Send request' }).click();
      await page.locator('#request-url', { hasText: url }).waitFor();
      await page.locator('#request-status[data-status="completed"], #request-status[data-status="failed"]').waitFor({ timeout: 45_000 });
      return {
        status: await page.locator('#request-status').getAttribute('data-status'),
        outcome: await page.locator('#request-outcome').getAttribute('data-outcome'),
        reason: await page.locator('#request-reason').textContent(),
        live: await page.locator('#request-live').textContent(),
      };
    };
    const removed = await finalOf(gone);
    t.same({ status: removed.status, outcome: removed.outcome }, { status: 'completed', outcome: 'removed' }, 'a 410 page is removed');
    t.match(removed.live, /^Final status: completed — removed/);
    await browser.screenshot(page, 'manage-url-removal-done');

    const refused = await finalOf(live);
    t.same(
      { status: refused.status, outcome: refused.outcome },
      { status: 'completed', outcome: 'rejected' },
      'a live page is not removed',
    );
    t.not(refused.reason, '—', `the reason is shown: ${refused.reason}`);
    t.match(refused.live, /^Final status: completed — rejected \(.+\)\.$/);
    await browser.screenshot(page, 'manage-url-removal-refused');
  });

  t.test("issue 6: an invalid URL shows the API's error message", async (t) => {
    const { page } = await openWithKey('/manage-url');
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
    t.equal(api.status, 400);
    const problem = (await api.json()) as { title: string; detail: string; code: string; errors: { path: string[]; issue: string }[] };
    t.equal(problem.code, 'invalid_url');
    t.equal(await box.locator('.problem-title').textContent(), `${problem.title} (400, ${problem.code})`);
    t.equal(await box.locator('.problem-detail').textContent(), problem.detail, 'the API detail, verbatim');
    t.same(
      await box.locator('.problem-errors li').allTextContents(),
      problem.errors.map((e) => `${e.path.join('.')}: ${e.issue}`).filter((l) => l !== problem.detail),
      'each field error shown, none repeating the detail (issue 46)',
    );
    t.ok(await page.locator('#request-panel').isHidden(), 'no request shown');
    t.equal(await activeId(page), 'manage-error', 'focus moves to the error');
    await browser.screenshot(page, 'manage-url-invalid');
  });

  t.test('issue 6: a wrong key is refused clearly and forgotten', async (t) => {
    const wrong = 'svc_wrongkey_0000000000000000000000';
    const { page } = await browser.newPage();
    await page.goto(svc.url + '/?q=school');
    t.match(await page.locator('#search-status').textContent(), /Enter your API key/, 'asks for the key first');
    await page.locator('#key-input').fill(wrong);
    await page.getByRole('button', { name: 'Use this key' }).click();
    const msg = page.locator('#key-message');
    await msg.waitFor({ state: 'visible' });
    t.match(await msg.textContent(), /^Key refused: the service answered 401/);
    t.equal(await storedKey(page), null, 'key removed from sessionStorage');
    t.ok(await page.locator('#key-missing').isVisible(), 'asks for a key again');
    t.match(await page.locator('#search-error').textContent(), /Key refused/);
    t.equal(await page.locator('#results li').count(), 0);
    t.ok(await page.locator('#pager').isHidden(), 'no pager without results');
    t.equal(await activeId(page), 'key-input', 'focus back on the key field');
    await browser.screenshot(page, 'wrong-key');

    // Same on the request form.
    const m = await openWithKey('/manage-url', wrong);
    await m.page.getByLabel('URL', { exact: true }).fill(svc.web.url('ville-quebec.test', '/'));
    await m.page.getByRole('button', { name: 'Send request' }).click();
    await m.page.locator('#key-message').waitFor({ state: 'visible' });
    t.match(await m.page.locator('#manage-error').textContent(), /Key refused/);
    t.equal(await activeId(m.page), 'key-input', 'focus on the key field, not the error');
    t.equal(await storedKey(m.page), null);
  });

  t.test('CSP holds: no violations, no console errors, no third-party requests', async (t) => {
    // Every page of the three, freshly loaded in one more tab too.
    const rec = await browser.newPage();
    for (const path of ['/', '/manage-url', '/webmasters']) {
      await rec.page.goto(svc.url + path);
      t.same(await rec.cspViolations(), [], `${path}: no CSP violation`);
    }
    for (const r of browser.pages) {
      if (r.page.isClosed()) continue;
      t.same(await r.cspViolations(), [], `${r.page.url()}: no CSP violation event`);
      t.same(
        r.console.filter((c) => /Content Security Policy|Refused to/i.test(c)),
        [],
        'no CSP console message',
      );
      t.same(
        r.console.filter((c) => c.startsWith('error:') && !/status of 40[01]/.test(c)),
        [],
        'no console errors besides the expected 400/401 answers',
      );
      t.same(r.errors, [], 'no uncaught page errors');
      t.same(
        r.requests.filter((u) => !u.startsWith(svc.url + '/')),
        [],
        'every request stays on the service origin',
      );
      t.notOk(
        r.requests.some((u) => u.includes(svc.key)),
        'the key is never in a URL',
      );
    }
    t.notOk(
      svc.logLines.some((l) => l.includes(svc.key)),
      'the key is never logged',
    );

    // Control: the detector does see a violation when the page tries inline code.
    const control = await browser.newPage();
    await control.page.goto(svc.url + '/webmasters');
    await control.page.evaluate(`(() => {
      const s = document.createElement('script');
      s.textContent = 'window.__inlineRan = true';
      document.body.append(s);
      const st = document.createElement('style');
      st.textContent = 'body { color: red }';
      document.head.append(st);
    })()`);
    await control.page.waitForFunction(() => ((globalThis as unknown as PageGlobals).__csp ?? []).length >= 2);
    const v = await control.cspViolations();
    t.ok(
      v.some((x) => x.startsWith('script-src')),
      'inline script blocked',
    );
    t.ok(
      v.some((x) => x.startsWith('style-src')),
      'inline style blocked',
    );
    t.equal(await control.page.evaluate<boolean>('window.__inlineRan === true'), false, 'inline script did not run');
    await control.page.close();
  });
}
