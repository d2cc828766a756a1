import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import t from 'tap';
import { startTestWeb } from '../../fixtures/test-web/index.js';
import { api, startTestService } from '../helpers/service.js';

/**
 * The whole service over a real crawl: the crawler (robots, directives, politeness) fetches the local test web
 * on loopback into the real LanceDB index and SQLite state, then every surface answers over REST and MCP alike.
 */
t.test('crawl the test web, then answer over REST and MCP', async (t) => {
  const web = await startTestWeb({ generatedHosts: 0 });
  t.teardown(() => web.close());
  const s = await startTestService({
    perMinute: 10_000,
    config: { crawl: true, resolve: web.pins, crawlAllowLoopback: true, crawlGapMs: 20, images: true },
  });
  t.teardown(s.close);
  const crawler = s.services.crawler;
  if (!crawler) throw new Error('crawler expected');
  for (const host of ['alpha.test', 'ville-quebec.test', 'ontario-gov.test', 'gc-ca.test', 'shop-montreal.test']) {
    await crawler.enqueue(web.url(host, '/'), { priority: 'submitted', reason: 'seed' });
  }
  await crawler.enqueue(web.url('alpha.test', '/switchable.html'), { priority: 'submitted', reason: 'seed' });
  const stats = await crawler.runUntilIdle({ maxPages: 120, timeoutMs: 90_000 });
  t.ok(stats.indexed >= 15, `indexed ${stats.indexed} pages`);
  // New rows reach the full-text indexes by a debounced refresh (~1 s); fold them in now rather than wait.
  await s.services.deps.index.optimize();
  // And let the in-process postings reach that version: until they do, a search waits up to 2 s for them and LanceDB's
  // full-text index answers after that (f32 BM25 against the postings' f64, a unit apart in the 7th digit), so on a
  // loaded machine the REST and the MCP call below could be answered by different engines.
  await s.services.deps.index.textEngineReady();

  const client = new Client({ name: 'e2e', version: '1' });
  await client.connect(
    new StreamableHTTPClientTransport(new URL(s.url + '/mcp'), { requestInit: { headers: { Authorization: `Bearer ${s.key}` } } }),
  );
  t.teardown(() => client.close());
  // `since` of the fresh feed is derived from the clock at each call, so it is left out of the comparison.
  const stable = (v: unknown) => JSON.parse(JSON.stringify(v, (k, x) => (k === 'since' ? undefined : x)));
  const both = async (tool: string, args: Record<string, unknown>, rest: Promise<{ status: number; body: unknown }>) => {
    const r = await rest;
    const m = await client.callTool({ name: tool, arguments: args });
    t.equal(r.status, 200, `${tool} REST 200`);
    t.notOk(m.isError, `${tool} MCP ok`);
    t.same(stable(m.structuredContent), stable(r.body), `${tool}: MCP structuredContent equals REST JSON`);
    return r.body as Record<string, unknown>;
  };

  // Search: French text, operators, provenance, trust.
  type Result = { url: string; host: string; page_ref: number; content_trust: string; excerpt: { text: string } | null };
  const search = (await both(
    'svc_search',
    { q: 'bibliothèque Gabrielle-Roy', limit: 5, detail: 'full' },
    api(s, '/api/v1/search?q=' + encodeURIComponent('bibliothèque Gabrielle-Roy') + '&limit=5&detail=full'),
  )) as { results: Result[]; ranking: string };
  t.ok(search.results.length > 0, 'found the library page');
  t.equal(search.results[0]?.host, 'ville-quebec.test');
  t.ok(search.results.every((r) => r.content_trust === 'untrusted_web_content'));
  t.equal(search.ranking, 'bm25', 'no model configured: BM25, and the response says so');
  const siteQ = 'site:ontario-gov.test school';
  const scoped = (await api(s, '/api/v1/search?q=' + encodeURIComponent(siteQ) + '&detail=full')).body as { results: Result[] };
  t.ok(scoped.results.length > 0 && scoped.results.every((r) => r.host === 'ontario-gov.test'), 'site: restricts hosts');
  const negated = (await api(s, '/api/v1/search?q=' + encodeURIComponent('school -site:ontario-gov.test') + '&detail=full')).body as {
    results: Result[];
  };
  t.ok(
    negated.results.every((r) => r.host !== 'ontario-gov.test'),
    '-site: excludes the host',
  );

  // Robots and directives held: nothing disallowed or noindex is searchable; data-nosnippet never shown.
  const everything = async (q: string) =>
    ((await api(s, `/api/v1/search?q=${encodeURIComponent(q)}&limit=20`)).body as { results: Result[] }).results;
  for (const r of await everything('page')) {
    t.notMatch(
      r.url,
      /\/private\/|\/no-svcbot\/x\.html|\/meta\/noindex|\/header\/noindex|svcbot-noindex/,
      `${r.url} is allowed and indexable`,
    );
  }
  const nosnippetHits = await everything('SECRET-NOSNIPPET');
  for (const r of nosnippetHits) t.notMatch(r.excerpt?.text ?? '', /SECRET-NOSNIPPET/, 'data-nosnippet text never in an excerpt');

  // Context: cited, bounded, untrusted.
  const ctxBody = { query: 'collecte des ordures ménagères', max_tokens: 600, max_sources: 3 };
  const context = (await both('svc_context', ctxBody, api(s, '/api/v1/context', { method: 'POST', json: ctxBody }))) as {
    context: { source: string; passage: string; page_ref: number; cite: string; content_trust: string }[];
    tokens_estimated: number;
    token_budget: number;
    coverage: { passages: number; hosts: number };
  };
  t.ok(context.context.length > 0, 'context has passages');
  t.ok(context.tokens_estimated <= 600 && context.token_budget === 600, 'within the budget');
  t.ok(new Set(context.context.map((c) => c.source)).size <= 3, 'within max_sources');
  for (const c of context.context) {
    t.equal(c.content_trust, 'untrusted_web_content');
    t.notMatch(c.passage, /SECRET-NOSNIPPET/);
    t.match(c.cite, /—/);
  }

  // Page continuation, fresh feed, site evidence, entities, images.
  const ref = search.results[0]!.page_ref;
  const page = (await both('svc_page', { page_ref: ref, limit: 40 }, api(s, `/api/v1/passages?page_ref=${ref}&limit=40`))) as {
    total: number;
    passages: { ordinal: number }[];
  };
  t.ok(page.total >= 1 && page.passages.length === Math.min(40, page.total));
  t.same(
    page.passages.map((p) => p.ordinal),
    [...page.passages.keys()],
    'in order from 0',
  );
  const fresh = (await both('svc_fresh', { window: '1h', limit: 50 }, api(s, '/api/v1/fresh?window=1h&limit=50'))) as {
    pages: { change: string; host: string }[];
  };
  t.ok(fresh.pages.length > 0 && fresh.pages.every((p) => p.change === 'new'), 'every page is new in the last hour');
  const site = await both('svc_site', { host: 'alpha.test' }, api(s, '/api/v1/site/alpha.test'));
  t.match(site, { host: 'alpha.test' });
  t.match(JSON.stringify(site), /private/, 'robots rules that apply to SvcBot are shown');
  // issue 16: the scope adds up on a real crawl of alpha.test, and robots-disallowed links are known, as robots.
  type Scope = {
    known: number;
    indexed: number;
    excluded: { total: number; by_reason: Record<string, number> };
    queued: number;
    retrying: number;
    dead_lettered: number;
  };
  const scope = (site as { scope: Scope }).scope;
  t.equal(
    scope.known,
    scope.indexed + scope.excluded.total + scope.queued + scope.retrying + scope.dead_lettered,
    `issue 16: alpha.test scope adds up ${JSON.stringify(scope)}`,
  );
  t.equal(
    scope.excluded.total,
    Object.values(scope.excluded.by_reason).reduce((a, b) => a + b, 0),
  );
  t.ok((scope.excluded.by_reason['robots'] ?? 0) >= 3, 'private/, no-svcbot/x.html and file.pdf are known and excluded as robots');
  const ents = (await both('svc_entities', { q: 'Gabrielle-Roy' }, api(s, '/api/v1/entities?q=Gabrielle-Roy'))) as {
    entities: { id: string; name: string; address: { province: string | null } }[];
  };
  t.ok(
    ents.entities.some((e) => /Gabrielle-Roy/.test(e.name)),
    'the library declared in JSON-LD is an entity',
  );
  const imgs = (await both(
    'svc_images',
    { q: 'Façade Bibliothèque' },
    api(s, '/api/v1/images?q=' + encodeURIComponent('Façade Bibliothèque')),
  )) as { images: { image_url: string }[] };
  t.ok(
    imgs.images.some((i) => i.image_url.endsWith('/images/gabrielle-roy.jpg')),
    'image metadata found by alt text',
  );

  // A page that turns 410 disappears from every surface after it is fetched again.
  const gonePath = '/switchable.html';
  const goneUrl = web.url('alpha.test', gonePath);
  const before = await everything('switchable');
  const target = before.find((r) => r.url === goneUrl);
  t.ok(target, 'the switchable page was indexed');
  web.setPage('alpha.test', gonePath, { status: 410 });
  const outcome = await crawler.processNow(goneUrl, { reason: 'test' });
  t.equal(outcome.status, 410);
  t.notOk(
    (await everything('switchable')).some((r) => r.url === goneUrl),
    'gone from search',
  );
  if (target) {
    const p = await api(s, `/api/v1/passages?page_ref=${target.page_ref}`);
    t.equal(p.status, 404, 'gone from page continuation');
  }
  const fresh2 = (await api(s, '/api/v1/fresh?window=1h&limit=50')).body as { pages: { url: string }[] };
  t.notOk(
    fresh2.pages.some((p) => p.url === goneUrl),
    'gone from the fresh feed',
  );
});
