/**
 * An engine image's page records and per-document filter attributes are read in place: a reader that loads an image
 * holds no page record of its own until a query reads one (then only the pages it read), and answers filtered
 * queries and result rows exactly as a reader that scanned the table, including pages written after the image.
 */
import t from 'tap';
import { createHashingEmbedder } from '../../index/serving/embedder.js';
import { PassageIndex } from '../../index/engines/lance/store.js';
import { retrieve, type SearchFilters } from '../../index/retrieval/retrieval.js';
import { makePage } from '../helpers/page-input.js';

const NOW = new Date('2026-11-28T00:00:00Z');
const HOSTS = ['www.canada.ca', 'www.ontario.ca', 'b.example'];
const page = (ref: number, words: string) =>
  makePage(ref, HOSTS[ref % 3]!, [`${words} vitamin`, `bone density ${ref}`], {
    lang: ref % 2 ? 'fr' : 'en',
    title: `Title ${words}`,
  });

t.test('a reader from an image decodes only the pages its queries read, and answers as a scanning reader', async (t) => {
  const dir = t.testdir();
  const embedder = createHashingEmbedder(32);
  const writer = await PassageIndex.open({ dir, embedder, refreshAfterMs: 0, engineSegments: true });
  await writer.upsertPages(Array.from({ length: 40 }, (_, i) => page(i + 1, i % 4 ? 'river sleep' : 'zinc memory')));
  await writer.engineImageNow();
  await writer.close();
  // After the image: a page rewritten, one removed, one added (the reader catches them up from the table).
  const late = await PassageIndex.open({ dir, embedder, textEngine: false, refreshAfterMs: 0 });
  await late.upsertPages([page(4, 'zinc permit'), page(41, 'zinc river')]);
  await late.removePage(8);
  await late.close();

  const fromImage = await PassageIndex.open({ dir, embedder, writes: false, engineSegments: true });
  const scanned = await PassageIndex.open({ dir, embedder, writes: false });
  try {
    await fromImage.textEngineReady();
    await scanned.textEngineReady();
    const st = fromImage.textPostingsStats()!;
    t.equal(st.syncs.loads, 1, 'started from the image');
    t.equal(st.pageRecords.inImage, 40);
    // The catch-up's own: the rewritten page and the new one (the removed page is only marked gone).
    t.equal(st.pageRecords.records, 2, 'no record built per page of the image');
    const filters: SearchFilters[] = [{}, { language: 'fr' }, { language: 'en' }, { country: 'ca' }];
    for (const f of filters)
      for (const query of ['zinc', 'river sleep', 'vitamin', 'permit', 'site:www.ontario.ca vitamin', 'bone -site:b.example']) {
        const ask = (idx: PassageIndex) => retrieve(idx, { query, mode: 'bm25', filters: f, now: NOW });
        const a = (await ask(fromImage)).passages;
        const b = (await ask(scanned)).passages;
        const key = (p: (typeof a)[number]) => `${p.row.page_ref}:${p.row.ordinal}:${p.row.title}:${p.row.host}`;
        t.same(a.map(key), b.map(key), `${query} ${JSON.stringify(f)}`);
        // The fields a result shows, from the page records (title, host, url) and the snippet store.
        const shown = async (idx: PassageIndex, rows: typeof a) =>
          [...(await idx.resultRows(rows.map((p) => p.row)))].map(([k, r]) => [k, r.snippet_text, r.title, r.host, r.url].join('|')).sort();
        t.same(await shown(fromImage, a), await shown(scanned, b));
      }
    const read = fromImage.textPostingsStats()!.pageRecords.records;
    t.ok(read > 2 && read <= 41, `records after queries: ${read}`);
    t.notOk(
      (await retrieve(fromImage, { query: 'bone', mode: 'bm25', filters: {}, now: NOW })).passages.some((p) => p.row.page_ref === 8),
      'the removed page is gone',
    );
  } finally {
    await fromImage.close();
    await scanned.close();
  }
});
