import t, { type Test } from 'tap';
import { join } from 'node:path';
import { loadConfig } from '../../config.js';
import { createLogger } from '../../logger.js';
import { openStateDb } from '../../state/db.js';
import { sqliteEntities, sqliteRepositories } from '../../state/repos/sqlite.js';
import { Documents } from '../../state/documents.js';
import { EntityStore } from '../../state/entities.js';
import { Hosts } from '../../state/hosts.js';
import { CrawlFrontier } from '../../crawler/crawl-frontier.js';
import { PassageIndex } from '../../index/engines/lance/store.js';
import { callTool } from '../../tools/call-tool.js';
import type { ServiceDeps } from '../../tools/deps.js';
import { normalizeHostParam, siteTool } from '../../tools/site.js';
import { extractPage } from '../../crawler/extract.js';
import type { SvcError } from '../../errors.js';

async function setup(t: Test) {
  const dir = t.testdir();
  const db = openStateDb(join(dir, 'state.sqlite'));
  t.teardown(() => db.close());
  // An empty index: these pages are known to the state only, so none of them is a near-copy in the index.
  const index = await PassageIndex.open({ dir: join(dir, 'index'), embedder: null });
  t.teardown(() => index.close());
  const documents = new Documents(db);
  const deps: ServiceDeps = {
    config: loadConfig({ env: {}, flags: { dataDir: dir } }),
    repos: sqliteRepositories(db),
    log: createLogger({ level: 'silent' }),
    now: () => new Date(),
    index,
    entities: sqliteEntities(new EntityStore(db)),
    crawler: null,
  };
  return { db, documents, ctx: { deps, caller: { keyId: 'k', digest: 'd' } } };
}

t.test('host parameter normal form', async (t) => {
  t.equal(normalizeHostParam('WWW.Example.CA'), 'www.example.ca');
  t.equal(normalizeHostParam('example.ca.'), 'example.ca');
  t.equal(normalizeHostParam('bücher.example'), 'xn--bcher-kva.example');
  t.equal(normalizeHostParam('192.0.2.1'), '192.0.2.1');
  for (const bad of [
    '',
    'http://example.ca',
    'example.ca/path',
    'example.ca:8080',
    'user@example.ca',
    'exa mple.ca',
    '-bad.example',
    'a..b',
    'bad_host!',
    'x'.repeat(254),
  ]) {
    t.equal(normalizeHostParam(bad), null, JSON.stringify(bad));
  }
});

t.test('svc_site: malformed → 400 invalid_host, never seen → 404', async (t) => {
  const { ctx } = await setup(t);
  const e1 = (await callTool(siteTool, { host: 'http://example.ca/' }, ctx).catch((e: SvcError) => e)) as SvcError;
  t.equal(e1.code, 'invalid_host');
  t.equal(e1.status, 400);
  const e2 = (await callTool(siteTool, { host: 'unseen.example.ca' }, ctx).catch((e: SvcError) => e)) as SvcError;
  t.equal(e2.code, 'not_found');
});

t.test('svc_site: robots, scope by reason, queue counts, links, freshness, llms.txt', async (t) => {
  const { db, documents, ctx } = await setup(t);
  const host = 'www.example.ca';
  const hosts = new Hosts(db);
  hosts.recordRobots(host, {
    status: 'ok',
    httpStatus: 200,
    fetchedAt: '2026-03-01T00:00:00.000Z',
    rules: ['Disallow: /private/'],
    sitemaps: ['https://www.example.ca/sitemap.xml'],
    crawlDelaySec: 2,
  });
  hosts.recordLlms(host, { present: true, fetchedAt: '2026-03-01T00:01:00.000Z', title: 'Example', summary: 'A site', linkCount: 3 });
  hosts.recordCrawl(host, '2026-03-02T00:00:00.000Z');
  hosts.recordChangeInterval(host, 3_600_000, '2026-03-02T00:00:00.000Z');
  hosts.recordChangeInterval(host, 7_200_000, '2026-03-03T00:00:00.000Z');
  hosts.recordChangeInterval(host, 10_800_000, '2026-03-04T00:00:00.000Z');
  const a = documents.allocate('https://www.example.ca/a', host);
  const b = documents.allocate('https://www.example.ca/b', host);
  const c = documents.allocate('https://www.example.ca/c', host);
  const d = documents.allocate('https://www.example.ca/d', host);
  documents.recordIndexed(a, { contentHash: 'x', title: 'A', at: '2026-03-02T00:00:00.000Z' });
  documents.recordExcluded(b, 'excluded', 'noindex', '2026-03-02T00:00:00.000Z');
  documents.recordExcluded(c, 'excluded', 'noindex', '2026-03-02T00:00:00.000Z');
  documents.recordExcluded(d, 'gone', 'http_410', '2026-03-02T00:00:00.000Z');
  hosts.recordPageLinks(
    a,
    host,
    new Map([
      ['other.example.ca', 4],
      [host, 9],
    ]),
  );
  const other = documents.allocate('https://other.example.ca/', 'other.example.ca');
  hosts.recordPageLinks(other, 'other.example.ca', new Map([[host, 1]]));
  const frontier = new CrawlFrontier(ctx.deps.repos.frontier);
  await frontier.enqueue('https://www.example.ca/queued-1', { reason: 'link' });
  await frontier.enqueue('https://www.example.ca/queued-2', { reason: 'link' });
  await frontier.enqueue('https://www.example.ca/a', { reason: 'link' });

  const out = await callTool(siteTool, { host: 'WWW.EXAMPLE.CA' }, ctx);
  t.same(out, {
    host,
    robots: {
      status: 'ok',
      http_status: 200,
      fetched_at: '2026-03-01T00:00:00.000Z',
      rules: ['Disallow: /private/'],
      sitemaps: ['https://www.example.ca/sitemap.xml'],
      crawl_delay_seconds: 2,
    },
    // issue 16: each URL in one state — /a is indexed (its queued recrawl does not count it twice): 6 = 1 + 3 + 2.
    scope: {
      known: 6,
      indexed: 1,
      near_duplicates: 0,
      excluded: { total: 3, by_reason: { noindex: 2, gone: 1 } },
      queued: 2,
      retrying: 0,
      dead_lettered: 0,
    },
    links: { outbound: 4, inbound_hosts: 1 },
    freshness: {
      last_crawl_at: '2026-03-02T00:00:00.000Z',
      pages_fetched: 1,
      median_change_interval_seconds: 7200,
      change_intervals_observed: 3,
    },
    llms_txt: { present: true, fetched_at: '2026-03-01T00:01:00.000Z', title: 'Example', summary: 'A site', link_count: 3 },
    extraction: { pages_measured: 0, by_verdict: {}, thin_pages: [] },
  });
});

t.test('svc_site: how much main text each page yielded, and why the thin ones yielded little', async (t) => {
  const { db, ctx } = await setup(t);
  const host = 'app.example.ca';
  const hosts = new Hosts(db);
  hosts.recordCrawl(host, '2026-03-01T00:00:00.000Z');
  const prose = Array.from(
    { length: 4 },
    (_, i) => `<p>Paragraph ${i} of the guide, long enough, with clauses and commas, to be kept as text.</p>`,
  );
  const pages: [string, string, string][] = [
    [
      'https://app.example.ca/guide',
      `<html><body><nav><a href="/">Home</a></nav><article>${prose.join('')}</article></body></html>`,
      '2026-03-01T00:00:01.000Z',
    ],
    [
      'https://app.example.ca/dashboard',
      '<html><body><div id="root"></div><noscript>Enable JavaScript.</noscript><script src="/main.js"></script></body></html>',
      '2026-03-01T00:00:02.000Z',
    ],
    [
      'https://app.example.ca/soon',
      '<html><body><main><h1>Coming soon</h1><p>Check back later.</p></main></body></html>',
      '2026-03-01T00:00:03.000Z',
    ],
  ];
  for (const [url, html, at] of pages) hosts.recordExtraction(host, { url, ...extractPage(html, { url }).extraction, at });
  // A page extracted again keeps only its latest verdict.
  hosts.recordExtraction(host, {
    url: pages[0]![0],
    ...extractPage(pages[0]![1], { url: pages[0]![0] }).extraction,
    at: '2026-03-01T00:00:04.000Z',
  });

  const out = await callTool(siteTool, { host }, ctx);
  t.equal(out.extraction.pages_measured, 3);
  t.same(out.extraction.by_verdict, { ok: 1, script_rendered: 1, short_text: 1 });
  t.same(out.extraction.thin_pages, [
    { url: 'https://app.example.ca/soon', page_chars: 28, kept_chars: 28, verdict: 'short_text', extracted_at: '2026-03-01T00:00:03.000Z' },
    {
      url: 'https://app.example.ca/dashboard',
      page_chars: 0,
      kept_chars: 0,
      verdict: 'script_rendered',
      extracted_at: '2026-03-01T00:00:02.000Z',
    },
  ]);
});
