/**
 * Persisted engine segments: random corpora written in batches, with pages replaced and removed, compactions and
 * segments published at random points; a reader that starts from the newest segment and catches up by row-id
 * difference must hold exactly the table's passages and answer operator queries (filtered or not) with exactly the
 * passages, result rows and vector neighbours of a reader that scanned the whole table.
 */
import t from 'tap';
import fc from 'fast-check';
import { readdirSync } from 'node:fs';
import { join } from 'node:path';
import * as lancedb from '@lancedb/lancedb';
import { createHashingEmbedder } from '../../index/serving/embedder.js';
import { SEGMENTS_FOLDER } from '../../index/engines/lance/engine-segments.js';
import { retrieve, type SearchFilters } from '../../index/retrieval/retrieval.js';
import { PassageIndex } from '../../index/engines/lance/store.js';
import { makePage } from '../helpers/page-input.js';

const VOCAB = ['vitamin', 'library', 'bone', 'density', 'river', 'cells', 'memory', 'sleep', 'zinc', 'permit'];
const HOSTS = ['www.canada.ca', 'www.ontario.ca', 'b.example'];
const NOW = new Date('2026-11-28T00:00:00Z');

const word = fc.constantFrom(...VOCAB);
const pageArb = fc.record({
  ref: fc.integer({ min: 1, max: 30 }),
  host: fc.constantFrom(...HOSTS),
  lang: fc.constantFrom('en', 'fr'),
  title: fc.array(word, { minLength: 1, maxLength: 2 }),
  passages: fc.array(fc.array(word, { minLength: 1, maxLength: 6 }), { minLength: 1, maxLength: 3 }),
});
/** What happens after a batch is written. */
const stepArb = fc.record({
  pages: fc.array(pageArb, { minLength: 1, maxLength: 8 }),
  remove: fc.option(fc.integer({ min: 1, max: 30 }), { freq: 3 }),
  compact: fc.boolean(),
  publish: fc.boolean(),
});
const queryArb = fc.record({
  words: fc.array(word, { minLength: 1, maxLength: 3 }),
  required: fc.option(word, { freq: 3 }),
  excluded: fc.option(word, { freq: 3 }),
  filters: fc.constantFrom<SearchFilters>({}, {}, { language: 'en' }, { language: 'fr' }),
});
type Query = typeof queryArb extends fc.Arbitrary<infer Q> ? Q : never;
const queryText = (q: Query) =>
  [...q.words, ...(q.required ? [`+${q.required}`] : []), ...(q.excluded ? [`-${q.excluded}`] : [])].join(' ');

const keyOf = (p: { row: { page_ref: number; ordinal: number } }) => `${p.row.page_ref}:${p.row.ordinal}`;

t.test('a reader started from persisted segments answers exactly as one that scanned the table', async (t) => {
  let loaded = 0;
  let caughtUp = 0;
  let nonEmpty = 0;
  await fc.assert(
    fc.asyncProperty(
      fc.array(stepArb, { minLength: 1, maxLength: 5 }),
      fc.option(fc.array(pageArb, { minLength: 1, maxLength: 4 })),
      fc.array(queryArb, { minLength: 8, maxLength: 8 }),
      async (steps, tail, queries) => {
        const dir = t.testdir();
        const embedder = createHashingEmbedder(32);
        const writer = await PassageIndex.open({
          dir,
          embedder,
          refreshAfterMs: 0,
          optimizeEvery: 1_000_000,
          // Only the explicit publications below (and the first image of the first build).
          engineSegments: { minChangedDocs: Infinity, afterMs: Infinity, graceMs: 0 },
        });
        let published = false;
        try {
          for (const s of steps) {
            await writer.upsertPages(
              s.pages.map((p) =>
                makePage(
                  p.ref,
                  p.host,
                  p.passages.map((w) => w.join(' ')),
                  { lang: p.lang, title: p.title.join(' '), contentHash: `h${p.ref}-${p.passages.length}` },
                ),
              ),
            );
            if (s.remove !== null) await writer.removePage(s.remove);
            if (s.compact) await writer.optimize();
            if (s.publish) {
              await writer.engineImageNow();
              published = true;
            }
          }
          await writer.textEngineReady();
        } finally {
          await writer.close();
        }
        if (tail) {
          // Written after the newest segment by a process that publishes none: a reader must catch up to it.
          const late = await PassageIndex.open({ dir, embedder, textEngine: false, refreshAfterMs: 0 });
          await late.upsertPages(
            tail.map((p) =>
              makePage(
                p.ref,
                p.host,
                p.passages.map((w) => w.join(' ')),
                { lang: p.lang },
              ),
            ),
          );
          await late.close();
        }
        const manifests = readdirSync(join(dir, SEGMENTS_FOLDER)).filter((n) => n.startsWith('manifest-'));
        if (manifests.length === 0) throw new Error('the writer published no segment');
        const fromSegments = await PassageIndex.open({ dir, embedder, writes: false, engineSegments: true });
        const scanned = await PassageIndex.open({ dir, embedder, writes: false });
        try {
          await fromSegments.textEngineReady();
          await scanned.textEngineReady();
          const st = fromSegments.textPostingsStats()!;
          // Started from a segment; caught up without a scan of the text, unless the rows replaced after it left more
          // tombstones than the postings keep (then they are rebuilt, as any reader's are: text-engine.ts).
          if (st.syncs.loads !== 1 || (st.syncs.builds !== 0 && !tail))
            throw new Error(`the reader did not start from a segment: ${JSON.stringify(st.syncs)}`);
          loaded++;
          // Loaded at an older version than the table's: the row-id difference brought it up to date.
          if (st.syncs.scans > 0) caughtUp++;
          else if (tail) throw new Error('a reader did not catch up to the writes after the segment');
          if (published && st.snippets.docs === 0 && st.live > 0) throw new Error('the segment brought no snippet text');
          // Every passage of the table once, none else.
          const db = await lancedb.connect(dir);
          const table = await db.openTable('passages');
          const rows = await table.countRows();
          table.close();
          db.close();
          if (st.live !== rows) throw new Error(`live passages ${st.live}, table rows ${rows}`);
          for (const q of queries) {
            const query = queryText(q);
            const ask = (idx: PassageIndex, mode: 'bm25' | 'vector') => retrieve(idx, { query, mode, filters: q.filters, now: NOW });
            const a = (await ask(fromSegments, 'bm25')).passages;
            const b = (await ask(scanned, 'bm25')).passages;
            const got = a.map(keyOf).sort();
            const want = b.map(keyOf).sort();
            if (JSON.stringify(got) !== JSON.stringify(want)) throw new Error(`${query}: got ${got.join(',')} want ${want.join(',')}`);
            if (want.length > 0) nonEmpty++;
            // Result rows (their snippet text from the loaded store) as the scanning reader reads them.
            const ra = await fromSegments.resultRows(a.map((p) => p.row));
            const rb = await scanned.resultRows(b.map((p) => p.row));
            for (const k of got) {
              const x = ra.get(k);
              const y = rb.get(k);
              if (!x || !y || x.snippet_text !== y.snippet_text || x.title !== y.title || x.host !== y.host)
                throw new Error(`${query}: result row ${k} differs`);
            }
            const va = (await ask(fromSegments, 'vector')).passages.map(keyOf);
            const vb = (await ask(scanned, 'vector')).passages.map(keyOf);
            if (JSON.stringify(va) !== JSON.stringify(vb)) throw new Error(`${query} (vector): got ${va.join(',')} want ${vb.join(',')}`);
          }
        } finally {
          await fromSegments.close();
          await scanned.close();
        }
      },
    ),
    { numRuns: 10, endOnFailure: true },
  );
  t.equal(loaded, 10, 'every reader started from a segment');
  t.ok(caughtUp > 0, `${caughtUp} readers caught up from an older segment`);
  t.ok(nonEmpty > 10, `${nonEmpty} queries found passages`);
});
