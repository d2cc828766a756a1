// Issue 13, the pages in a real browser (headless Debian Chromium): a corpus query whose results all come from one
// host says the page lists at most 2 per site and offers the rest as an action; corpus documents say they were
// imported, not fetched by SvcBot; the help says OR is not an operator; "Manage a URL" says plainly that it needs
// a key and what a webmaster without one does; /webmasters shows this deployment's own user-agent URL.
import t from 'tap';
import { corpusHost, corpusPage } from '../../cli/ingest.js';
import { makePage } from '../helpers/page-input.js';
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

  // Nine documents of one corpus, imported through the same path as `svc ingest`.
  const { index } = svc.services.deps;
  const { documents } = svc.services.local;
  const importedAt = '2026-03-04T05:06:07.000Z';
  const docs = Array.from({ length: 9 }, (_, i) => ({
    _id: `doc-${i}`,
    title: `Glacier retreat study ${i}`,
    text: `Glacier retreat in the Rocky Mountains was measured in study number ${i} with repeated surveys of ice thickness.`,
  }));
  await index.upsertPages(
    docs.map((d) => corpusPage(d, documents.allocate(`corpus:glaciers/${d._id}`, corpusHost('glaciers', d._id)), 'glaciers', importedAt)),
  );
  // Nine pages of one web host about something else.
  await index.upsertPages(
    Array.from({ length: 9 }, (_, i) =>
      makePage(
        documents.allocate(`https://avalanche.example/report-${i}`, 'avalanche.example'),
        'avalanche.example',
        [`Avalanche bulletin ${i}: avalanche danger and snowpack in the Rocky Mountains.`],
        {
          title: `Avalanche bulletin ${i}`,
          url: `https://avalanche.example/report-${i}`,
        },
      ),
    ),
  );
  await index.optimize();

  const openWithKey = async (path: string): Promise<PageRecord> => {
    const rec = await browser.newPage();
    await rec.page.goto(svc.url + path);
    await rec.page.locator('#key-input').fill(svc.key);
    await rec.page.getByRole('button', { name: 'Use this key' }).click();
    return rec;
  };

  t.test(
    'issue 13: a one-host query explains the 2-per-site cap and offers the rest as an action; corpus records are separate sources',
    async (t) => {
      const host = await openWithKey('/?q=avalanche+bulletin');
      await host.page.waitForFunction(
        () =>
          (
            (
              globalThis as unknown as { document: { getElementById(id: string): { textContent: string | null } | null } }
            ).document.getElementById('search-status')?.textContent ?? ''
          ).startsWith('Results'),
        undefined,
        { timeout: 20_000 },
      );
      t.match(
        (await host.page.locator('#search-status').textContent()) ?? '',
        /^Results 1–2 for “avalanche bulletin” · ranking: \S+ · at most 2 per site on a page: 7 more one click away$/,
      );
      const more = host.page.locator('.more-from-host a');
      t.equal(await more.count(), 1);
      t.equal(await more.textContent(), 'Show 7 more from avalanche.example');
      await more.click();
      await host.page.waitForURL(/site%3Aavalanche\.example/);
      await host.page.waitForFunction(
        () =>
          (
            (
              globalThis as unknown as { document: { getElementById(id: string): { textContent: string | null } | null } }
            ).document.getElementById('search-status')?.textContent ?? ''
          ).startsWith('Results 1–9 '),
        undefined,
        { timeout: 20_000 },
      );
      t.equal(await host.page.locator('#results li.result').count(), 9, 'the action shows all nine');

      // issue 15: every record of a corpus is its own source, so the cap does not hide eight of nine records.
      const { page } = await openWithKey('/?q=glacier+retreat');
      await page.waitForFunction(
        () =>
          (
            (
              globalThis as unknown as { document: { getElementById(id: string): { textContent: string | null } | null } }
            ).document.getElementById('search-status')?.textContent ?? ''
          ).startsWith('Results'),
        undefined,
        { timeout: 20_000 },
      );
      t.match((await page.locator('#search-status').textContent()) ?? '', /^Results 1–9 for “glacier retreat” · ranking: \S+$/);
      t.equal(await page.locator('#results li.result').count(), 9);

      const prov = await page.locator('#results li.result .provenance').first().textContent();
      t.match(
        prov,
        /^Provenance: from the corpus glaciers, imported 2026-03-04 05:06:07 UTC \(not crawled; no page dates\) · excerpt shown/,
      );
      t.notMatch(prov, /SvcBot|dates from/, 'a corpus document is not said to be fetched by the crawler');
      t.match(await page.locator('#results li.result .result-dates').first().textContent(), /^Imported 2026-03-04$/);
      await browser.screenshot(page, 'issue13-corpus-cap');
    },
  );

  t.test('issue 13: the operator help says OR is not an operator', async (t) => {
    const { page } = await openWithKey('/');
    await page.locator('#operator-help summary').click();
    t.match(
      await page.locator('#no-or-operator').textContent(),
      /There is no OR operator: OR, AND and NOT are\s+searched as ordinary words/,
    );
  });

  t.test('issue 13: Manage a URL says it needs a key and what a webmaster without one does', async (t) => {
    const rec = await browser.newPage();
    await rec.page.goto(svc.url + '/manage-url');
    const who = (await rec.page.locator('#who-note').textContent()) ?? '';
    t.match(who, /This form needs an API key\./);
    t.match(who, /There is no public,\s+key-less form/);
    t.equal(await rec.page.locator('#who-note a').getAttribute('href'), '/webmasters#changes');
    await rec.page.goto(svc.url + '/webmasters');
    t.match(await rec.page.locator('#changes').textContent(), /Without an API key you need no form/);
  });

  t.test("issue 13: /webmasters shows this deployment's own user-agent URL (configurable), not a placeholder", async (t) => {
    const rec = await browser.newPage();
    await rec.page.goto(svc.url + '/webmasters');
    const ua = await rec.page.locator('#ua-header').textContent();
    t.equal(ua, `SvcBot/<version> (+${svc.config.crawlerInfoUrl})`);
    t.equal(svc.config.crawlerInfoUrl, 'http://127.0.0.1:0/webmasters', 'derived from the configured listen address');
    t.notMatch(ua, /svc\.invalid/);
  });
}
