/**
 * Re-embedding (index/engines/lance/reembed.ts) through the real LanceDB tables in a temp dir, with the deterministic hashing
 * stand-in: an index built without vectors, or with another model's, gets every passage a vector of the configured
 * model; the vector arm stays off until all have one; pages written meanwhile carry the model's vectors at once.
 */
import * as lancedb from '@lancedb/lancedb';
import t from 'tap';
import { createHashingEmbedder, type Embedder } from '../../index/serving/embedder.js';
import { PassageIndex } from '../../index/engines/lance/store.js';
import { makePage } from '../helpers/page-input.js';

const pageOf = (ref: number) =>
  makePage(ref, `h${ref % 5}.example.ca`, [`passage one of page ${ref} about topic${ref}`, `second passage of page ${ref} words`], {
    title: `Page ${ref}`,
  });

/** The hashing stand-in under another model id: the same dimension, another vector space as far as the index knows. */
function renamed(e: Embedder, modelId: string): Embedder {
  return { dim: e.dim, modelId, kind: e.kind, embed: (texts, o) => e.embed(texts, o), close: () => e.close() };
}

/** Every passage row's vector, by `page_ref:ordinal` (null when it has none). */
async function vectors(dir: string): Promise<Map<string, number[] | null>> {
  const db = await lancedb.connect(dir);
  const table = await db.openTable('passages');
  const rows = (await table.query().select(['page_ref', 'ordinal', 'vector']).toArray()) as {
    page_ref: number;
    ordinal: number;
    vector: { toArray(): Float32Array } | null;
  }[];
  table.close();
  db.close();
  return new Map(rows.map((r) => [`${r.page_ref}:${r.ordinal}`, r.vector ? Array.from(r.vector.toArray()) : null]));
}

t.test('an index built without vectors: the writer embeds every passage; the vector arm serves once all have one', async (t) => {
  const dir = t.testdir();
  const before = await PassageIndex.open({ dir, embedder: null });
  await before.upsertPages([1, 2, 3, 4, 5, 6, 7].map(pageOf));
  await before.close();

  const model = createHashingEmbedder(64);
  const idx = await PassageIndex.open({ dir, embedder: model, reembed: true });
  t.teardown(() => idx.close());
  t.equal(idx.rankingMode(), 'bm25', 'no vector arm before every passage has a vector');
  t.same(idx.vectorsUnused, { stored: null, configured: 'hashing-stand-in-64', reembedding: true });
  t.match(await idx.reembedProgress(), { modelId: 'hashing-stand-in-64', done: 0, total: 14, state: 'pending' });
  t.same(await idx.vectorCandidates((await model.embed(['topic3']))[0]!, {}, 5), [], 'the vector arm answers nothing meanwhile');

  // Written after the re-embedding was prepared: carries the model's vector at once, and the pass leaves it.
  await idx.upsertPages([makePage(8, 'h8.example.ca', ['a page written meanwhile about topic8'], { title: 'Page 8' })]);
  const seen: number[] = [];
  t.equal(await idx.reembed({ batchPassages: 4, onProgress: (p) => seen.push(p.done) }), 'done');
  t.equal(seen.at(-1), 14, 'every passage that was there is counted done');
  t.ok(
    seen.every((d, i) => i === 0 || d >= seen[i - 1]!),
    'progress only moves forward',
  );
  t.ok(seen.length >= 5, 'one progress report per batch of at most 4 passages');

  t.equal(idx.rankingMode(), 'hybrid-rrf-hashing');
  t.equal(idx.vectorsUnused, null);
  t.equal(idx.storedVectorModel, 'hashing-stand-in-64');
  t.equal(await idx.reembedProgress(), null);
  const s = await idx.stats();
  t.equal(s.vectors, s.passages, 'every passage has a vector');
  t.equal(s.passages, 15);
  const near = await idx.vectorCandidates((await model.embed(['Page 3\npassage one of page 3 about topic3']))[0]!, {}, 1);
  t.match(near, [{ page_ref: 3, ordinal: 0 }], 'the vector arm finds the passage by its new vector');
  t.ok(near[0]!._distance < 1e-5, 'the stored vector is the one the model gives the passage (title, then text)');
  await idx.close();

  // Reopened by a reader with the model: the metadata names it, the vector arm serves.
  const reader = await PassageIndex.open({ dir, embedder: model, writes: false });
  t.equal(reader.rankingMode(), 'hybrid-rrf-hashing');
  t.equal(reader.vectorsUnused, null);
  await reader.close();
});

t.test('vectors of another model, other dimension: the column is replaced, then filled', async (t) => {
  const dir = t.testdir();
  const old = createHashingEmbedder(32);
  const a = await PassageIndex.open({ dir, embedder: old });
  await a.upsertPages([1, 2, 3].map(pageOf));
  await a.close();
  const model = createHashingEmbedder(48);
  const b = await PassageIndex.open({ dir, embedder: model, reembed: true });
  t.teardown(() => b.close());
  t.same(b.vectorsUnused, { stored: 'hashing-stand-in-32', configured: 'hashing-stand-in-48', reembedding: true });
  t.equal(b.rankingMode(), 'bm25');
  t.ok(
    [...(await vectors(dir)).values()].every((v) => v === null),
    'the old vectors are gone with their column',
  );
  t.equal(await b.reembed(), 'done');
  const v = await vectors(dir);
  t.equal(v.size, 6);
  t.ok(
    [...v.values()].every((x) => x?.length === 48),
    'every passage has a vector of the new dimension',
  );
  t.equal(b.rankingMode(), 'hybrid-rrf-hashing');
});

t.test('vectors of another model, same dimension: never served mixed; every row replaced', async (t) => {
  const dir = t.testdir();
  const base = createHashingEmbedder(32);
  // Another vector space of the same length: the stand-in's vectors negated.
  const other: Embedder = {
    ...renamed(base, 'other-model/q8'),
    embed: async (texts) => (await base.embed(texts)).map((v) => v.map((x) => -x)),
  };
  const a = await PassageIndex.open({ dir, embedder: other });
  await a.upsertPages([1, 2, 3, 4].map(pageOf));
  await a.close();
  const b = await PassageIndex.open({ dir, embedder: base, reembed: true });
  t.teardown(() => b.close());
  t.equal(b.rankingMode(), 'bm25', 'the old vectors are not read while the pass runs');
  t.equal(b.storedVectorModel, null, 'the metadata names no model while the column holds two');
  const stop = new AbortController();
  t.equal(
    await b.reembed({
      batchPassages: 2,
      signal: stop.signal,
      onProgress: (p) => {
        if (p.done >= 2) stop.abort();
      },
    }),
    'stopped',
    'a signal stops the pass after the batch in hand',
  );
  t.equal(b.rankingMode(), 'bm25', 'half done: still no vector arm');
  t.match(await b.reembedProgress(), { done: 2, total: 8 });
  t.equal(await b.reembed(), 'done', 'run again: resumes and finishes');
  t.equal(b.rankingMode(), 'hybrid-rrf-hashing');
  t.equal(b.storedVectorModel, 'hashing-stand-in-32');
  const stored = await vectors(dir);
  const [want] = await base.embed(['Page 4\nsecond passage of page 4 words']);
  t.same(
    stored.get('4:1')?.map((x) => Math.round(x * 1e5)),
    Array.from(want!).map((x) => Math.round(x * 1e5)),
    "a row the pass reached last holds the new model's vector, not the old one",
  );
  t.equal(stored.size, 8);
});

t.test('a writer without the reembed option, or a reader, changes nothing', async (t) => {
  const dir = t.testdir();
  const a = await PassageIndex.open({ dir, embedder: null });
  await a.upsertPages([pageOf(1)]);
  await a.close();
  const model = createHashingEmbedder(16);
  const b = await PassageIndex.open({ dir, embedder: model });
  t.same(b.vectorsUnused, { stored: null, configured: 'hashing-stand-in-16' });
  t.equal(await b.reembedProgress(), null);
  t.equal(await b.reembed(), 'none');
  await b.close();
  const r = await PassageIndex.open({ dir, embedder: model, writes: false, reembed: true });
  t.equal(await r.reembedProgress(), null, 'a reader prepares nothing');
  await r.close();
});

t.test('a reader following the writer switches to the vector arm when the writer finishes, without reopening', async (t) => {
  const dir = t.testdir();
  const a = await PassageIndex.open({ dir, embedder: null });
  await a.upsertPages([1, 2, 3].map(pageOf));
  await a.close();
  const model = createHashingEmbedder(24);
  const writer = await PassageIndex.open({ dir, embedder: model, reembed: true });
  t.teardown(() => writer.close());
  // An `api` replica: reads the index another process writes, and looks at its metadata on a timer.
  const reader = await PassageIndex.open({ dir, embedder: model, writes: false, followHostsMs: 20 });
  t.teardown(() => reader.close());
  t.equal(reader.rankingMode(), 'bm25');
  t.match(reader.vectorsUnused, { stored: null, configured: 'hashing-stand-in-24', reembedding: true });
  t.match(await reader.reembedProgress(), { done: 0, total: 6, state: 'pending' });
  const switched = new Promise<string>((resolve) => reader.onVectorsReady((e) => resolve(e.modelId)));
  t.equal(await writer.reembed(), 'done');
  t.equal(await switched, 'hashing-stand-in-24', 'the reader saw the metadata name the model');
  t.equal(reader.rankingMode(), 'hybrid-rrf-hashing');
  t.equal(reader.vectorsUnused, null);
  t.equal(await reader.reembedProgress(), null);
  const [q] = await model.embed(['Page 2\npassage one of page 2 about topic2']);
  t.match(await reader.vectorCandidates(q!, {}, 1), [{ page_ref: 2, ordinal: 0 }], "the reader's vector arm reads the new vectors");
});
