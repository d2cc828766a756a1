/**
 * The vector arm of a small index from vectors kept in memory (index/engines/memory/flat-vectors.ts): the same exact answer LanceDB's
 * flat scan gives, through writes and deletions, and LanceDB again once the index outgrows the bound.
 */
import t from 'tap';
import { fileURLToPath } from 'node:url';
import { corpusPage, readCorpus } from '../../cli/ingest.js';
import { createHashingEmbedder } from '../../index/serving/embedder.js';
import { FlatVectors } from '../../index/engines/memory/flat-vectors.js';
import { kthLargest } from '../../index/engines/memory/top-k.js';
import { searchPages } from '../../index/retrieval/retrieval.js';
import { PassageIndex } from '../../index/engines/lance/store.js';
import type { PageInput } from '../../page-model.js';

const CORPUS = fileURLToPath(new URL('../../../shared/data/beir/scifact/corpus.jsonl.gz', import.meta.url));

async function pages(from: number, n: number): Promise<PageInput[]> {
  const out: PageInput[] = [];
  let i = 0;
  for await (const doc of readCorpus(CORPUS)) {
    if (i++ < from) continue;
    out.push(corpusPage(doc, from + out.length + 1, 'scifact', '2026-11-20T00:00:00Z'));
    if (out.length >= n) break;
  }
  return out;
}

/** A store this machine must be able to create (Node's WebAssembly has SIMD on every supported version). */
function flatVectors(dim: number, rows: number): FlatVectors {
  const fv = FlatVectors.create(dim, rows);
  if (!fv) throw new Error('WebAssembly SIMD is unavailable');
  return fv;
}

/** A seeded PRNG (mulberry32). */
function rng(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let x = a;
    x = Math.imul(x ^ (x >>> 15), x | 1);
    x ^= x + Math.imul(x ^ (x >>> 7), x | 61);
    return ((x ^ (x >>> 14)) >>> 0) / 4294967296;
  };
}

/** `nearestDocs`' answer as objects (copied: the next search overwrites its arrays). */
function nearest(fv: FlatVectors, q: Float32Array, k: number, live: (doc: number) => boolean, min?: number) {
  const { docs, distances, n } = fv.nearestDocs(q, k, live, min);
  return Array.from({ length: n }, (_, i) => ({ doc: docs[i]!, distance: distances[i]! }));
}

t.test('FlatVectors: the k nearest by exact cosine distance, dead and vectorless documents skipped, ties by document', async (t) => {
  const dim = 12;
  const rand = rng(7);
  const fv = flatVectors(dim, 500);
  const vecs: (Float32Array | null)[] = [];
  for (let d = 0; d < 300; d++) {
    const v = d % 37 === 5 ? null : Float32Array.from({ length: dim }, () => rand() - 0.5);
    vecs.push(v);
    t.equal(fv.set(d, v), true);
  }
  vecs[299] = vecs[298] = Float32Array.from(vecs[10]!); // exact ties with document 10
  fv.set(298, vecs[298]);
  fv.set(299, vecs[299]);
  const dead = (d: number) => d % 11 === 3;
  const cos = (a: Float32Array, b: Float32Array) => {
    let dot = 0;
    let aa = 0;
    let bb = 0;
    for (let i = 0; i < dim; i++) {
      dot += a[i]! * b[i]!;
      aa += a[i]! * a[i]!;
      bb += b[i]! * b[i]!;
    }
    return 1 - dot / Math.sqrt(aa * bb);
  };
  for (let trial = 0; trial < 20; trial++) {
    const q = trial === 0 ? Float32Array.from(vecs[10]!) : Float32Array.from({ length: dim }, () => rand() - 0.5);
    const k = trial === 0 ? 5 : [1, 5, 40, 400][trial % 4]!;
    const want = vecs
      .flatMap((v, doc) => (v && !dead(doc) ? [{ doc, distance: cos(q, v) }] : []))
      .sort((a, b) => a.distance - b.distance || a.doc - b.doc)
      .slice(0, k);
    const got = nearest(fv, q, k, (d) => !dead(d));
    t.equal(got.length, want.length, `trial ${trial}: length`);
    // f32 dot products against f64 ones: distances agree to ~1e-6, and the order may differ only between near-ties.
    got.forEach((g, i) => {
      if (Math.abs(g.distance - want[i]!.distance) > 1e-5) t.fail(`trial ${trial} rank ${i}: ${g.distance} vs ${want[i]!.distance}`);
    });
    t.same(new Set(got.slice(0, -1).map((g) => g.doc)).size, Math.max(0, got.length - 1));
    if (trial === 0)
      t.same(
        got.slice(0, 3).map((g) => g.doc),
        [10, 298, 299],
        'identical vectors: ties in document order',
      );
    const exact = fv.distances(q, [0, 5, 10, 42, 299, 400]);
    for (const doc of [0, 5, 10, 42, 299]) {
      if (vecs[doc]) t.ok(Math.abs(exact.get(doc)! - cos(q, vecs[doc]!)) < 1e-5, `distance of ${doc}`);
      else t.notOk(exact.has(doc), `document ${doc} has no vector`);
    }
    t.notOk(exact.has(400), 'a document never set is absent');
  }
  t.equal(fv.set(500, vecs[0]!), false, 'beyond the bound: refused');
  t.equal(FlatVectors.create(10, 100), null, 'a dimension not a multiple of 4 is not kept');
});

t.test('FlatVectors: exact ties across the k-th place go to the lower document ids; kthLargest against a sort', async (t) => {
  const dim = 8;
  const rand = rng(11);
  const fv = flatVectors(dim, 400);
  const same = Float32Array.from({ length: dim }, () => rand() - 0.5);
  // 60 identical vectors spread among 300 random ones; some of them dead.
  const twins = new Set<number>();
  for (let d = 0; d < 360; d++) {
    const twin = d % 6 === 1;
    if (twin) twins.add(d);
    fv.set(d, twin ? same : Float32Array.from({ length: dim }, () => rand() - 0.5));
  }
  const dead = (d: number) => d % 12 === 7;
  const liveTwins = [...twins].filter((d) => !dead(d)).sort((a, b) => a - b);
  t.ok(liveTwins.length >= 30, `${liveTwins.length} live twins`);
  for (const k of [1, 7, 20, liveTwins.length - 1, liveTwins.length]) {
    const got = nearest(fv, Float32Array.from(same), k, (d) => !dead(d));
    t.same(
      got.map((g) => g.doc),
      liveTwins.slice(0, k),
      `k = ${k}: the twins tie at the k-th place, lowest document ids first`,
    );
  }
  const more = nearest(fv, Float32Array.from(same), liveTwins.length + 5, (d) => !dead(d));
  t.same(
    more.slice(0, liveTwins.length).map((g) => g.doc),
    liveTwins,
    'past the ties: every twin, then the nearest others',
  );
  t.equal(more.length, liveTwins.length + 5);

  // The selection alone: random arrays with many repeated values, every k.
  for (let trial = 0; trial < 200; trial++) {
    const n = 1 + Math.floor(rand() * 60);
    const values = Array.from({ length: n }, () => Math.floor(rand() * (trial % 2 ? 5 : 1000)) / 7 - 3);
    const sorted = [...values].sort((a, b) => b - a);
    for (let k = 1; k <= n; k++) {
      const got = kthLargest(Float64Array.from(values), n, k);
      if (got !== sorted[k - 1]) t.fail(`trial ${trial}: k = ${k} of ${n}: ${got} vs ${sorted[k - 1]}`);
    }
  }
  t.pass('kthLargest agrees with a sort in 200 random arrays at every k');
});

t.test('an index with vectors in memory answers the vector arm as LanceDB does, through writes and deletions', async (t) => {
  const dir = t.testdir();
  const embedder = createHashingEmbedder(128);
  const mem = await PassageIndex.open({ dir, embedder });
  t.teardown(() => mem.close());
  await mem.upsertPages(await pages(0, 150));
  await mem.textEngineReady();
  t.ok((mem.textPostingsStats()?.vectors ?? 0) > 0, 'vectors kept in memory');

  const queries = ['stem cells differentiation', 'insulin resistance in mice', 'vitamin D deficiency', 'tumour suppressor gene'];
  const compare = async (label: string) => {
    await mem.textEngineReady();
    // The same table read by a second handle that keeps no vectors: every vector query goes to LanceDB.
    const lance = await PassageIndex.open({ dir, embedder, flatVectorBytes: 0 });
    t.teardown(() => lance.close());
    await lance.textEngineReady();
    t.equal(lance.textPostingsStats()?.vectors, 0, `${label}: the second handle keeps no vectors`);
    for (const text of queries) {
      const [qv] = await embedder.embed([text]);
      for (const k of [5, 50, 1000]) {
        const a = await mem.vectorCandidates(qv!, {}, k, []);
        const b = await lance.vectorCandidates(qv!, {}, k, []);
        t.equal(a.length, b.length, `${label} ${text} k=${k}: as many candidates`);
        const key = (r: { page_ref: number; ordinal: number }) => `${r.page_ref}:${r.ordinal}`;
        const bDist = new Map(b.map((r) => [key(r), r._distance]));
        let off = 0;
        a.forEach((r, i) => {
          // Rank by rank the distances agree (f32 arithmetic on both sides, summed in a different order).
          if (Math.abs(r._distance - b[i]!._distance) > 1e-5) off++;
          const d = bDist.get(key(r));
          if (d !== undefined && Math.abs(d - r._distance) > 1e-5) off++;
          if (d === undefined && i < a.length - 1 && Math.abs(r._distance - a.at(-1)!._distance) > 1e-5) off++;
        });
        t.equal(off, 0, `${label} ${text} k=${k}: the same passages at the same distances`);
        for (const r of a) {
          t.equal(typeof r._rowid, 'bigint');
          t.type(r.title, 'string');
          t.type(r.host, 'string');
        }
      }
      // Exact distances of given passages (the exhaustive path) agree too.
      const some = (await lance.vectorCandidates(qv!, {}, 20, [])).slice(0, 20);
      const da = await mem.vectorDistances(qv!, some);
      const db = await lance.vectorDistances(qv!, some);
      t.equal(da.size, db.size);
      for (const [k2, v] of db) t.ok(Math.abs(da.get(k2)! - v) < 1e-5, `${label}: exact distance of ${k2}`);
    }
    // The served search: the same pages in the same order from both handles. (Hybrid only before the deletions: the
    // writer's postings keep tombstones in their BM25 statistics until a rebuild, a freshly opened handle has none.)
    for (const text of queries) {
      const mode = label === 'after the first write' ? 'hybrid' : 'vector';
      const a = await searchPages(mem, { query: text, mode, limit: 10, offset: 0 });
      const b = await searchPages(lance, { query: text, mode, limit: 10, offset: 0 });
      t.same(
        a.pages.map((p) => p.best.row.page_ref),
        b.pages.map((p) => p.best.row.page_ref),
        `${label}: "${text}" ranks the same pages (${mode})`,
      );
    }
  };
  await compare('after the first write');
  // A later write (the postings patch their snapshot: the added rows' vectors join) and a deletion.
  await mem.upsertPages(await pages(150, 60));
  for (const ref of [1, 2, 3, 5, 8, 13]) await mem.removePage(ref);
  await compare('after a second write and deletions');
});

t.test('an index beyond the bound keeps no vectors in memory and still answers the vector arm', async (t) => {
  const embedder = createHashingEmbedder(128);
  // 128 dimensions × 4 bytes × 100 rows: fewer rows than the corpus pages' passages.
  const idx = await PassageIndex.open({ dir: t.testdir(), embedder, flatVectorBytes: 128 * 4 * 100 });
  t.teardown(() => idx.close());
  await idx.upsertPages(await pages(0, 150));
  await idx.textEngineReady();
  t.equal(idx.textPostingsStats()?.vectors, 0, 'none kept');
  const [qv] = await embedder.embed(['stem cells differentiation']);
  const got = await idx.vectorCandidates(qv!, {}, 10, []);
  t.equal(got.length, 10, 'LanceDB answered');
});

t.test('issue 14: a similarity floor leaves out exactly the documents the unbounded search returns below it', async (t) => {
  const dim = 16;
  const rand = rng(5);
  const fv = flatVectors(dim, 1000);
  // Vectors around a common direction, so similarities spread over [-1, 1] and many sit near each floor.
  const base = Float32Array.from({ length: dim }, () => rand() - 0.5);
  for (let d = 0; d < 800; d++)
    fv.set(
      d,
      Float32Array.from(base, (x) => x * (rand() * 2 - 0.6) + (rand() - 0.5) * 0.8),
    );
  const live = (d: number) => d % 9 !== 4;
  let cut = 0;
  for (const min of [-1, 0, 0.2, 0.5, 0.9]) {
    for (const k of [1, 30, 300, 1000]) {
      const q = Float32Array.from(base, (x) => x + (rand() - 0.5) * 0.3);
      const all = nearest(fv, q, k, live);
      const floor = nearest(fv, q, k, live, min);
      const want = all.filter((h) => 1 - h.distance >= min);
      cut += all.length - want.length;
      t.same(floor, want, `floor ${min}, k = ${k}`);
    }
  }
  t.ok(cut > 0, `the floors left some documents out (${cut})`);
});

/**
 * A vector whose every value lies just under half a 16-bit step above a step of the screen's quantisation (all
 * positive, the largest exactly 1): with a query built alike, each rounding error has the same sign as the values it
 * multiplies, so the true dot product exceeds the quantised one by nearly the screen's whole error bound.
 */
function halfSteps(dim: number, rand: () => number): Float32Array {
  const q = Math.min(32767, Math.floor(Math.sqrt((2 ** 31 - 1) / ((dim + 7) & ~7))));
  const v = Float32Array.from({ length: dim }, () => (Math.floor(rand() * (q - 1)) + 0.4999) / q);
  v[0] = 1;
  return v;
}

t.test('issue 14: the 16-bit screen under a floor keeps the full scan answer bit for bit (property)', async (t) => {
  // The oracle is the full scan itself: without a floor nothing is screened (every row's f32 dot product by `dots`);
  // its documents at or above the floor, the first k of them, are what the screened search must return — the same
  // documents, distances to the bit, in the same order. The rows are built to sit on the screen's edges: a common
  // direction with little noise (similarities crowded near each floor and near the k-th place), exact twins and
  // twins one f32 step apart, spikes, sparse rows, rows of zeros, NaN and infinities, magnitudes from 1e-12 to 1e12;
  // a second store per dimension adds rows at 1e-38 and 1e30, where f32 products underflow or overflow and every
  // search must scan exactly instead.
  const rand = rng(14);
  let cases = 0;
  let screenedOut = 0;
  for (const dim of [4, 12, 32, 256, 384, 1024]) {
    for (const extreme of [false, true]) {
      const rows = dim >= 256 ? 700 : 400;
      const fv = flatVectors(dim, rows);
      const base = Float32Array.from({ length: dim }, () => rand() - 0.5);
      const scales = extreme ? [1, 1, 1, 1e-38, 1e-20, 1e30, 3, 1e-3] : [1, 1, 1, 1e-12, 1e-3, 1e12, 3, 0.5];
      const vecs: (Float32Array | null)[] = [];
      for (let d = 0; d < rows; d++) {
        const kind = d % 23;
        const scale = scales[d % 8]!;
        let v: Float32Array | null;
        if (kind === 0) v = null;
        else if (kind === 1) v = new Float32Array(dim);
        else if (kind === 2 && d > 40)
          v = Float32Array.from(vecs[d - 40] ?? base); // an exact twin
        else if (kind === 3 && d > 40 && vecs[d - 40]) {
          v = Float32Array.from(vecs[d - 40]!);
          const i = d % dim;
          v[i] = v[i]! === 0 ? 1e-30 : v[i]! * (1 + 2 ** -23); // a twin one step apart
        } else if (kind === 4) {
          v = Float32Array.from({ length: dim }, () => (rand() - 0.5) * 1e-3);
          v[d % dim] = 50; // a spike
        } else if (kind === 5) {
          v = new Float32Array(dim);
          for (let j = 0; j < 3; j++) v[Math.floor(rand() * dim)] = rand() - 0.5; // sparse
        } else if (kind === 6) v = Float32Array.from({ length: dim }, (_, i) => (i === d % dim ? NaN : rand()));
        else if (kind === 7) v = Float32Array.from({ length: dim }, (_, i) => (i === d % dim ? Infinity : rand()));
        else if (kind === 8 || kind === 9) v = halfSteps(dim, rand);
        else v = Float32Array.from(base, (x) => (x + (rand() - 0.5) * (kind % 3 === 0 ? 0.05 : 0.6)) * scale);
        vecs.push(v);
        fv.set(d, v);
      }
      const queries: Float32Array[] = [
        Float32Array.from(base),
        Float32Array.from(base, (x) => x + (rand() - 0.5) * 0.1),
        Float32Array.from(base, (x) => -x + (rand() - 0.5) * 0.5),
        Float32Array.from(vecs[4]!), // a spike
        Float32Array.from({ length: dim }, () => (rand() - 0.5) * 1e-30),
        Float32Array.from({ length: dim }, (_, i) => (i === 0 ? Infinity : rand())),
        Float32Array.from({ length: dim }, () => rand() - 0.5),
        halfSteps(dim, rand),
      ];
      // Queries the screen cannot answer: at 1e-30 (its norm times the rows' is below 2⁻¹⁰⁰) and with an infinity.
      const unscreenable = new Set([4, 5]);
      const screenedBefore = fv.screenedSearches;
      let screenable = 0;
      for (const [qi, q] of queries.entries()) {
        for (const live of [() => true, (d: number) => d % 7 !== 2]) {
          const all = nearest(fv, q, rows, live);
          // Besides fixed floors, floors exactly at a document's similarity: it must stay (≥ the floor).
          // (The half-step rows' true similarity exceeds the screen's estimate by nearly its whole bound.)
          const at = (r: number) => (all[r] ? 1 - all[r]!.distance : 0.3);
          const half = all.findIndex((h) => h.doc % 23 === 8);
          for (const min of [-0.5, 0, 0.2, 0.5, 0.9, 0.99, 1, at(2), at(40), at(all.length >> 1), at(half)]) {
            for (const k of [1, 5, 60, rows]) {
              const want = all.filter((h) => 1 - h.distance >= min).slice(0, k);
              const got = nearest(fv, q, k, live, min);
              cases++;
              if (!unscreenable.has(qi)) screenable++;
              screenedOut += all.length - want.length;
              if (got.length !== want.length || got.some((g, i) => g.doc !== want[i]!.doc || !Object.is(g.distance, want[i]!.distance)))
                t.fail(`dim ${dim}${extreme ? ' extreme' : ''} query ${qi} floor ${min} k ${k}: ${got.length} against ${want.length}`);
            }
          }
        }
      }
      const screened = fv.screenedSearches - screenedBefore;
      // Ordinary rows: every floored search of a finite query at a usable scale is screened.
      if (extreme) t.equal(screened, 0, `dim ${dim}, rows at 1e-38 and 1e30: every search scans exactly`);
      else t.equal(screened, screenable, `dim ${dim}: the screen answered every floored search of the other queries`);
    }
  }
  t.ok(cases > 2000 && screenedOut > 0, `${cases} cases, the floors and k left ${screenedOut} documents out`);
});
