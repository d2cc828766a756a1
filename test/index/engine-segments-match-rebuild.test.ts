/**
 * Persisted engine segments: random corpora written in batches, with pages replaced and removed, compactions, and
 * at random points a delta segment (what changed since the last publication) or a new base (the merge), with a
 * random bound on the deltas a base takes before the writer merges on its own; a reader that starts from the newest segment and catches up by row-id
 * difference must hold exactly the table's passages and answer operator queries (filtered or not, title words among
 * their words) with exactly the passages, scores (the title boost included), result rows and vector neighbours of a
 * reader that scanned the whole table; and each segment, replayed, holds exactly the writer's title statistics then.
 */
import t from 'tap';
import fc from 'fast-check';
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import * as lancedb from '@lancedb/lancedb';
import { createHashingEmbedder } from '../../index/serving/embedder.js';
import { EngineSegments, SEGMENTS_FOLDER, type SegmentManifest } from '../../index/engines/lance/engine-segments.js';
import { decodeImage } from '../../index/engines/lance/engine-image.js';
import { ANALYSIS_VERSION, FTS_OPTIONS } from '../../index/engines/lance/maintenance.js';
import { applyDelta, TextSnapshot } from '../../index/engines/lance/text-engine.js';
import { retrieve, type SearchFilters } from '../../index/retrieval/retrieval.js';
import { PassageIndex } from '../../index/engines/lance/store.js';
import { titleTerms } from '../../index/engines/memory/title-stats.js';
import type { TitleCorpus } from '../../index/retrieval/engine-seam.js';
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
  /** A compaction moves row ids: the next publication is a base (no delta can say what moved). */
  compact: fc.constantFrom(false, false, false, true),
  /** After the batch: nothing, a delta segment, or a new base image (the merge of the chain). */
  publish: fc.constantFrom('none', 'none', 'delta', 'delta', 'base'),
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

const WANT = { analysis: ANALYSIS_VERSION, maxTermLength: FTS_OPTIONS.maxTokenLength };
/** Every title term the corpora can hold: the vocabulary and the default title's words, analysed in both languages. */
const TITLE_TERMS = [...new Set(['en', 'fr'].flatMap((l) => titleTerms(`${VOCAB.join(' ')} page`, l)))].sort();
/** Title statistics as comparable text (every term, in order). */
const titleText = (c: TitleCorpus) => JSON.stringify([c.titles, c.terms, TITLE_TERMS.map((w) => c.df.get(w) ?? 0)]);
const keyOf = (p: { row: { page_ref: number; ordinal: number } }) => `${p.row.page_ref}:${p.row.ordinal}`;

t.test('a reader started from a base and delta segments answers exactly as one that scanned the table', async (t) => {
  let loaded = 0;
  let caughtUp = 0;
  let nonEmpty = 0;
  let withDeltas = 0;
  let merged = 0;
  let deltasOnly = 0;
  let replayed = 0;
  let titleHits = 0;
  await fc.assert(
    fc.asyncProperty(
      fc.array(stepArb, { minLength: 1, maxLength: 6 }),
      fc.option(fc.array(pageArb, { minLength: 1, maxLength: 4 })),
      fc.array(queryArb, { minLength: 8, maxLength: 8 }),
      fc.constantFrom(1, 2, 100),
      async (steps, tail, queries, maxDeltas) => {
        const dir = t.testdir();
        const embedder = createHashingEmbedder(32);
        const writer = await PassageIndex.open({
          dir,
          embedder,
          refreshAfterMs: 0,
          optimizeEvery: 1_000_000,
          // Only the explicit publications below (and the first image of the first build), and the merges
          // `maxDeltas` makes (a delta past it is a new base instead).
          engineSegments: { deltaDocs: Infinity, deltaAfterMs: Infinity, maxDeltas, maxDeltaShare: Infinity, graceMs: 0 },
        });
        let published = false;
        // What the writer held when it published each segment (by table version): live row ids and passage keys, and
        // its title statistics.
        const heldAt = new Map<number, { rows: string[]; titles: string }>();
        const record = async () => {
          const v = writer.textPostingsStats()!.version!;
          const rows = (await writer.scanCandidates({}, 1_000_000)).map((h) => `${h._rowid}@${h.page_ref}:${h.ordinal}`).sort();
          heldAt.set(v, { rows, titles: titleText(writer.titleCorpus(TITLE_TERMS)) });
        };
        let bases = 0;
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
            if (s.publish === 'delta') await writer.engineDeltaNow();
            if (s.publish === 'base') {
              await writer.engineImageNow();
              bases++;
            }
            if (s.publish !== 'none') {
              published = true;
              await record();
            }
          }
          await writer.textEngineReady();
          const w = writer.textPostingsStats()!;
          // Bases beyond the first and the ones asked for: the merge policy's.
          if (w.images.deltas > 0 && w.images.written > 1 + bases) merged++;
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
        // Each kept manifest's base and deltas, replayed, hold exactly what the writer held at that version.
        const store = new EngineSegments(dir);
        for (const name of manifests) {
          const m = JSON.parse(readFileSync(join(store.dir, name), 'utf8')) as SegmentManifest;
          const want = heldAt.get(m.version);
          if (!want) continue; // a base the writer made on its own (the first build, a merge)
          const found = await store.loadNewest(WANT, m.version);
          if (!found || found.manifest.id !== m.id) throw new Error(`${name} does not load`);
          const snap = new TextSnapshot(WANT.maxTermLength, undefined, 0, decodeImage(found.image));
          for (const d of found.deltas) await applyDelta(snap, d);
          const got = snap
            .scan(null, 1_000_000)
            .map((h) => {
              const p = snap.passageOfRow(h.rowId)!;
              return `${h.rowId}@${p.page_ref}:${p.ordinal}`;
            })
            .sort();
          if (JSON.stringify(got) !== JSON.stringify(want.rows))
            throw new Error(`${name}: replayed ${got.join(',')}, writer held ${want.rows.join(',')}`);
          const titles = titleText(snap.titles.corpus(TITLE_TERMS));
          if (titles !== want.titles) throw new Error(`${name}: replayed title statistics ${titles}, the writer's ${want.titles}`);
          replayed++;
        }
        const fromSegments = await PassageIndex.open({ dir, embedder, writes: false, engineSegments: true });
        const scanned = await PassageIndex.open({ dir, embedder, writes: false });
        try {
          await fromSegments.textEngineReady();
          await scanned.textEngineReady();
          const st = fromSegments.textPostingsStats()!;
          // Started from a segment; caught up without a scan of the text, unless the rows replaced after it left more
          // tombstones than the postings keep (then they are rebuilt, as any reader's are: text-engine.ts).
          if (st.syncs.loads !== 1 || (st.syncs.builds !== 0 && st.syncs.scans === 0))
            throw new Error(`the reader did not start from a segment: ${JSON.stringify(st.syncs)}`);
          loaded++;
          if (st.syncs.deltas > 0) withDeltas++;
          // Segments at the table's version: the postings are exactly what the base and deltas hold, nothing caught up.
          if (st.syncs.deltas > 0 && st.syncs.scans === 0 && st.syncs.builds === 0) deltasOnly++;
          const newest = JSON.parse(readFileSync(join(dir, SEGMENTS_FOLDER, manifests.sort().at(-1)!), 'utf8')) as SegmentManifest;
          if (st.syncs.deltas !== newest.files.length - 1)
            throw new Error(`the reader applied ${st.syncs.deltas} deltas, the newest manifest names ${newest.files.length - 1}`);
          if (newest.files.length - 1 > maxDeltas) throw new Error(`a chain of ${newest.files.length - 1} deltas, bound ${maxDeltas}`);
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
          const [ta, tb] = [titleText(fromSegments.titleCorpus(TITLE_TERMS)), titleText(scanned.titleCorpus(TITLE_TERMS))];
          if (ta !== tb) throw new Error(`title statistics ${ta}, the scanning reader's ${tb}`);
          for (const q of queries) {
            const query = queryText(q);
            const ask = (idx: PassageIndex, mode: 'bm25' | 'vector') => retrieve(idx, { query, mode, filters: q.filters, now: NOW });
            const a = (await ask(fromSegments, 'bm25')).passages;
            const b = (await ask(scanned, 'bm25')).passages;
            const got = a.map(keyOf).sort();
            const want = b.map(keyOf).sort();
            if (JSON.stringify(got) !== JSON.stringify(want)) throw new Error(`${query}: got ${got.join(',')} want ${want.join(',')}`);
            // Ranked and scored alike, to the bit: the title boost reads the title statistics.
            const scored = (ps: typeof a) => JSON.stringify(ps.map((p) => [keyOf(p), p.score]));
            if (scored(a) !== scored(b)) throw new Error(`${query}: scored ${scored(a)}, the scanning reader ${scored(b)}`);
            if (want.length > 0) nonEmpty++;
            if (a.some((p) => titleTerms(p.row.title, p.row.lang).some((w) => titleTerms(query.replace(/[+-]/g, ''), 'en').includes(w))))
              titleHits++;
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
    { numRuns: 25, endOnFailure: true },
  );
  t.equal(loaded, 25, 'every reader started from a segment');
  // How often each path ran (random corpora: reported, not asserted; engine-segments-deltas.test.ts covers each
  // deterministically).
  t.comment(`${withDeltas} readers applied deltas, ${deltasOnly} from deltas alone; ${merged} writers merged on their own`);
  t.ok(replayed > 10, `${replayed} manifests replayed to exactly the writer's passages and row ids at their version`);
  t.ok(caughtUp > 0, `${caughtUp} readers caught up from an older segment`);
  t.ok(nonEmpty > 10, `${nonEmpty} queries found passages`);
  t.ok(titleHits > 10, `${titleHits} queries found passages whose title holds one of their words (scored with the title boost)`);
});
