/**
 * Issue 5 end to end: URL requests through the real crawler (crawler/crawler.ts) over the loopback test web
 * (fixtures/test-web), with the real SQLite state, LanceDB index and entity store; then the tools read what the
 * crawl produced.
 */
import t, { type Test } from 'tap';
import type { ZodType } from 'zod';
import { join } from 'node:path';
import { writeFileSync } from 'node:fs';
import { createHash } from 'node:crypto';
import { loadConfig } from '../../config.js';
import { createLogger } from '../../logger.js';
import { openStateDb } from '../../state/db.js';
import { sqliteEntities, sqliteRepositories } from '../../state/repos/sqlite.js';
import { Documents } from '../../state/documents.js';
import { EntityStore } from '../../state/entities.js';
import { RequestStore } from '../../state/requests.js';
import { PassageIndex } from '../../index/engines/lance/store.js';
import { createCrawler } from '../../crawler/crawler.js';
import { PRIORITY } from '../../crawler/frontier.js';
import { startTestWeb, type TestWeb } from '../../fixtures/test-web/index.js';
import { importDataset } from '../../state/entity-import.js';
import { callTool } from '../../tools/call-tool.js';
import type { ToolContext } from '../../tools/define-tool.js';
import type { ServiceDeps } from '../../tools/deps.js';
import { RequestProcessor, priorityFor } from '../../tools/request-processor.js';
import { submitUrlTool } from '../../tools/submit-url.js';
import { requestStatusTool } from '../../tools/request-status.js';
import { entitiesTool } from '../../tools/entities.js';
import { pageTool } from '../../tools/page.js';
import { siteTool } from '../../tools/site.js';
import { freshTool } from '../../tools/fresh.js';
import { imagesTool } from '../../tools/images.js';
import type { SvcError } from '../../errors.js';

const caller = (name: string) => ({ keyId: `key_${name}`, digest: createHash('sha256').update(`svc_${name}`).digest('hex') });

async function setup(t: Test) {
  const web: TestWeb = await startTestWeb({ generatedHosts: 0 });
  t.teardown(() => web.close());
  const dir = t.testdir();
  const config = loadConfig({
    env: {},
    flags: { dataDir: dir, crawlAllowLoopback: true, resolve: web.pins, crawlGapMs: 0, images: true, submissionsPerDay: 50 },
  });
  const db = openStateDb(join(dir, 'state.sqlite'));
  const documents = new Documents(db);
  const entities = new EntityStore(db);
  const requests = new RequestStore(db, { perDay: config.submissionsPerDay });
  const index = await PassageIndex.open({ dir: join(dir, 'lance'), embedder: null });
  // Only what is asked for is crawled (no link following), so each request's effect is visible on its own.
  const crawler = createCrawler({
    config,
    repos: sqliteRepositories(db, { defaultGapMs: config.crawlGapMs }),
    sink: index,
    entities,
    admit: () => false,
    maxCrawlDelayMs: 0,
  });
  const repos = sqliteRepositories(db);
  const deps: ServiceDeps = {
    config,
    repos,
    log: createLogger({ level: 'silent' }),
    now: () => new Date(),
    index,
    entities: sqliteEntities(entities),
    crawler,
  };
  // The processor works through the repositories, as in the service; the test reads and seeds through the same
  // SQLite store synchronously.
  const processor = new RequestProcessor({ requests: repos.requests, documents, crawler });
  t.teardown(async () => {
    await crawler.stop();
    await index.close();
    db.close();
  });
  const ctx = (name = 'alice'): ToolContext => ({ deps, caller: caller(name) });
  return { web, dir, deps, crawler, processor, ctx, requests, documents, entities, index };
}

type Out<T> = T extends { output: infer O } ? (O extends ZodType<infer V> ? V : never) : never;

t.test('issue 5: request lifecycle end to end, removal refused for a live page and done for a 410 page', async (t) => {
  const s = await setup(t);
  const url = s.web.url('alpha.test', '/switchable.html');

  // Discovery → received → queued (frontier, submitted priority) → crawled → completed: indexed.
  const sub = (await callTool(submitUrlTool, { type: 'discovery', url }, s.ctx())) as Out<typeof submitUrlTool>;
  t.equal(sub.request.status, 'received');
  t.match(sub.notice, /neither indexing nor position/);
  await s.processor.tick();
  let st = (await callTool(requestStatusTool, { id: sub.request.id }, s.ctx())) as Out<typeof requestStatusTool>;
  t.equal(st.request.status, 'queued');
  const row = await s.crawler.frontier.get(url);
  t.equal(row?.priority, PRIORITY.submitted);
  t.equal(row?.requestId, sub.request.id);
  await s.crawler.runUntilIdle({ timeoutMs: 20_000 });
  await s.processor.tick();
  st = (await callTool(requestStatusTool, { id: sub.request.id }, s.ctx())) as Out<typeof requestStatusTool>;
  t.equal(st.request.status, 'completed');
  t.equal(st.request.outcome, 'indexed');
  t.same(
    st.request.history.map((h) => h.status),
    ['received', 'queued', 'in_progress', 'completed'],
  );
  const doc = s.documents.byUrl(url);
  t.equal(doc?.status, 'indexed');

  // Another key cannot see the request.
  const e404 = await callTool(requestStatusTool, { id: sub.request.id }, s.ctx('mallory')).catch((e: SvcError) => e);
  t.equal((e404 as SvcError).code, 'not_found');

  // Removal of the live page: a fresh fetch through the crawler shows 200 → rejected, the page stays.
  const rm1 = (await callTool(submitUrlTool, { type: 'removal', url }, s.ctx('mallory'))) as Out<typeof submitUrlTool>;
  const fetchesBefore = s.web.requests('alpha.test', '/switchable.html').length;
  await s.processor.tick();
  const r1 = s.requests.get(rm1.request.id)!;
  t.equal(r1.status, 'completed');
  t.equal(r1.outcome, 'rejected');
  t.match(r1.reason, /live/);
  t.equal(s.web.requests('alpha.test', '/switchable.html').length, fetchesBefore + 1, 'a fresh fetch was made');
  t.equal(s.documents.byUrl(url)?.status, 'indexed', 'the live page was not removed');
  t.ok(await s.index.pagePassages(doc!.pageRef, 0, 5), 'its passages are still served');

  // The page is now 410 Gone: removal is done, for exactly this URL.
  s.web.setPage('alpha.test', '/switchable.html', { status: 410, body: 'gone' });
  const rm2 = (await callTool(submitUrlTool, { type: 'removal', url }, s.ctx('mallory'))) as Out<typeof submitUrlTool>;
  t.not(rm2.request.id, rm1.request.id, 'the first removal is closed, so this is a new request');
  await s.processor.tick();
  const r2 = s.requests.get(rm2.request.id)!;
  t.equal(r2.status, 'completed');
  t.equal(r2.outcome, 'removed');
  t.not(s.documents.byUrl(url)?.status, 'indexed');
  t.equal(await s.index.pagePassages(doc!.pageRef, 0, 5), null, 'gone from the index');
  const pageErr = await callTool(pageTool, { page_ref: doc!.pageRef }, s.ctx()).catch((e: SvcError) => e);
  t.equal((pageErr as SvcError).code, 'not_found');
});

t.test('issue 5: correction keeps its note at a higher priority; robots-excluded and not-found outcomes', async (t) => {
  const s = await setup(t);
  const page1 = s.web.url('alpha.test', '/page-1.html');
  const blocked = s.web.url('alpha.test', '/no-svcbot/x.html');
  const gone = s.web.url('trap.test', '/410');
  const c = (await callTool(submitUrlTool, { type: 'correction', url: page1, note: 'the opening hours are wrong' }, s.ctx())) as Out<
    typeof submitUrlTool
  >;
  const b = (await callTool(submitUrlTool, { type: 'recrawl', url: blocked }, s.ctx())) as Out<typeof submitUrlTool>;
  const g = (await callTool(submitUrlTool, { type: 'discovery', url: gone }, s.ctx())) as Out<typeof submitUrlTool>;
  t.equal(c.request.note, 'the opening hours are wrong');
  await s.processor.tick();
  t.equal((await s.crawler.frontier.get(page1))?.priority, priorityFor('correction'));
  t.ok(priorityFor('correction') > PRIORITY.submitted);
  await s.crawler.runUntilIdle({ timeoutMs: 20_000 });
  await s.processor.tick();
  t.equal(s.requests.get(c.request.id)?.outcome, 'indexed');
  t.equal(s.requests.get(b.request.id)?.outcome, 'excluded_by_robots');
  t.equal(s.web.requests('alpha.test', '/no-svcbot/x.html').length, 0, 'robots were not bypassed');
  t.equal(s.requests.get(g.request.id)?.outcome, 'not_found');
  // A second recrawl of the unchanged page completes as unchanged.
  const again = (await callTool(submitUrlTool, { type: 'recrawl', url: page1 }, s.ctx())) as Out<typeof submitUrlTool>;
  await s.processor.tick();
  await s.crawler.runUntilIdle({ timeoutMs: 20_000 });
  await s.processor.tick();
  t.equal(s.requests.get(again.request.id)?.outcome, 'unchanged');
});

t.test(
  'issue 5: tools after a real crawl — entities merged from JSON-LD and open data, noindex recrawl withdraws, page, site, fresh, images',
  async (t) => {
    const s = await setup(t);
    // An open-data row in the ODCAF layout for the same library the page declares (name + postal code).
    const csv = join(s.dir, 'odcaf-sample.csv');
    writeFileSync(
      csv,
      'Index,Facility_Name,Source_Facility_Type,ODCAF_Facility_Type,Provider,Unit,Street_No,Street_Name,Postal_Code,City,Prov_Terr,Source_Format_Address,CSD_Name,CSDUID,PRUID,Latitude,Longitude\n' +
        '893,Bibliothèque Gabrielle-Roy,bibliothèques,library or archives,québec city,..,350,rue saint-joseph e,G1K 3B2,québec,qc,..,Québec,2423027,24,46.81419627,-71.22597434\n',
    );
    const rep = await importDataset(s.entities, 'odcaf', csv, new Date().toISOString());
    t.equal(rep.admitted, 1);
    const libUrl = s.web.url('ville-quebec.test', '/bibliotheques/gabrielle-roy.html');
    await s.crawler.enqueue(libUrl, { priority: 'submitted', reason: 'test' });
    await s.crawler.enqueue(s.web.url('alpha.test', '/images.html'), { priority: 'submitted', reason: 'test' });
    await s.crawler.enqueue(s.web.url('alpha.test', '/meta/nosnippet.html'), { priority: 'submitted', reason: 'test' });
    await s.crawler.runUntilIdle({ timeoutMs: 30_000 });

    const ents = (await callTool(
      entitiesTool,
      { q: 'gabrielle roy', province: 'Québec', kind: 'Library', detail: 'full' },
      s.ctx(),
    )) as Out<typeof entitiesTool>;
    t.equal(ents.entities.length, 1);
    const lib = ents.entities[0]!;
    t.same(lib.sources!.map((x) => x.type).sort(), ['dataset', 'page'], 'one entity from both sources');
    t.equal(lib.telephone, '+1-418-641-6789');
    t.equal(lib.address.postal_code, 'G1K 3B2');
    t.match(ents.notice, /Open Government Licence – Canada/);
    const one = (await callTool(entitiesTool, { id: lib.id }, s.ctx())) as Out<typeof entitiesTool>;
    t.equal(one.entities[0]?.id, lib.id);
    t.equal(entitiesTool.rest[1]?.respond && (entitiesTool.rest[1].respond as (o: unknown) => { id: string })(one).id, lib.id);
    const unknown = await callTool(entitiesTool, { id: 'ent_00000000000000000000' }, s.ctx()).catch((e: SvcError) => e);
    t.equal((unknown as SvcError).code, 'not_found');
    const badProv = await callTool(entitiesTool, { province: 'Narnia' }, s.ctx()).catch((e: SvcError) => e);
    t.equal((badProv as SvcError).code, 'validation_failed');
    t.same((badProv as SvcError).errors[0]?.path, ['province']);

    // svc_page: passages in order; nosnippet pages serve none.
    const libDoc = s.documents.byUrl(libUrl)!;
    const pg = (await callTool(pageTool, { page_ref: libDoc.pageRef, limit: 1 }, s.ctx())) as Out<typeof pageTool>;
    t.ok(pg.total >= 1);
    t.equal(pg.passages[0]?.ordinal, 0);
    t.equal(pg.passages[0]?.content_trust, 'untrusted_web_content');
    t.equal(pg.next_offset, pg.total > 1 ? 1 : undefined);
    const ns = s.documents.byUrl(s.web.url('alpha.test', '/meta/nosnippet.html'))!;
    const nsPage = (await callTool(pageTool, { page_ref: ns.pageRef }, s.ctx())) as Out<typeof pageTool>;
    t.same(nsPage.passages, []);
    t.ok(nsPage.total >= 1);
    t.equal(nsPage.next_offset, undefined);
    t.equal(nsPage.warnings[0]?.code, 'snippet_restricted');
    const badLimit = await callTool(pageTool, { page_ref: libDoc.pageRef, limit: 41 }, s.ctx()).catch((e: SvcError) => e);
    t.equal((badLimit as SvcError).code, 'validation_failed');

    // svc_site: evidence for a crawled host; 400 / 404 otherwise.
    const site = (await callTool(siteTool, { host: 'ALPHA.test' }, s.ctx())) as Out<typeof siteTool>;
    t.equal(site.host, 'alpha.test');
    t.equal(site.robots?.status, 'ok');
    t.ok(site.robots?.rules.some((r) => /no-svcbot/.test(r)));
    t.ok(site.robots?.sitemaps.length === 2);
    t.ok(site.scope.indexed >= 2);
    t.ok(site.scope.known >= site.scope.indexed);
    t.ok(site.freshness.last_crawl_at !== null);
    t.equal(
      ((await callTool(siteTool, { host: 'http://alpha.test/' }, s.ctx()).catch((e: SvcError) => e)) as SvcError).code,
      'invalid_host',
    );
    t.equal(((await callTool(siteTool, { host: 'never-seen.example' }, s.ctx()).catch((e: SvcError) => e)) as SvcError).code, 'not_found');

    // svc_fresh: the crawled pages are new within 1h.
    const fresh = (await callTool(freshTool, { window: '1h' }, s.ctx())) as Out<typeof freshTool>;
    t.ok(fresh.pages.some((p) => p.url === libUrl && p.change === 'new'));
    t.equal(((await callTool(freshTool, { window: '2h' }, s.ctx()).catch((e: SvcError) => e)) as SvcError).code, 'validation_failed');

    // svc_images: metadata only, with the rights notice.
    const imgs = (await callTool(imagesTool, { q: 'Gabrielle-Roy façade' }, s.ctx())) as Out<typeof imagesTool>;
    t.ok(imgs.images.some((i) => i.page_url === libUrl && i.width === 800 && i.height === 533));
    t.match(imgs.notice, /No usage rights are implied/);

    // The library page turns noindex; a recrawl request withdraws the page's part of the entity.
    s.web.setPage('ville-quebec.test', '/bibliotheques/gabrielle-roy.html', {
      body: '<!doctype html><html><head><meta name="robots" content="noindex"><title>x</title></head><body><p>gone</p></body></html>',
    });
    const rc = (await callTool(submitUrlTool, { type: 'recrawl', url: libUrl }, s.ctx())) as Out<typeof submitUrlTool>;
    await s.processor.tick();
    await s.crawler.runUntilIdle({ timeoutMs: 20_000 });
    await s.processor.tick();
    t.equal(s.requests.get(rc.request.id)?.outcome, 'excluded_by_noindex');
    const after = s.entities.get(lib.id)!;
    t.same(
      after.sources.map((x) => x.type),
      ['dataset'],
      'the page part is withdrawn, the open-data part stays',
    );
    t.equal(after.telephone, null);
  },
);
