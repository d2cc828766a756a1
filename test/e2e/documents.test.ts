/**
 * Issue 16 end to end: PDFs, plain text and Markdown from the fixture web's docs.test go through the real crawl
 * (robots, X-Robots-Tag, size cap, politeness) into the real index, and come back through REST and MCP alike:
 * svc_search with filetype: (positive, negated, alternatives), svc_context cites with PDF page numbers, svc_page
 * continues a PDF in page order, and svc_site's URL scope adds up.
 */
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import t from 'tap';
import { createCrawler } from '../../crawler/crawler.js';
import { startTestWeb } from '../../fixtures/test-web/index.js';
import { fillerText, makeEncryptedPdf, makePdf, makeScannedPdf } from '../helpers/pdf-fixtures.js';
import { api, startTestService } from '../helpers/service.js';
import { sqliteRepositories } from '../../state/repos/sqlite.js';

const MAX_BYTES = 160 * 1024;
const PDF = 'application/pdf';

t.test('issue 16: PDF, text and Markdown documents from crawl to search, context, page and site evidence', async (t) => {
  const annual = await makePdf(
    [
      {
        heading: 'Drinking water quality',
        paragraphs: ['Turbidity stayed below the provincial limit in every district of the town.', fillerText(1, 80)],
      },
      { heading: 'Lead service lines', paragraphs: ['Replacement of lead service lines continued on Harbour Street.', fillerText(2, 80)] },
    ],
    {
      title: 'Annual Water Quality Report 2025',
      author: 'Water Services',
      language: 'en-CA',
      created: new Date('2025-02-03T04:05:06Z'),
      modified: new Date('2025-03-04T00:00:00Z'),
    },
  );
  const bylawPages = Array.from({ length: 12 }, (_, i) => ({
    heading: `Part ${i + 1}`,
    paragraphs: [
      i === 6 ? 'Buildings in the heritage district keep their original facade and cornice.' : `Provisions of part ${i + 1} of the bylaw.`,
      fillerText(10 + i, 260),
    ],
  }));
  const bylaw = await makePdf(bylawPages, { title: 'Zoning Bylaw 2024-17', created: new Date('2024-06-01T00:00:00Z') });
  const good = await makePdf([{ paragraphs: ['Truncated documents never reach the index.'] }], { title: 'Truncated' });
  const huge = await makePdf(
    Array.from({ length: 160 }, (_, i) => ({ paragraphs: [fillerText(100 + i, 330)] })),
    { title: 'Huge atlas' },
  );
  t.ok(
    huge.byteLength > MAX_BYTES && bylaw.byteLength < MAX_BYTES,
    `huge ${huge.byteLength} B > cap ${MAX_BYTES} B > bylaw ${bylaw.byteLength} B`,
  );
  const web = await startTestWeb({
    generatedHosts: 0,
    documents: {
      '/reports/annual-2025.pdf': { type: PDF, body: Buffer.from(annual) },
      '/bylaws/zoning': { type: PDF, body: Buffer.from(bylaw) }, // no extension: Content-Type decides
      '/notices/closed-session.pdf': { type: PDF, body: Buffer.from(await makeEncryptedPdf()) },
      '/notices/scanned.pdf': { type: PDF, body: Buffer.from(await makeScannedPdf()) },
      '/reports/truncated.pdf': { type: PDF, body: Buffer.from(good.slice(0, Math.floor(good.byteLength * 0.6))) },
      '/reports/draft.pdf': { type: PDF, body: Buffer.from(good), headers: { 'x-robots-tag': 'noindex' } },
      '/atlas/huge.pdf': { type: PDF, body: Buffer.from(huge) },
    },
  });
  t.teardown(() => web.close());
  const s = await startTestService({
    perMinute: 10_000,
    config: { crawl: false, resolve: web.pins, crawlAllowLoopback: true, crawlGapMs: 10, crawlMaxBytes: MAX_BYTES },
  });
  t.teardown(s.close);
  const { config, index } = s.services.deps;
  const { db, entities } = s.services.local;
  // The service's own stores, with a crawler whose retries are short (the fixture's /broken fails every time).
  const crawler = createCrawler({
    config,
    repos: sqliteRepositories(db, { defaultGapMs: config.crawlGapMs }),
    sink: index,
    entities,
    maxCrawlDelayMs: 100,
    frontier: { retryBaseMs: 10, retryMaxMs: 50, maxAttempts: 2 },
    fetchTimeouts: { connectTimeoutMs: 2000, headersTimeoutMs: 5000, totalTimeoutMs: 10_000 },
  });
  t.teardown(() => crawler.stop());
  await crawler.enqueue(web.url('docs.test', '/'), { priority: 'submitted', reason: 'seed' });

  type Scope = {
    known: number;
    indexed: number;
    excluded: { total: number; by_reason: Record<string, number> };
    queued: number;
    retrying: number;
    dead_lettered: number;
  };
  const scopeOf = async (): Promise<Scope> => ((await api(s, '/api/v1/site/docs.test')).body as { scope: Scope }).scope;
  const addsUp = (sc: Scope, when: string): void => {
    t.equal(
      sc.known,
      sc.indexed + sc.excluded.total + sc.queued + sc.retrying + sc.dead_lettered,
      `${when}: known = indexed + excluded + queued + retrying + dead`,
    );
    t.equal(
      sc.excluded.total,
      Object.values(sc.excluded.by_reason).reduce((a, b) => a + b, 0),
      `${when}: excluded = sum of its reasons`,
    );
  };

  // Part way: some URLs are still queued, and the scope adds up already.
  await crawler.runUntilIdle({ maxPages: 4, timeoutMs: 60_000 });
  const partial = await scopeOf();
  t.ok(partial.queued > 0, `part way, ${partial.queued} URLs queued`);
  addsUp(partial, 'part way');

  await crawler.runUntilIdle({ timeoutMs: 120_000 });
  await index.optimize();

  // Site evidence: every URL in exactly one state, with the reason it is not indexed.
  const scope = await scopeOf();
  addsUp(scope, 'after the crawl');
  t.same(scope, {
    known: 17,
    // /, the two PDFs, notes.txt, guide.md, readme
    indexed: 6,
    excluded: {
      total: 10,
      by_reason: {
        robots: 2,
        encrypted: 1,
        no_text_layer: 1,
        parse_error: 1,
        noindex: 1,
        too_large: 1,
        gone: 1,
        redirect: 1,
        unsupported_type: 1,
      },
    },
    queued: 0,
    retrying: 0,
    dead_lettered: 1,
    near_duplicates: 0,
  });
  t.equal(web.requests('docs.test', '/private/minutes.pdf').length, 0, 'robots-disallowed documents are never fetched');

  const client = new Client({ name: 'issue-16', version: '1' });
  await client.connect(
    new StreamableHTTPClientTransport(new URL(s.url + '/mcp'), { requestInit: { headers: { Authorization: `Bearer ${s.key}` } } }),
  );
  t.teardown(() => client.close());
  const both = async (
    tool: string,
    args: Record<string, unknown>,
    rest: Promise<{ status: number; body: unknown }>,
  ): Promise<Record<string, unknown>> => {
    const r = await rest;
    const m = await client.callTool({ name: tool, arguments: args });
    t.equal(r.status, 200, `${tool} REST 200`);
    t.notOk(m.isError, `${tool} MCP ok`);
    t.same(m.structuredContent, r.body, `${tool}: MCP structuredContent equals REST JSON`);
    return r.body as Record<string, unknown>;
  };
  type Result = {
    url: string;
    title: string;
    filetype: string;
    page_ref: number;
    dates: { published: string | null; modified: string | null };
    provenance: { date_source: string; passage_page: number | null };
  };
  const search = async (q: string): Promise<Result[]> =>
    (
      (await both(
        'svc_search',
        { q, limit: 20, detail: 'full' },
        api(s, `/api/v1/search?q=${encodeURIComponent(q)}&limit=20&detail=full`),
      )) as { results: Result[] }
    ).results;

  // filetype:pdf finds the PDF, with its metadata title, dates and their source, and the page of the passage.
  const pdfHits = await search('turbidity filetype:pdf');
  t.equal(pdfHits.length, 1);
  t.match(pdfHits[0], {
    url: web.url('docs.test', '/reports/annual-2025.pdf'),
    title: 'Annual Water Quality Report 2025',
    filetype: 'pdf',
    dates: { published: '2025-02-03T04:05:06.000Z', modified: '2025-03-04T00:00:00.000Z' },
    provenance: { date_source: 'pdf-metadata', passage_page: 1 },
  });
  t.same(await search('turbidity -filetype:pdf'), [], '-filetype:pdf leaves it out');
  // A word in PDFs, text, Markdown and HTML alike: filetype: narrows, negates and ORs by the document's real type
  // (site: lifts the two-per-host diversity cap, so every document of the host can be listed).
  const all = await search('site:docs.test residents');
  t.same(
    [...new Set(all.map((r) => r.filetype))].sort(),
    ['html', 'md', 'pdf', 'txt'],
    `every type found: ${all.map((r) => r.url).join(' ')}`,
  );
  const pdfOnly = await search('site:docs.test residents filetype:pdf');
  t.ok(pdfOnly.length > 0 && pdfOnly.every((r) => r.filetype === 'pdf'), 'filetype:pdf');
  t.same(
    [...new Set((await search('site:docs.test residents -filetype:pdf')).map((r) => r.filetype))].sort(),
    ['html', 'md', 'txt'],
    '-filetype:pdf',
  );
  t.same(
    [...new Set((await search('site:docs.test residents filetype:md filetype:txt')).map((r) => r.filetype))].sort(),
    ['md', 'txt'],
    'two filetypes are alternatives',
  );
  const bylawHit = (await search('heritage facade cornice'))[0];
  t.match(bylawHit, {
    url: web.url('docs.test', '/bylaws/zoning'),
    filetype: 'pdf',
    title: 'Zoning Bylaw 2024-17',
    provenance: { passage_page: 7 },
  });
  t.match((await search('"council chamber" hearing loop'))[0], {
    url: web.url('docs.test', '/readme'),
    filetype: 'md',
    title: 'Council chamber accessibility',
  });
  // Nothing of the excluded documents is searchable.
  for (const q of ['+confidential +closed +session', '+truncated +documents', '+huge +atlas'])
    t.same(await search(q), [], `${q}: not indexed`);

  // Context: the cite names the PDF page, the item says the filetype (detail "full"); filetype: works there too.
  type Item = { source: string; page_ref: number; cite: string; filetype: string; passage: string };
  const ctxBody = { query: 'heritage district facade cornice', max_tokens: 800, max_sources: 3, detail: 'full' };
  const ctx = (await both('svc_context', ctxBody, api(s, '/api/v1/context', { method: 'POST', json: ctxBody }))) as { context: Item[] };
  const cited = ctx.context.find((c) => c.source === web.url('docs.test', '/bylaws/zoning'));
  t.ok(cited, 'the bylaw is in the context');
  t.match(cited, { filetype: 'pdf', cite: /^Zoning Bylaw 2024-17 — docs\.test — 2024-06-01 — p\. 7$/ });
  t.match(cited?.passage ?? '', /heritage district/);
  const noPdf = { query: 'heritage district facade cornice -filetype:pdf', max_tokens: 800, max_sources: 3 };
  t.same(
    ((await both('svc_context', noPdf, api(s, '/api/v1/context', { method: 'POST', json: noPdf }))) as { context: Item[] }).context,
    [],
  );

  // svc_page continues the PDF in order, page numbers rising from 1 to 12.
  type PageOut = { total: number; passages: { ordinal: number; page_number: number | null; text: string }[]; next_offset?: number };
  const read: PageOut['passages'] = [];
  let offset: number | undefined = 0;
  while (offset !== undefined) {
    const page = (await both(
      'svc_page',
      { page_ref: bylawHit!.page_ref, offset, limit: 5 },
      api(s, `/api/v1/passages?page_ref=${bylawHit!.page_ref}&offset=${offset}&limit=5`),
    )) as PageOut;
    read.push(...page.passages);
    offset = page.next_offset;
  }
  t.same(
    read.map((p) => p.ordinal),
    [...read.keys()],
    'every passage once, in order',
  );
  const pageNumbers = read.map((p) => p.page_number ?? 0);
  t.same(
    pageNumbers,
    [...pageNumbers].sort((a, b) => a - b),
    'page numbers never go back',
  );
  t.same(
    [...new Set(pageNumbers)],
    Array.from({ length: 12 }, (_, i) => i + 1),
    'pages 1 to 12',
  );
  t.equal(read.find((p) => p.text.includes('heritage district'))?.page_number, 7);
  const html = (await search('town documents bylaws'))[0];
  const htmlPage = (await api(s, `/api/v1/passages?page_ref=${html!.page_ref}`)).body as PageOut;
  t.ok(
    htmlPage.passages.every((p) => p.page_number === null),
    'HTML passages have no page number',
  );
});
