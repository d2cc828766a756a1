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
import { PassageIndex } from '../../index/engines/lance/store.js';
import { openStateDb } from '../../state/db.js';
import { sqliteRepositories } from '../../state/repos/sqlite.js';
import { propertyDiagnostics } from '../../webmaster/diagnostics.js';
import { testFetcher } from '../fixtures/net-guard.js';
import { crawlAndCheckDiagnostics } from './diagnostics-checks.js';

t.test('issue 11: diagnostics numbers equal what the index and frontier hold for a crawled fixture host', async (t) => {
  const web = await startTestWeb({ generatedHosts: 1, generatedPages: 2 });
  t.teardown(() => web.close());
  const dir = t.testdir();
  const config = loadConfig({ env: {}, flags: { dataDir: dir, resolve: web.pins, crawlAllowLoopback: true, crawlGapMs: 10 } });
  const db = openStateDb(join(dir, 'state.sqlite'));
  const index = await PassageIndex.open({ dir: join(dir, 'lance'), embedder: null });
  t.teardown(async () => {
    await index.close();
    db.close();
  });
  const repos = sqliteRepositories(db, { defaultGapMs: config.crawlGapMs });
  await crawlAndCheckDiagnostics(t, { config, repos, index, web, rows: async (sql) => db.prepare(sql).all() as Record<string, unknown>[] });
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
