/**
 * Issue 11: one crawl of the fixture host alpha.test (robots rules, a sitemap, noindex and snippet directives,
 * canonical links, JSON-LD) and one set of checks that a property's diagnostics equal what the state and the index
 * hold, shared by the SQLite and the PostgreSQL test. Expected values are read with SQL straight from the store
 * (`rows`), never through the code under test.
 */
import type { Test } from 'tap';
import type { Config } from '../../config.js';
import { createCrawler } from '../../crawler/crawler.js';
import { hostOf } from '../../crawler/url.js';
import type { TestWeb } from '../../fixtures/test-web/index.js';
import type { ServedIndex } from '../../index/shards/sharded-index.js';
import type { Repositories } from '../../state/repos/types.js';
import { propertyDiagnostics } from '../../webmaster/diagnostics.js';
import { testFetcher } from '../fixtures/net-guard.js';

const SEEDS = [
  '/',
  '/meta/noindex.html',
  '/meta/nosnippet.html',
  '/meta/max-snippet-50.html',
  '/json-ld.html',
  '/canonical.html',
  '/private/secret.html',
];

/** Runs a statement on the backend under test (`?` placeholders are not used: the statements take no parameters). */
export type Rows = (sql: string) => Promise<Record<string, unknown>[]>;

/** Crawls alpha.test through `repos` into `index`, then checks the diagnostics of a host property for it. */
export async function crawlAndCheckDiagnostics(
  t: Test,
  o: { config: Config; repos: Repositories; index: ServedIndex; web: TestWeb; rows: Rows },
): Promise<void> {
  const { repos, index, web, rows } = o;
  const crawler = createCrawler({
    config: o.config,
    repos,
    sink: index,
    entities: repos.entities!,
    fetcher: testFetcher(web).fetcher,
    maxCrawlDelayMs: 50,
    admit: (u) => hostOf(u) === 'alpha.test',
    frontier: { retryBaseMs: 20, retryMaxMs: 100, maxAttempts: 2 },
  });
  t.teardown(() => crawler.stop());
  for (const p of SEEDS) await crawler.enqueue(web.url('alpha.test', p), { priority: 'submitted', reason: 'seed' });
  await crawler.runUntilIdle({ timeoutMs: 40_000, idleHorizonMs: 500 });

  const { property } = await repos.webmaster.createProperty({
    account: 'acct_x',
    kind: 'host',
    name: 'alpha.test',
    at: new Date().toISOString(),
  });
  const d = await propertyDiagnostics({ repos, index }, property);
  const one = async (sql: string) => (await rows(sql))[0]!;

  // URL scope: each URL once, from the registry and the frontier.
  t.equal(d.hosts.join(), 'alpha.test');
  const docs = (await rows(`SELECT page_ref, url, status, reason FROM documents WHERE host = 'alpha.test'`)) as {
    page_ref: number | string;
    status: string;
    reason: string | null;
  }[];
  const indexed = docs.filter((x) => x.status === 'indexed');
  t.equal(d.urls.indexed, indexed.length);
  t.ok(d.urls.indexed >= 5, `pages indexed (${d.urls.indexed})`);
  const known = await one(
    `SELECT count(*) AS n FROM (SELECT url FROM documents WHERE host = 'alpha.test' UNION SELECT url FROM frontier WHERE host = 'alpha.test' AND kind = 'page') u`,
  );
  t.equal(d.urls.known, Number(known.n));
  t.equal(d.urls.known, d.urls.indexed + d.urls.excluded.total + d.urls.queued + d.urls.retrying + d.urls.dead, 'known adds up');
  t.ok((d.urls.excluded.byReason.robots ?? 0) >= 1, 'robots exclusions (/private/secret.html)');
  t.equal(d.urls.excluded.byReason.noindex, docs.filter((x) => x.status === 'excluded' && /noindex/.test(x.reason ?? '')).length);
  t.equal(d.directives.noindex, d.urls.excluded.byReason.noindex);
  t.equal(d.urls.queued + d.urls.retrying, 0, 'the crawl finished');

  // Status codes and sitemaps as the frontier holds them.
  const statuses = await rows(
    `SELECT last_status AS s, count(*) AS n FROM frontier WHERE host = 'alpha.test' AND kind = 'page' GROUP BY last_status`,
  );
  t.same(d.statusCodes, Object.fromEntries(statuses.map((r) => [r.s === null ? 'none' : String(r.s), Number(r.n)])));
  t.ok((d.statusCodes['200'] ?? 0) >= d.urls.indexed);
  const sitemaps = await rows(`SELECT url FROM frontier WHERE host = 'alpha.test' AND kind = 'sitemap' ORDER BY url`);
  t.same(
    d.sitemaps.map((s) => s.url),
    sitemaps.map((s) => s.url),
  );
  t.ok(
    d.sitemaps.some((s) => s.url.endsWith('/sitemap.xml') && s.state === 'done' && s.lastStatus === 200),
    'robots.txt sitemap fetched',
  );

  // Canonical groups and snippet directives, from the index's stored pages.
  const stored = (await Promise.all(indexed.map((x) => index.getPage(Number(x.page_ref))))).filter((p) => p !== null);
  t.equal(stored.length, d.urls.indexed, 'every indexed URL is a page of the index');
  const elsewhere = stored.filter((p) => p.canonicalUrl !== null && p.canonicalUrl !== p.url).length;
  t.equal(d.canonical.pointingElsewhere, elsewhere);
  t.ok(elsewhere >= 1, '/canonical.html points at /page-1.html');
  t.match(d.canonical.groups, [{ canonical: web.url('alpha.test', '/page-1.html'), pages: Number }]);
  t.equal(d.directives.nosnippet, stored.filter((p) => p.snippet.nosnippet).length);
  t.equal(d.directives.maxSnippet, stored.filter((p) => !p.snippet.nosnippet && p.snippet.maxSnippet !== null).length);
  t.ok(d.directives.nosnippet >= 1 && d.directives.maxSnippet >= 1);

  // Freshness, structured data with provenance, link aggregates.
  t.equal(d.freshness.lastFetchedAt, (await one(`SELECT max(last_fetched) AS m FROM documents WHERE host = 'alpha.test'`)).m);
  const entities = await one(
    `SELECT count(*) AS n FROM entity_sources s JOIN documents d ON d.page_ref = s.page_ref WHERE d.host = 'alpha.test'`,
  );
  t.equal(d.structuredData.entities.length, Number(entities.n));
  t.ok(
    d.structuredData.entities.some((e) => e.pageUrl === web.url('alpha.test', '/json-ld.html')),
    'the Organization, with the page it came from',
  );
  const outbound = await one(`SELECT sum(links) AS n FROM page_host_links WHERE from_host = 'alpha.test' AND to_host <> 'alpha.test'`);
  const inbound = await one(
    `SELECT count(DISTINCT from_host) AS n FROM page_host_links WHERE to_host = 'alpha.test' AND from_host <> 'alpha.test'`,
  );
  t.same(d.links, { outbound: Number(outbound.n ?? 0), inboundHosts: Number(inbound.n) });
}
