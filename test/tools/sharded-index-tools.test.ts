/**
 * The tools over an index of 3 shards (SVC_INDEX_SHARDS=3), through the real service: svc_search and svc_context answer
 * as the same service over one shard does (REST, same pages), host diversity and near-copy folding work across shards,
 * svc_page reads a page from whichever shard holds it, svc_site counts a host's near-copies spread over shards,
 * svc_images finds images of pages in every shard, and a removed page leaves every answer.
 */
import t, { type Test } from 'tap';
import { makePage } from '../helpers/page-input.js';
import { api, startTestService, type TestService } from '../helpers/service.js';
import { ShardedIndex, shardOf } from '../../index/shards/sharded-index.js';
import { PassageIndex } from '../../index/engines/lance/store.js';
import type { PageInput } from '../../page-model.js';

const NOW = new Date('2026-11-21T00:00:00Z');

const TEXTS = [
  'Adult passport fees and payment options for a ten-year passport.',
  'Renew a driver licence online, by mail or at a ServiceOntario centre.',
  'Current wildfire status, evacuation orders and air quality advisories.',
  'Apply for or renew a health care insurance card; passport or licence as proof.',
  'Passport photos: size, background and who may sign the guarantor declaration.',
  'Library hours and book loans at the central branch; passport services on Mondays.',
];
const HOSTS = ['www.canada.ca', 'www.ontario.ca', 'www.gov.bc.ca', 'www.alberta.ca'];

/** Pages with refs from the service's documents, so svc_site knows their host (and the refs are real ones). */
async function pagesFor(s: TestService): Promise<PageInput[]> {
  const out: PageInput[] = [];
  for (let i = 0; i < 16; i++) {
    const host = HOSTS[i % HOSTS.length]!;
    const url = `https://${host}/page-${i}`;
    const ref = await s.services.deps.repos.documents.allocate(url, host);
    out.push(
      makePage(ref, host, [TEXTS[i % TEXTS.length]!, `${TEXTS[(i + 1) % TEXTS.length]} Section ${i}.`], {
        url,
        title: `Page ${i} ${TEXTS[i % TEXTS.length]!.split(' ').slice(0, 3).join(' ')}`,
        publishedAt: '2026-10-01T00:00:00Z',
        dateSource: 'schema.org',
        // Pages 0 and 4 (one host) carry one text: near-copies, folded in results and counted by svc_site.
        contentHash: i === 4 ? 'hash-copy' : i === 0 ? 'hash-copy' : `hash-${i}`,
        images: [{ src: `https://${host}/img-${i}.png`, alt: `passport photo example ${i}`, width: 10, height: 10 }],
      }),
    );
  }
  return out;
}

async function service(t: Test, shards: number): Promise<{ s: TestService; pages: PageInput[] }> {
  const s = await startTestService({ perMinute: 10_000, now: () => NOW, config: { indexShards: shards, images: true }, embedder: null });
  t.teardown(() => s.close());
  const pages = await pagesFor(s);
  await s.services.deps.index.upsertPages(pages);
  await s.services.deps.index.optimize(); // the image alt-text index is built by maintenance
  return { s, pages };
}

/** A REST body without what differs between two services by design (timings, request ids). */
const answer = (body: unknown) => JSON.stringify(body, (k, v: unknown) => (k === 'took_ms' || k === 'request_id' ? undefined : v));

t.test('SVC_INDEX_SHARDS=3: the tools answer as over one shard, from pages spread over all three', async (t) => {
  const one = await service(t, 1);
  const three = await service(t, 3);
  t.ok(one.s.services.deps.index instanceof PassageIndex);
  const index = three.s.services.deps.index;
  t.ok(index instanceof ShardedIndex && index.shardCount === 3, 'the service opened 3 shards');
  const shardsUsed = new Set(three.pages.map((p) => shardOf(p.url, 3)));
  t.equal(shardsUsed.size, 3, 'the pages are spread over the 3 shards');

  for (const q of ['passport', 'passport licence renew', 'site:www.canada.ca passport', 'renew -passport', '"health care" card']) {
    for (const extra of ['', '&offset=2&limit=3', '&detail=full']) {
      const path = `/api/v1/search?q=${encodeURIComponent(q)}${extra}`;
      const [a, b] = [await api(one.s, path), await api(three.s, path)];
      t.equal(b.status, 200, path);
      t.equal(answer(b.body), answer(a.body), `svc_search ${q}${extra}: the same answer`);
    }
    const ctx = { method: 'POST', json: { query: q, max_tokens: 600, max_sources: 4 } };
    const [a, b] = [await api(one.s, '/api/v1/context', ctx), await api(three.s, '/api/v1/context', ctx)];
    t.equal(b.status, 200);
    t.equal(answer(b.body), answer(a.body), `svc_context ${q}: the same answer`);
  }

  // Host diversity over shards: "passport" matches pages of every host, at most 2 of one host per result page.
  const search = (await api(three.s, '/api/v1/search?q=passport&limit=10')).body as {
    results: { url: string; page_ref: number; duplicates?: number }[];
  };
  const perHost = new Map<string, number>();
  for (const r of search.results) perHost.set(new URL(r.url).host, (perHost.get(new URL(r.url).host) ?? 0) + 1);
  t.ok(search.results.length >= 4 && [...perHost.values()].every((n) => n <= 2), 'at most 2 results per host');
  // Near-copies in two shards fold into one result.
  const [p0, p4] = [three.pages[0]!, three.pages[4]!];
  t.not(shardOf(p0.url, 3), shardOf(p4.url, 3), 'the two copies are in different shards');
  const copies = search.results.filter((r) => r.page_ref === p0.pageRef || r.page_ref === p4.pageRef);
  t.equal(copies.length, 1, 'one of the two copies is shown');
  t.equal(copies[0]?.duplicates, 1, 'the other is folded into it');

  // svc_page: every page reads from its shard, with all its passages.
  for (const p of three.pages) {
    const res = await api(three.s, `/api/v1/passages?page_ref=${p.pageRef}`);
    t.equal(res.status, 200);
    t.match(res.body, { page_ref: p.pageRef, url: p.url, total: 2 });
  }

  // svc_site: the host's pages are in several shards; its near-copy is counted across them.
  const site = await api(three.s, `/api/v1/site/${p0.host}`);
  t.equal(site.status, 200);
  t.match(site.body, { scope: { near_duplicates: 1 } });
  t.same(
    (await api(three.s, `/api/v1/site/${p0.host}`)).body,
    (await api(one.s, `/api/v1/site/${p0.host}`)).body,
    'svc_site answers as over one shard',
  );

  // svc_images: the images of pages in every shard.
  const images = (await api(three.s, '/api/v1/images?q=passport%20photo&limit=20')).body as { images: { page_ref: number }[] };
  t.equal(images.images.length, 16, 'every page’s image');
  t.same(new Set(images.images.map((i) => shardOf(three.pages.find((p) => p.pageRef === i.page_ref)!.url, 3))).size, 3);

  // A removal reaches the shard that holds the page.
  const gone = three.pages[1]!;
  await index.removePage(gone.pageRef);
  t.equal((await api(three.s, `/api/v1/passages?page_ref=${gone.pageRef}`)).status, 404);
  const after = (await api(three.s, '/api/v1/search?q=licence&limit=20')).body as { results: { page_ref: number }[] };
  t.ok(after.results.length > 0);
  t.notOk(
    after.results.some((r) => r.page_ref === gone.pageRef),
    'a removed page is no longer found',
  );
  t.equal((await index.stats()).pages, 15);
});
