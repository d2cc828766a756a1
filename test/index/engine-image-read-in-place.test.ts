/**
 * An engine image's term dictionary and row id → document map are read in place: postings loaded from an image put
 * no term or row in a map of their own (load work 0, where loading the same state as lists does that work), answer
 * exactly as the postings the image was made from, and stay so through removals, re-keys and additions, which
 * never write the image's bytes (other threads read them).
 */
import t from 'tap';
import fc from 'fast-check';
import { decodeImage, encodeImage, type SnapshotState } from '../../index/engines/lance/engine-image.js';
import { Postings } from '../../index/engines/memory/postings.js';
import { DocAttributes } from '../../index/engines/memory/doc-attributes.js';
import { encodePages } from '../../index/engines/lance/page-table.js';
import { TitleStats } from '../../index/engines/memory/title-stats.js';

const VOCAB = ['vitamin', 'bone', 'density', 'rivière', 'cells', 'memory', 'sleep', 'zinc', 'permit', '東京', 'x'];
const word = fc.constantFrom(...VOCAB);
const docArb = fc.array(word, { minLength: 1, maxLength: 8 });

function imageOf(p: Postings) {
  const postings = p.exportState();
  const n = postings.rowIds.length;
  const empty = () => new Int32Array(n).fill(-1);
  const state: SnapshotState = {
    postings,
    pageOf: empty(),
    ordinalOf: empty(),
    pageNoOf: empty(),
    prevOfPage: empty(),
    pages: encodePages([]),
    attributes: new DocAttributes().exportState(n),
    snippets: null,
    vectors: null,
    titles: new TitleStats().exportState(),
  };
  return encodeImage(state, { version: 1, analysis: 1, maxTermLength: 64 });
}

const answers = (p: Postings, q: string[]) =>
  JSON.stringify(p.search({ must: [], should: q.map((term) => ({ term, weight: 1 })) }, 5).map((h) => [h.rowId, h.score]));
const required = (p: Postings, q: string[]) =>
  JSON.stringify(p.search({ must: q.map((w) => [w]), should: [] }, 5).map((h) => [h.rowId, h.score]));

t.test('postings loaded from an image: no per-load maps, the same answers, the image never written', async (t) => {
  let checked = 0;
  await fc.assert(
    fc.property(
      fc.array(docArb, { minLength: 1, maxLength: 40 }),
      fc.array(docArb, { minLength: 0, maxLength: 6 }),
      fc.array(fc.array(word, { minLength: 1, maxLength: 3 }), { minLength: 4, maxLength: 4 }),
      fc.nat(),
      (docs, later, queries, seed) => {
        const full = new Postings();
        docs.forEach((d, i) => full.add(1000 + i * 7, d.join(' ')));
        full.flush();
        const image = imageOf(full);
        const bytes = new Uint8Array(image.buffer).slice();
        const loaded = Postings.fromState(decodeImage(image).postings);
        if (loaded.loadWork !== 0) throw new Error(`load work ${loaded.loadWork}`);
        // The control: the same state as plain lists is loaded into maps (the counter sees that work).
        const listed = Postings.fromState(full.exportState());
        if (listed.loadWork === 0) throw new Error('a load into maps counted no work');
        const same = () => {
          for (const q of queries) {
            if (answers(loaded, q) !== answers(full, q)) throw new Error(`${q.join(' ')}: ${answers(loaded, q)} vs ${answers(full, q)}`);
            if (required(loaded, q) !== required(full, q)) throw new Error(`+${q.join(' +')}: differs`);
          }
          for (let i = 0; i < docs.length + later.length + 2; i++)
            for (const r of [1000 + i * 7, 5000 + i])
              if (loaded.docOf(r) !== full.docOf(r)) throw new Error(`row ${r}: doc ${loaded.docOf(r)} vs ${full.docOf(r)}`);
          for (const term of VOCAB) if (loaded.idf(term) !== full.idf(term)) throw new Error(`idf ${term}`);
        };
        same();
        // Writes after the load: a removal, a re-key that swaps two rows' ids and moves one to a new id, new documents.
        const dead = [1000 + (seed % docs.length) * 7];
        full.remove(dead);
        loaded.remove(dead);
        const live = docs.map((_, i) => i).filter((d) => full.isLive(d));
        if (live.length >= 2) {
          const [a, b] = [live[0]!, live[live.length - 1]!];
          const moves = [a, full.rowIdOf(b), b, full.rowIdOf(a)];
          if (live.length >= 3) moves.push(live[1]!, 5000 + live[1]!);
          full.rekey(moves);
          loaded.rekey(moves);
        }
        later.forEach((d, i) => {
          full.add(9000 + i, `${d.join(' ')} novel${i}`);
          loaded.add(9000 + i, `${d.join(' ')} novel${i}`);
        });
        full.flush();
        loaded.flush();
        same();
        if (later.length > 0 && answers(loaded, ['novel0']) === '[]') throw new Error('a term first seen after the load is not found');
        if (Buffer.compare(Buffer.from(bytes), Buffer.from(new Uint8Array(image.buffer))) !== 0)
          throw new Error('writes after the load changed the image');
        checked++;
      },
    ),
    { numRuns: 60 },
  );
  t.equal(checked, 60);
});
