/**
 * Near-copies of one real article through the real server (REST): the article page, the same article as a bare
 * print page on a mirror host, and the article page with navigation, a footer, comments, a date line and a syndication note added under another
 * URL of its own host. svc_search shows one of them with `duplicates: 2` (the other two reachable by page_ref under
 * detail "full"), svc_context quotes no text twice, svc_site counts the host's near-copy.
 */
import t from 'tap';
import { passageTextKey } from '../../index/retrieval/context-packer.js';
import type { PageInput } from '../../page-model.js';
import { readPairs, specHtml, specUrl, type PageSpec } from '../helpers/near-duplicate-pairs.js';
import { extractedPage } from '../helpers/page-input.js';
import { api, startTestService, type TestService } from '../helpers/service.js';

const { pairs } = readPairs();
// An article of the labelled set that has a print-page form, and an article of another site.
const article = pairs.find((p) => p.kind === 'print')!.a;
const other = pairs.find((p) => p.kind === 'different' && p.a.id !== article.id && p.b.id !== article.id)!.b;

/** A page as the crawler would index it, under `url`. */
function pageOf(spec: PageSpec, pageRef: number, url: string): PageInput {
  return extractedPage(specHtml(spec), pageRef, url, specUrl(spec));
}

interface SearchBody {
  results: { url: string; page_ref: number; duplicates?: number; provenance?: { duplicate_refs?: number[] } }[];
  duplicates_collapsed: number;
}

let s: TestService;
const refs: Record<'page' | 'mirror' | 'variant' | 'other', number> = { page: 0, mirror: 0, variant: 0, other: 0 };
let query = '';

t.before(async () => {
  s = await startTestService({ perMinute: 10_000 });
  const docs = s.services.deps.repos.documents;
  const host = new URL(specUrl(article)).host;
  const urls = {
    page: specUrl(article),
    mirror: `https://mirror.test/syndicated/${article.id.slice(0, 12)}`,
    variant: `https://${host}/print/${article.id.slice(0, 12)}`,
    other: specUrl(other),
  };
  const specs: Record<keyof typeof urls, PageSpec> = {
    page: article,
    mirror: { ...article, form: 'truth' },
    variant: { ...article, edits: ['nav', 'footer', 'comments', 'note', 'date'] },
    other,
  };
  const pages: PageInput[] = [];
  for (const k of ['page', 'mirror', 'variant', 'other'] as const) {
    refs[k] = await docs.allocate(urls[k], new URL(urls[k]).host);
    const p = pageOf(specs[k], refs[k], urls[k]);
    await docs.recordIndexed(refs[k], { contentHash: p.contentHash, title: p.title, at: p.fetchedAt });
    pages.push(p);
  }
  // The three copies differ as texts (no shared content hash): only their prints can fold them.
  t.equal(new Set(pages.slice(0, 3).map((p) => p.contentHash)).size, 3);
  await s.services.deps.index.upsertPages(pages);
  // A query from the article body's own words (the print page has no headline), so every copy matches it.
  query = pages[1]!.passages[0]!.text.split(/\s+/).slice(0, 12).join(' ');
});
t.teardown(() => s?.close());

t.test('issue 45: svc_search shows one copy with duplicates: 2; detail "full" names the other two by page_ref', async (t) => {
  const copies = [refs.page, refs.mirror, refs.variant];
  const brief = await api(s, `/api/v1/search?q=${encodeURIComponent(query)}&limit=10`);
  t.equal(brief.status, 200);
  const body = brief.body as SearchBody;
  const shown = body.results.filter((r) => copies.includes(r.page_ref));
  t.equal(shown.length, 1, 'one of the three copies is shown');
  t.equal(shown[0]?.duplicates, 2);
  t.ok(body.duplicates_collapsed >= 2);
  t.notOk(
    body.results.some((r) => r.page_ref === refs.other && r.duplicates !== undefined),
    'an unrelated article has no duplicates',
  );
  const full = (await api(s, `/api/v1/search?q=${encodeURIComponent(query)}&limit=10&detail=full`)).body as SearchBody;
  const kept = full.results.find((r) => copies.includes(r.page_ref))!;
  t.equal(kept.page_ref, shown[0]?.page_ref);
  t.same(
    [...(kept.provenance?.duplicate_refs ?? [])].sort((a, b) => a - b),
    copies.filter((r) => r !== kept.page_ref).sort((a, b) => a - b),
  );
  // The folded copies stay reachable: svc_page reads them by page_ref.
  for (const ref of kept.provenance?.duplicate_refs ?? []) {
    const page = await api(s, `/api/v1/passages?page_ref=${ref}`);
    t.equal(page.status, 200, `page ${ref} reads`);
  }
});

t.test('issue 45: svc_context quotes no text twice and takes one copy of the article', async (t) => {
  const res = await api(s, '/api/v1/context', { method: 'POST', json: { query, max_tokens: 3000, max_sources: 10 } });
  t.equal(res.status, 200);
  const items = (res.body as { context: { passage: string; page_ref: number }[] }).context;
  t.ok(items.length > 0);
  const keys = items.flatMap((i) => i.passage.split('\n\n').map(passageTextKey)).filter((k) => k !== '');
  t.equal(new Set(keys).size, keys.length, 'no passage text repeated');
  const copies = new Set(items.map((i) => i.page_ref).filter((r) => [refs.page, refs.mirror, refs.variant].includes(r)));
  t.equal(copies.size, 1);
});

t.test("issue 45: svc_site counts a host's near-copy pages", async (t) => {
  const host = new URL(specUrl(article)).host;
  const site = await api(s, `/api/v1/site/${host}`);
  t.equal(site.status, 200);
  t.match(site.body, { scope: { indexed: 2, near_duplicates: 1 } });
  const mirror = await api(s, '/api/v1/site/mirror.test');
  t.match(mirror.body, { scope: { indexed: 1, near_duplicates: 0 } }, 'a copy on another host is not counted there');
});
