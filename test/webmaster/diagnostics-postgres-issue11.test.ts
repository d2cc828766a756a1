/**
 * Issue 11 on the fleet's backend: diagnostics of a verified property, with every state repository on a real
 * PostgreSQL (the harness's, loopback, temp dir), equal what PostgreSQL and the index hold after a real crawl of the
 * fixture host alpha.test (robots rules, a sitemap, noindex and snippet directives, canonical links, JSON-LD). The
 * expected values are read from the database with SQL here, not through the code under test.
 */
import t from 'tap';
import { join } from 'node:path';
import pg from 'pg';
import { loadConfig } from '../../config.js';
import { createCrawler } from '../../crawler/crawler.js';
import { hostOf } from '../../crawler/url.js';
import { startTestWeb } from '../../fixtures/test-web/index.js';
import { PassageIndex } from '../../index/store.js';
import { openPostgresRepositories } from '../../state/repos/postgres.js';
import { propertyDiagnostics } from '../../webmaster/diagnostics.js';
import { testFetcher } from '../fixtures/net-guard.js';
import { postgresUnavailable, startPostgres } from '../helpers/postgres-server.js';

const why = postgresUnavailable();
if (why) t.plan(0, why);
else {
  t.test('issue 11: diagnostics on PostgreSQL equal what the database and the index hold for a crawled fixture host', async (t) => {
    const server = await startPostgres();
    t.teardown(() => server.stop());
    const url = await server.createDatabase('diagnostics');
    const web = await startTestWeb({ generatedHosts: 1, generatedPages: 2 });
    t.teardown(() => web.close());
    const dir = t.testdir();
    const config = loadConfig({ env: {}, flags: { dataDir: dir, resolve: web.pins, crawlAllowLoopback: true, crawlGapMs: 10 } });
    const repos = await openPostgresRepositories(url, { defaultGapMs: config.crawlGapMs });
    const index = await PassageIndex.open({ dir: join(dir, 'lance'), embedder: null, hostIds: repos.hostIds });
    const crawler = createCrawler({
      config,
      repos,
      sink: index,
      entities: repos.entities!,
      fetcher: testFetcher(web).fetcher,
      maxCrawlDelayMs: 50,
      admit: (u) => hostOf(u) === 'alpha.test',
      frontier: { retryBaseMs: 20, retryMaxMs: 100, maxAttempts: 2 },
    });
    const sql = new pg.Client({ connectionString: url });
    await sql.connect();
    t.teardown(async () => {
      await crawler.stop();
      await index.close();
      await repos.close();
      await sql.end();
    });
    for (const p of [
      '/',
      '/meta/noindex.html',
      '/meta/nosnippet.html',
      '/meta/max-snippet-50.html',
      '/json-ld.html',
      '/canonical.html',
      '/private/secret.html',
    ])
      await crawler.enqueue(web.url('alpha.test', p), { priority: 'submitted', reason: 'seed' });
    await crawler.runUntilIdle({ timeoutMs: 40_000, idleHorizonMs: 500 });

    const { property } = await repos.webmaster.createProperty({
      account: 'acct_pg',
      kind: 'host',
      name: 'alpha.test',
      at: new Date().toISOString(),
    });
    const d = await propertyDiagnostics({ repos, index }, property);
    const rows = async <R extends pg.QueryResultRow>(text: string) => (await sql.query<R>(text)).rows;

    t.equal(d.hosts.join(), 'alpha.test');
    const docs = await rows<{ page_ref: string; url: string; status: string; reason: string | null }>(
      `SELECT page_ref, url, status, reason FROM documents WHERE host = 'alpha.test'`,
    );
    const indexed = docs.filter((x) => x.status === 'indexed');
    t.equal(d.urls.indexed, indexed.length);
    t.ok(d.urls.indexed >= 5, `pages indexed (${d.urls.indexed})`);
    const known = await rows<{ n: string }>(
      `SELECT count(*) AS n FROM (SELECT url FROM documents WHERE host = 'alpha.test' UNION SELECT url FROM frontier WHERE host = 'alpha.test' AND kind = 'page') u`,
    );
    t.equal(d.urls.known, Number(known[0]!.n));
    t.equal(d.urls.known, d.urls.indexed + d.urls.excluded.total + d.urls.queued + d.urls.retrying + d.urls.dead, 'known adds up');
    t.ok((d.urls.excluded.byReason.robots ?? 0) >= 1, 'robots exclusions (/private/secret.html)');
    t.equal(d.urls.excluded.byReason.noindex, docs.filter((x) => x.status === 'excluded' && /noindex/.test(x.reason ?? '')).length);
    t.equal(d.urls.queued + d.urls.retrying, 0, 'the crawl finished');

    const statuses = await rows<{ s: number | null; n: string }>(
      `SELECT last_status AS s, count(*) AS n FROM frontier WHERE host = 'alpha.test' AND kind = 'page' GROUP BY last_status`,
    );
    t.same(d.statusCodes, Object.fromEntries(statuses.map((r) => [r.s === null ? 'none' : String(r.s), Number(r.n)])));
    const sitemaps = await rows<{ url: string }>(`SELECT url FROM frontier WHERE host = 'alpha.test' AND kind = 'sitemap' ORDER BY url`);
    t.same(
      d.sitemaps.map((s) => s.url),
      sitemaps.map((s) => s.url),
    );
    t.ok(
      d.sitemaps.some((s) => s.url.endsWith('/sitemap.xml') && s.state === 'done' && s.lastStatus === 200),
      'robots.txt sitemap fetched',
    );

    const stored = (await Promise.all(indexed.map((x) => index.getPage(Number(x.page_ref))))).filter((p) => p !== null);
    t.equal(stored.length, d.urls.indexed, 'every indexed URL is a page of the index');
    t.equal(d.canonical.pointingElsewhere, stored.filter((p) => p.canonicalUrl !== null && p.canonicalUrl !== p.url).length);
    t.ok(d.canonical.pointingElsewhere >= 1, '/canonical.html points at /page-1.html');
    t.equal(d.directives.nosnippet, stored.filter((p) => p.snippet.nosnippet).length);
    t.ok(d.directives.nosnippet >= 1 && d.directives.maxSnippet >= 1);

    const fetchedAt = await rows<{ m: string }>(`SELECT max(last_fetched) AS m FROM documents WHERE host = 'alpha.test'`);
    t.equal(d.freshness.lastFetchedAt, fetchedAt[0]!.m);
    const entities = await rows<{ n: string }>(
      `SELECT count(*) AS n FROM entity_sources s JOIN documents d ON d.page_ref = s.page_ref WHERE d.host = 'alpha.test'`,
    );
    t.equal(d.structuredData.entities.length, Number(entities[0]!.n));
    t.ok(
      d.structuredData.entities.some((e) => e.pageUrl === web.url('alpha.test', '/json-ld.html')),
      'the Organization, with the page it came from',
    );
    const links = await rows<{ outbound_links: string; inbound_hosts: string }>(`SELECT * FROM crawl_hosts WHERE host = 'alpha.test'`);
    t.ok(links.length === 1);
    t.equal(d.links.outbound, (await repos.hosts.evidence('alpha.test')).facts?.outboundLinks ?? 0);
  });
}
