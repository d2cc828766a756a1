import t from 'tap';
import { isSvcError } from '../../errors.js';
import type { PageInput } from '../../page-model.js';
import { callTool } from '../../tools/call-tool.js';
import { searchTool } from '../../tools/search.js';
import { api, startTestService, type TestService } from '../helpers/service.js';
import { makePage } from '../helpers/page-input.js';

const caller = { keyId: 'test', digest: '0'.repeat(64) };

let nextRef = 1;
const page = (host: string, texts: string[], over: Partial<PageInput> = {}): PageInput => {
  const ref = nextRef++;
  return makePage(ref, host, texts, {
    title: `Passport information ${ref}`,
    publishedAt: '2026-10-01T00:00:00Z',
    dateSource: 'schema.org',
    ...over,
  });
};

async function service(t: { teardown(fn: () => unknown): void }): Promise<TestService> {
  const s = await startTestService({ now: () => new Date('2026-11-21T00:00:00Z') });
  t.teardown(() => s.close());
  return s;
}

// detail "full": these tests read the provenance fields; the default shape has its own test (test/tools/token-budgets.test.ts).
const search = async (s: TestService, input: Record<string, unknown>) => {
  const r = await callTool(searchTool, { detail: 'full', ...input }, { deps: s.services.deps, caller });
  return { ...r, results: r.results.map((x) => x as Required<typeof x>) };
};

t.test('empty index: well-formed empty result with a no_results warning', async (t) => {
  const s = await service(t);
  const r = await search(s, { q: 'passport' });
  t.same(r.results, []);
  t.equal(r.ranking, 'bm25');
  t.same(r.collapsed_per_host, {});
  t.same(
    r.warnings.map((w) => w.code),
    ['no_results'],
  );
  t.equal(r.limit, 10);
  t.equal(r.offset, 0);
});

t.test('an empty answer to a strict query says its operators made every other word required', async (t) => {
  const s = await service(t);
  await s.services.deps.index.upsertPages([page('news.example.org', ['Passport office wait times fell this autumn, officials said.'])]);
  const message = async (q: string) => {
    const r = await search(s, { q });
    const w = r.warnings.find((x) => x.code === 'no_results');
    return r.results.length === 0 ? w?.message : `answered: ${r.results.length}`;
  };
  // The phrase is there; "renewal" is not, and the phrase made it required.
  t.equal(await message('"passport office" wait'), 'answered: 1');
  const strict = await message('"passport office" renewal');
  t.match(
    strict,
    /^No indexed page matched the query and filters\. The query has operators \(a quoted phrase\), so each of its other words had to match/,
  );
  t.match(await message('renewal -autumn site:example.org passport'), /operators \(a -word exclusion, site:\)/);
  t.match(await message('passport intitle:renewal'), /operators \(intitle:\)/);
  // Nothing was made required: the plain message.
  t.equal(await message('renewal zebra'), 'No indexed page matched the query and filters.', 'a ranked query');
  t.equal(await message('"passport renewal"'), 'No indexed page matched the query and filters.', 'a strict query without bare words');
});

t.test('bounds are validated: 422 validation_failed', async (t) => {
  const s = await service(t);
  for (const bad of [
    { q: '' },
    { q: 'x'.repeat(301) },
    { q: 'a', limit: 21 },
    { q: 'a', limit: 0 },
    { q: 'a', offset: 91 },
    { q: 'a', language: "en' OR 1=1" },
  ]) {
    const err = await search(s, bad).then(
      () => null,
      (e: unknown) => e,
    );
    t.ok(isSvcError(err) && err.code === 'validation_failed', JSON.stringify(bad).slice(0, 60));
  }
});

t.test('results: excerpt with highlights, dates, provenance, trust; host diversity and site: exemption', async (t) => {
  const s = await service(t);
  const idx = s.services.deps.index;
  const pages = [
    ...Array.from({ length: 5 }, (_, i) =>
      page('www.canada.ca', [`Apply to renew your adult passport online, step ${i}. Renewal fees apply.`]),
    ),
    page('travel.example.com', ['Passport renewal tips for travellers before a trip abroad.']),
    page('news.example.org', ['Passport office wait times fell this autumn, officials said.']),
  ];
  await idx.upsertPages(pages);
  const r = await search(s, { q: 'passport', limit: 10 });
  t.equal(r.results.length, 4, '2 from canada.ca + 1 + 1');
  const perHost = new Map<string, number>();
  for (const x of r.results) perHost.set(x.host, (perHost.get(x.host) ?? 0) + 1);
  t.equal(perHost.get('www.canada.ca'), 2);
  t.same(r.collapsed_per_host, { 'www.canada.ca': 3 });
  const first = r.results.find((x) => x.host === 'travel.example.com')!;
  t.equal(first.content_trust, 'untrusted_web_content');
  t.equal(first.provenance.snippet, 'shown');
  t.equal(first.provenance.date_source, 'schema.org');
  t.equal(first.provenance.fetched_at, '2026-11-20T12:00:00Z');
  t.same(first.dates, { published: '2026-10-01T00:00:00Z', modified: null, fetched: '2026-11-20T12:00:00Z' });
  t.ok(first.excerpt);
  for (const [a, b] of first.excerpt!.highlights!) t.equal(first.excerpt!.text.slice(a, b).toLowerCase(), 'passport');
  t.ok(first.excerpt!.highlights!.length > 0);

  const page2 = await search(s, { q: 'passport', limit: 4, offset: 4 });
  t.same(
    page2.results.map((x) => x.host),
    ['www.canada.ca', 'www.canada.ca'],
    'capped results move to later pages',
  );

  const site = await search(s, { q: 'passport site:canada.ca' });
  t.equal(site.results.length, 5, 'a positive site: is exempt from the cap');
  t.same(site.collapsed_per_host, {});
  t.ok(site.results.every((x) => x.host === 'www.canada.ca'));
});

t.test('snippet policies: nosnippet, max-snippet, data-nosnippet', async (t) => {
  const s = await service(t);
  const idx = s.services.deps.index;
  const nos = page('a.example', ['Passport secrets nobody may quote.'], { snippet: { nosnippet: true, maxSnippet: null } });
  const max = page(
    'b.example',
    ['Passport renewal explained at length with many additional words that go on and on to exceed a short limit.'],
    {
      snippet: { nosnippet: false, maxSnippet: 40 },
    },
  );
  const hidden = page('c.example', []);
  const withHidden: PageInput = {
    ...hidden,
    passages: [
      { ordinal: 0, text: 'Passport visible part. HIDDENCODE 12345 part.', snippetText: 'Passport visible part.  part.', headingPath: [] },
    ],
  };
  await idx.upsertPages([nos, max, withHidden]);
  const r = await search(s, { q: 'passport' });
  const by = (h: string) => r.results.find((x) => x.host === h)!;
  t.equal(by('a.example').excerpt, null);
  t.equal(by('a.example').provenance.snippet, 'nosnippet');
  t.ok(by('b.example').excerpt!.text.length <= 40);
  t.equal(by('b.example').provenance.snippet, 'max_snippet');
  t.notMatch(by('c.example').excerpt!.text, /HIDDENCODE/);
  t.same(
    r.warnings
      .filter((w) => w.code === 'snippet_restricted')
      .map((w) => w.source)
      .sort(),
    [nos.url, max.url].sort(),
  );
  const found = await search(s, { q: 'hiddencode' });
  t.equal(found.results.length, 1, 'data-nosnippet text stays searchable');
  t.notMatch(JSON.stringify(found.results[0]!.excerpt), /HIDDENCODE/, 'but never shown');
});

t.test('near-duplicates collapse; removed pages disappear; REST equals the tool output', async (t) => {
  const s = await service(t);
  const idx = s.services.deps.index;
  const a = page('x.example', ['Municipal passport clinic schedule for November.'], { contentHash: 'same' });
  const b = page('y.example', ['Municipal passport clinic schedule for November.'], { contentHash: 'same' });
  const c = page('z.example', ['Passport clinic closed on holidays.'], { canonicalUrl: 'https://x.example/canonical' });
  const d = page('w.example', ['Passport clinic copy.'], { canonicalUrl: 'https://x.example/canonical' });
  await idx.upsertPages([a, b, c, d]);
  const r = await search(s, { q: 'passport clinic' });
  t.equal(r.results.length, 2);
  t.equal(r.duplicates_collapsed, 2);
  const rest = await api(s, '/api/v1/search?q=passport%20clinic&detail=full');
  t.equal(rest.status, 200);
  t.same(rest.body, r, 'GET /api/v1/search returns the tool output');
  for (const x of r.results) await idx.removePage(x.page_ref);
  const after = await search(s, { q: 'passport clinic' });
  t.notOk(after.results.some((x) => r.results.some((y) => y.page_ref === x.page_ref)));
});

t.test('invalid operator values warn and match nothing', async (t) => {
  const s = await service(t);
  await s.services.deps.index.upsertPage(page('www.canada.ca', ['Passport fees.']));
  const r = await search(s, { q: "passport site:'; DROP TABLE passages" });
  t.same(r.results, []);
  t.ok(r.warnings.some((w) => w.code === 'query_ignored_terms'));
});
