/**
 * The crawler end to end against the local test web (loopback only, names pinned): the real fetcher, robots cache,
 * frontier, LanceDB passage index and SQLite entity store. The sink is the real index, wrapped only to remember
 * what it was sent so tests can read the PageInput.
 */
import t, { type Test } from 'tap';
import { join } from 'node:path';
import { loadConfig } from '../../config.js';
import { createCrawler, type Crawler, type CrawlerOptions } from '../../crawler/crawler.js';
import type { ItemOutcome } from '../../crawler/pipeline.js';
import { PassageIndex } from '../../index/engines/lance/store.js';
import type { PageInput, PageSink } from '../../page-model.js';
import { openStateDb } from '../../state/db.js';
import { Documents } from '../../state/documents.js';
import { EntityStore } from '../../state/entities.js';
import { startTestWeb, type TestWeb } from '../../fixtures/test-web/index.js';
import { testFetcher } from '../fixtures/net-guard.js';
import { sqliteRepositories } from '../../state/repos/sqlite.js';

let web: TestWeb;
t.before(async () => {
  web = await startTestWeb({ generatedHosts: 4, generatedPages: 8 });
});
t.teardown(() => web.close());

interface Rig {
  crawler: Crawler;
  index: PassageIndex;
  entities: EntityStore;
  documents: Documents;
  sent: Map<number, PageInput>;
  outcomes: ItemOutcome[];
  since: number;
  dir: string;
  sink: PageSink;
}

async function rig(t: Test, opts: { gapMs?: number; concurrency?: number; crawler?: Partial<CrawlerOptions> } = {}): Promise<Rig> {
  const dir = t.testdir();
  const config = loadConfig({
    env: {},
    flags: {
      dataDir: dir,
      resolve: web.pins,
      crawlAllowLoopback: true,
      crawlGapMs: opts.gapMs ?? 20,
      crawlConcurrency: opts.concurrency ?? 8,
    },
  });
  const db = openStateDb(join(dir, 'state.sqlite'));
  const index = await PassageIndex.open({ dir: join(dir, 'lance'), embedder: null });
  const entities = new EntityStore(db);
  const documents = new Documents(db);
  const sent = new Map<number, PageInput>();
  const sink: PageSink = {
    upsertPage: async (p) => {
      sent.set(p.pageRef, p);
      await index.upsertPage(p);
    },
    removePage: async (ref) => {
      sent.delete(ref);
      await index.removePage(ref);
    },
  };
  const crawler = createCrawler({
    config,
    repos: sqliteRepositories(db, { defaultGapMs: config.crawlGapMs }),
    sink,
    entities,
    maxCrawlDelayMs: 200, // alpha.test asks for Crawl-delay: 1; keep tests short (the cap is a documented option)
    frontier: { retryBaseMs: 20, retryMaxMs: 200, maxAttempts: 3 },
    fetchTimeouts: { connectTimeoutMs: 2000, headersTimeoutMs: 2000, totalTimeoutMs: 5000 },
    ...(opts.crawler ?? {}),
  });
  const outcomes: ItemOutcome[] = [];
  crawler.onItem((o) => outcomes.push(o));
  t.teardown(async () => {
    await crawler.stop();
    await index.close();
    db.close();
  });
  return { crawler, index, entities, documents, sent, outcomes, since: web.accessLog.length, dir, sink };
}

const log = (r: Rig) => web.accessLog.slice(r.since);
const onlyPages = (r: Rig, host: string) => log(r).filter((e) => e.host === host);

t.test('politeness: the per-host gap is never violated (access log), one request at a time per host', async (t) => {
  const gap = 150;
  const r = await rig(t, { gapMs: gap, concurrency: 4 });
  for (let i = 0; i < 4; i++) await r.crawler.enqueue(web.url(`gen-${i}.test`, '/'), { priority: 'submitted', reason: 'seed' });
  const stats = await r.crawler.runUntilIdle({ timeoutMs: 40_000 });
  t.equal(stats.queued, 0, 'crawl finished');
  for (let i = 0; i < 4; i++) {
    const host = `gen-${i}.test`;
    const entries = onlyPages(r, host);
    t.ok(entries.length >= 10, `${host}: robots, sitemap, llms.txt and 8 pages (${entries.length})`);
    for (let k = 1; k < entries.length; k++) {
      const d = entries[k]!.at - entries[k - 1]!.at;
      if (d < gap) t.fail(`${host}: ${entries[k - 1]!.path} → ${entries[k]!.path} only ${d} ms apart`);
    }
    t.ok(
      entries.every((e) => e.ua.startsWith('SvcBot/')),
      'every request says SvcBot',
    );
  }
  const pages = r.outcomes.filter((o) => o.outcome === 'indexed');
  t.equal(pages.length, 4 * 9, 'every generated page (/ and /p/0…7) indexed once');
  t.equal(new Set(pages.map((o) => o.url)).size, 36);
});

t.test('issue 10: two crawler workers on one state file keep each per-host gap together, no URL fetched twice', async (t) => {
  const gap = 150;
  const r = await rig(t, { gapMs: gap, concurrency: 4 });
  // A second worker: its own database connection, scheduler and robots cache; only the shared state is common.
  const db = openStateDb(join(r.dir, 'state.sqlite'));
  const config = loadConfig({
    env: {},
    flags: { dataDir: r.dir, resolve: web.pins, crawlAllowLoopback: true, crawlGapMs: gap, crawlConcurrency: 4 },
  });
  const second = createCrawler({
    config,
    repos: sqliteRepositories(db, { defaultGapMs: config.crawlGapMs }),
    sink: r.sink,
    entities: new EntityStore(db),
    workerName: 'second',
    maxCrawlDelayMs: 200,
  });
  const outcomes: ItemOutcome[] = [];
  second.onItem((o) => outcomes.push(o));
  t.teardown(async () => {
    await second.stop();
    db.close();
  });
  for (let i = 0; i < 3; i++) await r.crawler.enqueue(web.url(`gen-${i}.test`, '/'), { priority: 'submitted', reason: 'seed' });
  const [a, b] = await Promise.all([r.crawler.runUntilIdle({ timeoutMs: 40_000 }), second.runUntilIdle({ timeoutMs: 40_000 })]);
  t.equal(a.queued + b.queued, 0, 'crawl finished');
  t.ok(r.outcomes.length > 0 && outcomes.length > 0, `both workers took items (${r.outcomes.length} and ${outcomes.length})`);
  for (let i = 0; i < 3; i++) {
    const host = `gen-${i}.test`;
    const entries = onlyPages(r, host);
    for (let k = 1; k < entries.length; k++) {
      const d = entries[k]!.at - entries[k - 1]!.at;
      if (d < gap) t.fail(`${host}: ${entries[k - 1]!.path} → ${entries[k]!.path} only ${d} ms apart across workers`);
    }
    // robots.txt is read by each worker once (each keeps its own robots cache); every other URL once in all.
    const paths = entries.filter((e) => e.path !== '/robots.txt').map((e) => e.path);
    t.same(
      paths.filter((p, k) => paths.indexOf(p) !== k),
      [],
      `${host}: no URL fetched twice`,
    );
  }
  const pages = [...r.outcomes, ...outcomes].filter((o) => o.outcome === 'indexed');
  t.equal(pages.length, 3 * 9, 'every generated page indexed');
  t.equal(new Set(pages.map((o) => o.url)).size, 27, 'each by one worker only');
});

t.test('429 + Retry-After: the host is left alone for the delay, then the page is fetched', async (t) => {
  const r = await rig(t, { gapMs: 20 });
  const host = 'gen-1.test';
  web.setPage(host, '/p/3.html', { status: 429, headers: { 'retry-after': '1' }, body: 'slow down' });
  t.teardown(() => web.setPage(host, '/p/3.html', null));
  r.crawler.onItem((o) => {
    if (o.url.endsWith('/p/3.html') && o.status === 429) web.setPage(host, '/p/3.html', null);
  });
  await r.crawler.enqueue(web.url(host, '/p/3.html'), { priority: 'submitted', reason: 'seed' });
  await r.crawler.runUntilIdle({ maxPages: 3, timeoutMs: 20_000 });
  const entries = onlyPages(r, host);
  const i429 = entries.findIndex((e) => e.status === 429);
  t.ok(i429 >= 0, 'the 429 was served');
  const next = entries[i429 + 1];
  t.ok(next, 'the host was contacted again later');
  t.ok(next!.at - entries[i429]!.at >= 1000, `next request ${next!.at - entries[i429]!.at} ms after the 429 (Retry-After: 1)`);
  t.equal((await r.crawler.frontier.get(web.url(host, '/p/3.html')))!.lastOutcome, 'indexed');
});

t.test('robots: disallowed paths never fetched; Allow exception honoured; robots of the target after a cross-host redirect', async (t) => {
  const r = await rig(t);
  for (const p of ['/private/secret.html', '/no-svcbot/x.html', '/no-svcbot/except.html', '/file.pdf'])
    await r.crawler.enqueue(web.url('alpha.test', p), { priority: 'submitted', reason: 'seed', refresh: true });
  await r.crawler.enqueue(web.url('beta.test', '/to-gamma'), { priority: 'submitted', reason: 'seed' });
  await r.crawler.runUntilIdle({ maxPages: 5, timeoutMs: 20_000 });
  const alphaPaths = onlyPages(r, 'alpha.test').map((e) => e.path);
  t.notOk(alphaPaths.includes('/private/secret.html'));
  t.notOk(alphaPaths.includes('/no-svcbot/x.html'));
  t.notOk(alphaPaths.includes('/file.pdf'));
  t.ok(alphaPaths.includes('/no-svcbot/except.html'));
  t.equal((await r.crawler.frontier.get(web.url('alpha.test', '/private/secret.html')))!.lastOutcome, 'excluded:robots');
  const gamma = onlyPages(r, 'gamma.test').map((e) => e.path);
  t.ok(gamma.includes('/robots.txt'), "the redirect target's robots.txt was read");
  t.notOk(gamma.includes('/blocked-by-robots.html'), 'the disallowed target was never fetched');
  t.equal((await r.crawler.frontier.get(web.url('beta.test', '/to-gamma')))!.lastOutcome, 'excluded:robots');
  const facts = (await r.crawler.hosts.evidence('alpha.test')).facts!;
  t.equal(facts.robots!.status, 'ok');
  t.ok(facts.robots!.rules.includes('Disallow: /private/'));
  t.equal(facts.robots!.crawlDelaySec, 1);
  t.equal(facts.robots!.sitemaps.length, 2);
});

t.test('cross-host redirect: the target is indexed under its own URL; the source is not a page', async (t) => {
  const r = await rig(t);
  const o = await r.crawler.processNow(web.url('alpha.test', '/redirect/to-beta'), { reason: 'test' });
  t.equal(o.finalUrl, web.url('beta.test', '/landing.html'));
  t.equal(o.outcome, 'indexed');
  const doc = r.documents.byUrl(web.url('beta.test', '/landing.html'))!;
  t.equal(doc.status, 'indexed');
  t.equal(r.documents.byUrl(web.url('alpha.test', '/redirect/to-beta')), undefined);
  t.equal((await r.crawler.frontier.get(web.url('alpha.test', '/redirect/to-beta')))!.lastOutcome, 'redirected');
  t.equal((await r.crawler.frontier.get(web.url('beta.test', '/landing.html')))!.state, 'done', 'target marked fetched: no second fetch');
  t.equal((await r.index.getPage(doc.pageRef))!.host, 'beta.test');
});

t.test('redirect traps: loops, too many hops, blocked addresses and refused schemes', async (t) => {
  const r = await rig(t);
  const cases: [string, string][] = [
    ['/loop/a', 'dead:redirect_loop'],
    ['/chain?n=7', 'dead:too_many_redirects'],
    ['/to-private', 'dead:blocked_address'],
    ['/to-metadata', 'dead:blocked_address'],
    ['/to-private-name', 'dead:blocked_address'],
    ['/to-file', 'dead:bad_scheme'],
    ['/to-credentials', 'dead:credentials'],
  ];
  for (const [path, want] of cases) {
    const o = await r.crawler.processNow(web.url('trap.test', path), { reason: 'test' });
    t.equal(o.outcome, want, path);
  }
  const ok = await r.crawler.processNow(web.url('trap.test', '/chain?n=5'), { reason: 'test' });
  t.equal(ok.outcome, 'indexed', 'five hops across hosts are followed');
  t.equal(ok.finalUrl, web.url('trap2.test', '/chain?n=0'));
  t.equal((await r.crawler.frontier.get(web.url('trap.test', '/to-private')))!.deadReason, 'blocked_address');
});

t.test('nofollow: page-level admits no link; rel=nofollow drops that link only', async (t) => {
  const r = await rig(t);
  const nf = await r.crawler.processNow(web.url('alpha.test', '/meta/nofollow.html'), { reason: 'test' });
  t.equal(nf.outcome, 'indexed');
  t.equal(nf.linksAdmitted, 0);
  t.equal(await r.crawler.frontier.get(web.url('alpha.test', '/page-2.html')), null);
  const hx = await r.crawler.processNow(web.url('alpha.test', '/header/svcbot-nofollow.html'), { reason: 'test' });
  t.equal(hx.linksAdmitted, 0, 'X-Robots-Tag: svcbot: nofollow');
  const home = await r.crawler.processNow(web.url('alpha.test', '/'), { reason: 'test' });
  t.ok(home.linksAdmitted >= 6);
  t.ok(await r.crawler.frontier.get(web.url('alpha.test', '/page-1.html')), 'followed link admitted');
  t.equal(
    (await r.crawler.frontier.get(web.url('alpha.test', '/page-3.html')))?.reason ?? 'absent',
    'absent',
    'rel=nofollow link not admitted',
  );
});

t.test('directives: every row of spec §1.3 (meta robots, meta svcbot, X-Robots-Tag), canonical is a hint only', async (t) => {
  const r = await rig(t);
  const run = (p: string) => r.crawler.processNow(web.url('alpha.test', p), { reason: 'test' });
  for (const p of [
    '/meta/noindex.html',
    '/meta/none.html',
    '/meta/svcbot-noindex.html',
    '/header/noindex.html',
    '/header/none.html',
    '/header/svcbot-noindex.html',
    '/noindex-with-canonical.html',
  ]) {
    const o = await run(p);
    t.equal(o.outcome, 'excluded:noindex', p);
    t.equal(o.noindex, true);
    t.equal(r.documents.byUrl(web.url('alpha.test', p))!.reason, 'noindex');
  }
  t.equal((await run('/meta/unavailable-after-past.html')).outcome, 'excluded:unavailable_after');
  t.equal((await run('/meta/googlebot-noindex.html')).outcome, 'indexed', 'other crawlers’ meta is ignored');
  t.equal((await run('/header/googlebot-noindex.html')).outcome, 'indexed', 'other crawlers’ X-Robots-Tag prefix is ignored');
  const snippet = async (p: string) => {
    const o = await run(p);
    t.equal(o.outcome, 'indexed', p);
    return r.sent.get(o.pageRef!)!.snippet;
  };
  t.same(await snippet('/meta/nosnippet.html'), { nosnippet: true, maxSnippet: null });
  t.same(await snippet('/meta/max-snippet-0.html'), { nosnippet: true, maxSnippet: null });
  t.same(await snippet('/header/max-snippet-0.html'), { nosnippet: true, maxSnippet: null });
  t.same(await snippet('/meta/max-snippet-50.html'), { nosnippet: false, maxSnippet: 50 });
  t.same(await snippet('/meta/robots-and-svcbot.html'), { nosnippet: false, maxSnippet: 40 }, 'most restrictive wins');
  t.same(await snippet('/meta/unavailable-after-future.html'), { nosnippet: false, maxSnippet: null });
  const ua = (await r.crawler.frontier.get(web.url('alpha.test', '/meta/unavailable-after-future.html')))!;
  t.ok(ua.nextAt <= Date.parse('2999-01-01T00:00:01Z'), 'recrawl no later than unavailable_after');
  const img = await run('/meta/noimageindex.html');
  t.same(r.sent.get(img.pageRef!)!.images, []);
  const can = await run('/canonical.html');
  t.equal(can.outcome, 'indexed', 'a canonical elsewhere does not exclude the page');
  t.equal(r.sent.get(can.pageRef!)!.canonicalUrl, web.url('alpha.test', '/page-1.html'));
  t.equal(r.sent.get(can.pageRef!)!.url, web.url('alpha.test', '/canonical.html'));
  t.equal((await run('/canonical-to-noindex.html')).outcome, 'indexed', 'pointing at a noindex page does not make it noindex');
  const ns = await run('/data-nosnippet.html');
  const passages = r.sent.get(ns.pageRef!)!.passages;
  t.ok(
    passages.some((p) => p.text.includes('SECRET-NOSNIPPET')),
    'data-nosnippet text stays searchable',
  );
  t.notOk(
    passages.some((p) => p.snippetText.includes('SECRET-NOSNIPPET') || p.snippetText.includes('Also hidden')),
    'but never in snippetText',
  );
  // processNow goes through the same politeness: alpha's Crawl-delay (1 s, capped at 200 ms here) between requests.
  const alpha = onlyPages(r, 'alpha.test');
  t.ok(alpha.length > 20);
  for (let k = 1; k < alpha.length; k++)
    if (alpha[k]!.at - alpha[k - 1]!.at < 200) t.fail(`processNow requests ${alpha[k]!.at - alpha[k - 1]!.at} ms apart`);
});

t.test('noindex and 410 on recrawl remove the page and its entities (issue 3)', async (t) => {
  const r = await rig(t);
  const host = 'alpha.test';
  const path = '/switchable.html';
  const org = `<script type="application/ld+json">{"@context":"https://schema.org","@type":"GovernmentOrganization","name":"Bibliothèque de Québec","telephone":"+1-418-641-6789","address":{"@type":"PostalAddress","streetAddress":"350 rue Saint-Joseph Est","addressLocality":"Québec","addressRegion":"QC","postalCode":"G1K 3B2","addressCountry":"CA"}}</script>`;
  const body = (head: string) =>
    `<!doctype html><html lang="fr"><head><title>Bibliothèque</title>${org}${head}</head><body><main><h1>Bibliothèque</h1><p>La bibliothèque municipale offre des services de prêt, des activités et des ressources numériques à tous les résidents.</p></main></body></html>`;
  web.setPage(host, path, { body: body('') });
  t.teardown(() => web.setPage(host, path, null));
  const first = await r.crawler.processNow(web.url(host, path), { reason: 'test' });
  t.equal(first.outcome, 'indexed');
  const ref = first.pageRef!;
  t.ok(await r.index.getPage(ref), 'in the index');
  t.equal(r.entities.counts().pageSources, 1, 'entity observed');
  t.equal(r.sent.get(ref)!.signals.addressRegions[0], 'QC');

  web.setPage(host, path, { body: body('<meta name="robots" content="noindex">') });
  const second = await r.crawler.processNow(web.url(host, path), { reason: 'recrawl' });
  t.equal(second.outcome, 'excluded:noindex');
  t.equal(await r.index.getPage(ref), null, 'removed from the index');
  t.equal(r.entities.counts().pageSources, 0, 'entities withdrawn');
  t.same([r.documents.get(ref)!.status, r.documents.get(ref)!.reason], ['excluded', 'noindex']);

  web.setPage(host, path, { body: body('') });
  const third = await r.crawler.processNow(web.url(host, path), { reason: 'recrawl' });
  t.equal(third.outcome, 'indexed');
  t.equal(third.pageRef, ref, 'the page_ref is durable');
  web.setPage(host, path, { status: 410, body: 'gone' });
  const fourth = await r.crawler.processNow(web.url(host, path), { reason: 'recrawl' });
  t.equal(fourth.outcome, 'gone');
  t.equal(await r.index.getPage(ref), null);
  t.same([r.documents.get(ref)!.status, r.documents.get(ref)!.reason], ['gone', 'http_410']);
  t.equal(r.entities.counts().pageSources, 0);
});

t.test('conditional GET: a recrawl sends the validators and a 304 keeps the page', async (t) => {
  const r = await rig(t);
  const url = web.url('alpha.test', '/etag.html');
  const a = await r.crawler.processNow(url, { reason: 'test' });
  t.equal(a.outcome, 'indexed');
  t.equal((await r.crawler.frontier.get(url))!.etag, '"v1"');
  const b = await r.crawler.processNow(url, { reason: 'recrawl' });
  t.equal(b.status, 304);
  t.equal(b.outcome, 'unchanged');
  t.equal(r.documents.get(a.pageRef!)!.status, 'indexed');
  t.ok(await r.index.getPage(a.pageRef!), 'still indexed');
  const served = onlyPages(r, 'alpha.test')
    .filter((e) => e.path === '/etag.html')
    .map((e) => e.status);
  t.same(served, [200, 304]);
});

t.test('sitemaps from robots.txt (index + gzip) feed the frontier at sitemap priority; llms.txt read once', async (t) => {
  const r = await rig(t);
  await r.crawler.enqueue(web.url('alpha.test', '/page-1.html'), { priority: 'submitted', reason: 'seed' });
  await r.crawler.runUntilIdle({ maxPages: 4, timeoutMs: 20_000 });
  for (const p of ['/page-2.html', '/page-3.html', '/images.html']) {
    const row = await r.crawler.frontier.get(web.url('alpha.test', p));
    t.ok(row, `${p} admitted`);
    t.equal(row!.reason, 'sitemap', `${p} via sitemap`);
  }
  t.equal((await r.crawler.frontier.get(web.url('alpha.test', '/sitemap-gz.xml.gz')))!.lastOutcome, 'sitemap', 'gzip sitemap read');
  const facts = (await r.crawler.hosts.evidence('alpha.test')).facts!;
  t.same([facts.llms!.present, facts.llms!.title, facts.llms!.summary, facts.llms!.linkCount], [true, 'Alpha', 'The alpha test site.', 2]);
  t.equal(onlyPages(r, 'alpha.test').filter((e) => e.path === '/llms.txt').length, 1);
});

t.test('the operator scope rule applies to sitemap entries as to links', async (t) => {
  const r = await rig(t, { crawler: { admit: (url) => !url.endsWith('/page-2.html') && !url.endsWith('/images.html') } });
  await r.crawler.enqueue(web.url('alpha.test', '/page-1.html'), { priority: 'submitted', reason: 'seed' });
  await r.crawler.runUntilIdle({ maxPages: 4, timeoutMs: 20_000 });
  t.ok(await r.crawler.frontier.get(web.url('alpha.test', '/page-3.html')), 'in-scope sitemap entry admitted');
  t.notOk(await r.crawler.frontier.get(web.url('alpha.test', '/page-2.html')), 'out-of-scope sitemap entry refused');
  t.notOk(await r.crawler.frontier.get(web.url('alpha.test', '/images.html')), 'out-of-scope gzip-sitemap entry refused');
});

t.test(
  'dead letter after N failures with the reason; an unsupported type is not indexed (reason recorded); text/plain is (issue 16)',
  async (t) => {
    const r = await rig(t);
    web.setPage('gen-2.test', '/p/5.html', { status: 500, body: 'boom' });
    t.teardown(() => web.setPage('gen-2.test', '/p/5.html', null));
    await r.crawler.enqueue(web.url('gen-2.test', '/p/5.html'), { priority: 'submitted', reason: 'seed' });
    await r.crawler.enqueue(web.url('alpha.test', '/plain.txt'), { priority: 'submitted', reason: 'seed' });
    await r.crawler.enqueue(web.url('alpha.test', '/data.json'), { priority: 'submitted', reason: 'seed' });
    await r.crawler.runUntilIdle({ maxPages: 12, timeoutMs: 20_000 });
    const row = (await r.crawler.frontier.get(web.url('gen-2.test', '/p/5.html')))!;
    t.equal(row.state, 'dead');
    t.equal(row.deadReason, 'http_500 (after 3 attempts)');
    t.equal(onlyPages(r, 'gen-2.test').filter((e) => e.path === '/p/5.html').length, 3);
    t.same((await r.crawler.frontier.countsForHost('gen-2.test')).dead, 1);
    const txt = r.documents.byUrl(web.url('alpha.test', '/plain.txt'))!;
    t.same([txt.status, txt.reason], ['indexed', null]);
    t.match(r.sent.get(txt.pageRef), { filetype: 'txt', title: 'Plain text document served as text/plain.' });
    const json = r.documents.byUrl(web.url('alpha.test', '/data.json'))!;
    t.same([json.status, json.reason], ['excluded', 'unsupported_type:application/json']);
  },
);

t.test('host facts: link aggregates and change intervals', async (t) => {
  const r = await rig(t);
  const path = '/linker.html';
  web.setPage('beta.test', path, {
    body: `<html><body><main><h1>Links</h1><p>Links to <a href="${web.url('gen-3.test', '/')}">gen three</a> and <a href="${web.url('alpha.test', '/')}">alpha</a> and <a href="/landing.html">home</a>.</p></main></body></html>`,
  });
  t.teardown(() => web.setPage('beta.test', path, null));
  await r.crawler.processNow(web.url('beta.test', path), { reason: 'test' });
  web.setPage('beta.test', path, {
    body: '<html><body><main><p>Changed content now, with different words entirely.</p></main></body></html>',
  });
  await new Promise((res) => setTimeout(res, 5));
  await r.crawler.processNow(web.url('beta.test', path), { reason: 'test' });
  const beta = (await r.crawler.hosts.evidence('beta.test')).facts!;
  t.equal(beta.outboundLinks, 0, 'aggregates follow the latest version of the page');
  t.equal(beta.changeIntervalsObserved, 1);
  t.ok(beta.medianChangeIntervalMs! > 0);
  t.equal(beta.pagesFetched, 2);
});

t.test('BatchingSink groups concurrent writes, keeps removal order, last version wins, errors reach the batch', async (t) => {
  const { BatchingSink } = await import('../../crawler/crawler.js');
  const calls: string[] = [];
  let fail = false;
  const inner = {
    upsertPage: async (p: PageInput) => void calls.push(`one:${p.pageRef}`),
    upsertPages: async (ps: readonly PageInput[]) => {
      await new Promise((r) => setTimeout(r, 10));
      if (fail) throw new Error('disk full');
      calls.push(`batch:${ps.map((p) => `${p.pageRef}/${p.title}`).join(',')}`);
    },
    removePage: async (ref: number) => void calls.push(`remove:${ref}`),
  };
  const page = (ref: number, title = 'v1'): PageInput => ({
    pageRef: ref,
    url: `http://a.test/${ref}`,
    canonicalUrl: null,
    host: 'a.test',
    title,
    description: '',
    lang: null,
    publishedAt: null,
    modifiedAt: null,
    dateSource: 'none',
    fetchedAt: '2026-01-01T00:00:00.000Z',
    contentHash: 'h',
    snippet: { nosnippet: false, maxSnippet: null },
    filetype: 'html',
    signals: { declaredTypes: [], addressCountries: [], addressRegions: [] },
    passages: [],
    images: [],
  });
  const b = new BatchingSink(inner, { maxBatch: 4, maxDelayMs: 5 });
  await Promise.all([b.upsertPage(page(1)), b.upsertPage(page(2)), b.upsertPage(page(1, 'v2'))]);
  t.same(calls, ['batch:1/v2,2/v1'], 'one write; the later version of page 1 wins');
  calls.length = 0;
  const w = [b.upsertPage(page(3)), b.upsertPage(page(4)), b.upsertPage(page(5)), b.upsertPage(page(6)), b.upsertPage(page(7))];
  const r = b.removePage(3);
  await Promise.all([...w, r]);
  t.same(calls, ['batch:3/v1,4/v1,5/v1,6/v1', 'batch:7/v1', 'remove:3'], 'maxBatch respected; the removal waits for earlier writes');
  fail = true;
  const bad = [b.upsertPage(page(8)), b.upsertPage(page(9))];
  for (const p of bad) await t.rejects(p, /disk full/);
  fail = false;
  await b.upsertPage(page(10));
  await b.flush();
  t.same(calls.at(-1), 'batch:10/v1', 'the sink keeps working after a failed batch');
});

t.test('start() crawls in the background; stop() is graceful: nothing left leased, nothing lost (issue 13: deterministic)', async (t) => {
  // stop() is asked for at a fixed point of the crawl — as the third /p/ page is requested, from the crawler's own
  // fetcher — not by polling a timer nor by counting indexed pages (under load the index writes lag the fetches, and
  // every page could be fetched before the third was written), so a loaded machine changes how long this takes,
  // never what it checks: the sitemap named all pages before, and at most the one request in flight is added.
  let stopped: Promise<void> | null = null;
  let ok!: () => void;
  const asked = new Promise<void>((resolve) => (ok = resolve));
  let pageRequests = 0;
  const { fetcher: inner } = testFetcher(web);
  const r: Rig = await rig(t, {
    gapMs: 100,
    crawler: {
      fetcher: {
        fetch: (url, o) => {
          if (new URL(url).pathname.startsWith('/p/') && ++pageRequests === 3 && stopped === null) {
            stopped = r.crawler.stop();
            ok();
          }
          return inner.fetch(url, o);
        },
      },
    },
  });
  await r.crawler.enqueue(web.url('gen-3.test', '/'), { priority: 'submitted', reason: 'seed' });
  r.crawler.start();
  await asked;
  await stopped;
  const s = await r.crawler.stats();
  t.equal(s.inFlight, 0);
  const c = await r.crawler.frontier.countsForHost('gen-3.test');
  t.equal(c.leased, 0, 'no lease left behind');
  // An item cut short by the stop may be queued again or (a transient failure) retrying: both are kept.
  t.ok(c.queued + c.retrying > 0, 'the rest is still queued for the next run');
  t.equal(c.dead, 0);
  const known = c.queued + c.retrying + c.done;
  const more = await r.crawler.runUntilIdle({ timeoutMs: 120_000 });
  t.equal(more.queued, 0, 'a later run picks up where stop() left off');
  const after = await r.crawler.frontier.countsForHost('gen-3.test');
  t.equal(after.done, known, 'every URL known at the stop completed, none lost');
  t.equal(after.dead, 0);
});

t.test('robots.txt variants end to end: redirects, 404, 5xx, timeout, > 500 KiB, gzip', async (t) => {
  const r = await rig(t, { crawler: { fetchTimeouts: { connectTimeoutMs: 1000, headersTimeoutMs: 1000, totalTimeoutMs: 2000 } } });
  const cases: [string, string, string][] = [
    ['robots-redirect.test', '/page.html', 'excluded:robots'], // 5 hops to another host's file, which disallows it
    ['robots-redirect-long.test', '/page.html', 'retry:robots_unreachable'], // 6 hops: unreachable → disallow all for now
    ['robots-404.test', '/page.html', 'indexed'],
    ['robots-500.test', '/page.html', 'retry:robots_error_disallow_all'],
    ['robots-timeout.test', '/page.html', 'retry:robots_unreachable'],
    ['robots-huge.test', '/before-limit/page.html', 'excluded:robots'],
    ['robots-huge.test', '/after-limit/page.html', 'indexed'], // the rule beyond 500 KiB is not read
    ['robots-gzip.test', '/page.html', 'excluded:robots'],
    ['robots-disallow-all.test', '/page.html', 'excluded:robots'],
  ];
  for (const [host, path, want] of cases)
    t.equal((await r.crawler.processNow(web.url(host, path), { reason: 'test' })).outcome, want, `${host}${path}`);
  t.notOk(
    log(r).some((e) => e.host === 'robots-500.test' && e.path === '/page.html'),
    'a 5xx robots.txt means no page fetch',
  );
  t.equal((await r.crawler.hosts.evidence('robots-500.test')).facts!.robots!.status, 'error_disallow_all');
});

t.test('hosts take turns when there are more ready hosts than slots', async (t) => {
  const r = await rig(t, { gapMs: 0, concurrency: 1 });
  for (const h of ['gen-0.test', 'gen-1.test', 'gen-2.test'])
    await r.crawler.enqueue(web.url(h, '/'), { priority: 'submitted', reason: 'seed' });
  await r.crawler.runUntilIdle({ maxPages: 12, timeoutMs: 20_000 });
  const first = r.outcomes.slice(0, 12).map((o) => new URL(o.url).hostname);
  for (const h of ['gen-0.test', 'gen-1.test', 'gen-2.test'])
    t.ok(first.filter((x) => x === h).length >= 3, `${h} served in turn: ${first.join(' ')}`);
});

t.test('odd statuses: 204 and 206 are not pages; 403 excludes and removes an indexed page', async (t) => {
  const r = await rig(t);
  const host = 'beta.test';
  t.teardown(() => {
    for (const p of ['/empty', '/partial', '/forbidden']) web.setPage(host, p, null);
  });
  web.setPage(host, '/empty', { status: 204, body: '' });
  web.setPage(host, '/partial', { status: 206, body: '<p>part</p>' });
  t.equal((await r.crawler.processNow(web.url(host, '/empty'), { reason: 'test' })).outcome, 'excluded:http_204');
  t.equal((await r.crawler.processNow(web.url(host, '/partial'), { reason: 'test' })).outcome, 'excluded:http_206');
  web.setPage(host, '/forbidden', {
    body: '<main><p>Public for now, a paragraph long enough to be the main text of this page.</p></main>',
  });
  const a = await r.crawler.processNow(web.url(host, '/forbidden'), { reason: 'test' });
  t.equal(a.outcome, 'indexed');
  web.setPage(host, '/forbidden', { status: 403, body: 'no' });
  const b = await r.crawler.processNow(web.url(host, '/forbidden'), { reason: 'test' });
  t.equal(b.outcome, 'excluded:http_403');
  t.equal(await r.index.getPage(a.pageRef!), null);
  t.same([r.documents.get(a.pageRef!)!.status, r.documents.get(a.pageRef!)!.reason], ['excluded', 'http_403']);
});
