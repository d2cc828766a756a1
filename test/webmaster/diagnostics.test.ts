/**
 * Issue 11: diagnostics of a verified property equal what the index, the registry and the frontier hold after a
 * real crawl of a fixture host (alpha.test, with robots rules, a sitemap, noindex and snippet directives, canonical
 * links, JSON-LD and a cross-host redirect). Expected values are read straight from those stores here.
 */
import t from 'tap';
import { join } from 'node:path';
import { loadConfig } from '../../config.js';
import { createCrawler } from '../../crawler/crawler.js';
import { hostOf } from '../../crawler/url.js';
import { startTestWeb } from '../../fixtures/test-web/index.js';
import { PassageIndex } from '../../index/store.js';
import { openStateDb } from '../../state/db.js';
import { EntityStore } from '../../state/entities.js';
import { Hosts } from '../../state/hosts.js';
import { sqliteRepositories } from '../../state/repos/sqlite.js';
import { propertyDiagnostics } from '../../webmaster/diagnostics.js';
import { testFetcher } from '../fixtures/net-guard.js';

t.test('issue 11: diagnostics numbers equal what the index and frontier hold for a crawled fixture host', async (t) => {
  const web = await startTestWeb({ generatedHosts: 1, generatedPages: 2 });
  t.teardown(() => web.close());
  const dir = t.testdir();
  const config = loadConfig({ env: {}, flags: { dataDir: dir, resolve: web.pins, crawlAllowLoopback: true, crawlGapMs: 10 } });
  const db = openStateDb(join(dir, 'state.sqlite'));
  const index = await PassageIndex.open({ dir: join(dir, 'lance'), embedder: null });
  const crawler = createCrawler({
    config,
    repos: sqliteRepositories(db, { defaultGapMs: config.crawlGapMs }),
    sink: index,
    entities: new EntityStore(db),
    fetcher: testFetcher(web).fetcher,
    maxCrawlDelayMs: 50,
    admit: (url) => hostOf(url) === 'alpha.test',
    frontier: { retryBaseMs: 20, retryMaxMs: 100, maxAttempts: 2 },
  });
  t.teardown(async () => {
    await crawler.stop();
    await index.close();
    db.close();
  });
  await crawler.enqueue(web.url('alpha.test', '/'), { priority: 'submitted', reason: 'seed' });
  for (const p of [
    '/meta/noindex.html',
    '/meta/nosnippet.html',
    '/meta/max-snippet-50.html',
    '/json-ld.html',
    '/canonical.html',
    '/private/secret.html',
  ])
    await crawler.enqueue(web.url('alpha.test', p), { priority: 'submitted', reason: 'seed' });
  await crawler.runUntilIdle({ timeoutMs: 40_000, idleHorizonMs: 500 });

  const repos = sqliteRepositories(db);
  const { property } = await repos.webmaster.createProperty({
    account: 'acct_x',
    kind: 'host',
    name: 'alpha.test',
    at: new Date().toISOString(),
  });
  const d = await propertyDiagnostics({ repos, index }, property);

  // URL scope: each URL once, from the registry and the frontier.
  const docs = db.prepare(`SELECT page_ref, url, status, reason FROM documents WHERE host = 'alpha.test'`).all() as {
    page_ref: number;
    url: string;
    status: string;
    reason: string | null;
  }[];
  const indexed = docs.filter((x) => x.status === 'indexed');
  t.equal(d.hosts.join(), 'alpha.test');
  t.equal(d.urls.indexed, indexed.length);
  t.ok(d.urls.indexed >= 5, `pages indexed (${d.urls.indexed})`);
  const pagesInIndex = (await Promise.all(indexed.map((x) => index.getPage(x.page_ref)))).filter((p) => p !== null).length;
  t.equal(pagesInIndex, d.urls.indexed, 'every indexed URL is a page of the index');
  t.equal(d.urls.known, d.urls.indexed + d.urls.excluded.total + d.urls.queued + d.urls.retrying + d.urls.dead, 'known adds up');
  const frontierPages = (
    db.prepare(`SELECT count(*) AS n FROM frontier WHERE host = 'alpha.test' AND kind = 'page'`).get() as { n: number }
  ).n;
  const urlsKnown = (
    db
      .prepare(
        `SELECT count(*) AS n FROM (SELECT url FROM documents WHERE host = 'alpha.test' UNION SELECT url FROM frontier WHERE host = 'alpha.test' AND kind = 'page')`,
      )
      .get() as { n: number }
  ).n;
  t.equal(d.urls.known, urlsKnown);
  t.ok(frontierPages <= urlsKnown);
  t.ok((d.urls.excluded.byReason.robots ?? 0) >= 1, 'robots exclusions (/private/secret.html)');
  t.equal(d.urls.excluded.byReason.noindex, docs.filter((x) => x.status === 'excluded' && /noindex/.test(x.reason ?? '')).length);
  t.equal(d.directives.noindex, d.urls.excluded.byReason.noindex);
  t.equal(d.urls.queued + d.urls.retrying, 0, 'the crawl finished');

  // Status codes and sitemaps as the frontier holds them.
  const statuses = db
    .prepare(`SELECT last_status AS s, count(*) AS n FROM frontier WHERE host = 'alpha.test' AND kind = 'page' GROUP BY last_status`)
    .all() as { s: number | null; n: number }[];
  t.same(d.statusCodes, Object.fromEntries(statuses.map((r) => [r.s === null ? 'none' : String(r.s), r.n])));
  t.ok((d.statusCodes['200'] ?? 0) >= d.urls.indexed);
  const sitemaps = db.prepare(`SELECT url FROM frontier WHERE host = 'alpha.test' AND kind = 'sitemap' ORDER BY url`).all() as {
    url: string;
  }[];
  t.same(
    d.sitemaps.map((s) => s.url),
    sitemaps.map((s) => s.url),
  );
  t.ok(
    d.sitemaps.some((s) => s.url.endsWith('/sitemap.xml') && s.state === 'done' && s.lastStatus === 200),
    'robots.txt sitemap fetched',
  );

  // Canonical groups and snippet directives, from the index's stored pages.
  const stored = (await Promise.all(indexed.map((x) => index.getPage(x.page_ref)))).filter((p) => p !== null);
  const elsewhere = stored.filter((p) => p.canonicalUrl !== null && p.canonicalUrl !== p.url).length;
  t.equal(d.canonical.pointingElsewhere, elsewhere);
  t.ok(elsewhere >= 1, '/canonical.html points at /page-1.html');
  t.match(d.canonical.groups, [{ canonical: web.url('alpha.test', '/page-1.html'), pages: Number }]);
  t.equal(d.directives.nosnippet, stored.filter((p) => p.snippet.nosnippet).length);
  t.equal(d.directives.maxSnippet, stored.filter((p) => !p.snippet.nosnippet && p.snippet.maxSnippet !== null).length);
  t.ok(d.directives.nosnippet >= 1 && d.directives.maxSnippet >= 1);

  // Freshness, structured data with provenance, link aggregates.
  const fetchedAt = (db.prepare(`SELECT max(last_fetched) AS m FROM documents WHERE host = 'alpha.test'`).get() as { m: string }).m;
  t.equal(d.freshness.lastFetchedAt, fetchedAt);
  const entities = db
    .prepare(`SELECT count(*) AS n FROM entity_sources s JOIN documents d ON d.page_ref = s.page_ref WHERE d.host = 'alpha.test'`)
    .get() as { n: number };
  t.equal(d.structuredData.entities.length, entities.n);
  t.ok(
    d.structuredData.entities.some((e) => e.pageUrl === web.url('alpha.test', '/json-ld.html')),
    'the Organization, with the page it came from',
  );
  const facts = new Hosts(db).get('alpha.test');
  t.same(d.links, { outbound: facts?.outboundLinks ?? 0, inboundHosts: facts?.inboundHosts ?? 0 });
});

t.test(
  'issue 11: a page with one broken and one valid JSON-LD block: diagnostics report the parse error with provenance, as the store holds it',
  async (t) => {
    const web = await startTestWeb({ generatedHosts: 0 });
    t.teardown(() => web.close());
    const dir = t.testdir();
    const config = loadConfig({ env: {}, flags: { dataDir: dir, resolve: web.pins, crawlAllowLoopback: true, crawlGapMs: 10 } });
    const db = openStateDb(join(dir, 'state.sqlite'));
    const index = await PassageIndex.open({ dir: join(dir, 'lance'), embedder: null });
    const repos = sqliteRepositories(db, { defaultGapMs: config.crawlGapMs });
    const crawler = createCrawler({
      config,
      repos,
      sink: index,
      // The entity sink the service wires: the repositories' EntitiesRepo.
      entities: repos.entities!,
      fetcher: testFetcher(web).fetcher,
      maxCrawlDelayMs: 50,
      admit: (url) => hostOf(url) === 'ville-quebec.test',
    });
    t.teardown(async () => {
      await crawler.stop();
      await index.close();
      db.close();
    });
    const broken = web.url('ville-quebec.test', '/bibliotheques/json-casse.html');
    await crawler.enqueue(broken, { priority: 'submitted', reason: 'seed' });
    await crawler.runUntilIdle({ timeoutMs: 30_000, idleHorizonMs: 300 });

    const stored = db
      .prepare('SELECT page_ref, page_url, host, reason, blocks, observed_at FROM entity_parse_errors ORDER BY page_url, reason')
      .all() as {
      page_ref: number;
      page_url: string;
      host: string;
      reason: string;
      blocks: number;
      observed_at: string;
    }[];
    const pageRef = (db.prepare('SELECT page_ref FROM documents WHERE url = ?').get(broken) as { page_ref: number }).page_ref;
    t.equal(stored.length, 1, 'the other pages of the host parsed');
    t.match(
      stored,
      [{ page_ref: pageRef, page_url: broken, host: 'ville-quebec.test', reason: 'invalid_json', blocks: 1 }],
      'one invalid block on that page',
    );
    const { property } = await repos.webmaster.createProperty({
      account: 'acct_q',
      kind: 'host',
      name: 'ville-quebec.test',
      at: new Date().toISOString(),
    });
    const d = await propertyDiagnostics({ repos, index }, property);
    t.same(
      d.structuredData.jsonLdParseErrors,
      stored.map((r) => ({
        pageRef: r.page_ref,
        url: r.page_url,
        host: r.host,
        reason: r.reason,
        blocks: r.blocks,
        observedAt: r.observed_at,
      })),
      'diagnostics equal what the store holds',
    );
    t.same(d.structuredData.parseErrors, [], 'the page itself parsed: not a parse_error document');
    t.ok(
      d.structuredData.entities.some((e) => e.name === "Place de l'Hôtel-de-Ville" && e.pageUrl === broken),
      'the valid block still gives its entity',
    );
    t.notMatch(JSON.stringify(d.structuredData.jsonLdParseErrors), /Vieux-Port|schema\.org/, 'no page text');
  },
);
