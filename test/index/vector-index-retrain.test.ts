/**
 * The writer retrains the IVF-PQ vector index once it has drifted from what it was trained on (maintenance.ts
 * `vectorRetrainDue`): when the vectors doubled since its training, or LanceDB's optimizes piled up more delta segments
 * than `VECTOR_SEGMENT_LIMIT`; not otherwise. The retraining runs beside the writes: a page written meanwhile is kept
 * and searchable, the trained size is remembered across a reopen, and a reader at the new version searches the new
 * index.
 */
import t from 'tap';
import * as lancedb from '@lancedb/lancedb';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { createHashingEmbedder } from '../../index/serving/embedder.js';
import { PassageIndex } from '../../index/engines/lance/store.js';
import { VECTOR_SEGMENT_LIMIT, vectorRetrainDue } from '../../index/engines/lance/maintenance.js';
import { makePage } from '../helpers/page-input.js';

const embedder = createHashingEmbedder(32);
const WORDS = 'river mill quokka zinc harbour lantern orchard granite meadow copper falcon willow ember tide'.split(' ');

/** `n` pages of two passages each from page ref `from`, with text that spreads their vectors. */
function pages(from: number, n: number) {
  return Array.from({ length: n }, (_, i) => {
    const r = from + i;
    const w = (k: number) => WORDS[(r * 7 + k * 3) % WORDS.length]!;
    return makePage(r, `h${r % 7}.example`, [`${w(0)} ${w(1)} notes ${r}`, `${w(2)} ${w(3)} and ${w(4)} at ${r % 29}`]);
  });
}

const PLANTED = 'saffron nebula clockwork tundra';

/** A writer that optimizes only when told, builds the ANN index at 300 vectors and keeps no vectors in memory. */
const writerOptions = (dir: string) => ({
  dir,
  embedder,
  refreshAfterMs: 0,
  optimizeEvery: 1_000_000,
  vectorIndexThreshold: 300,
  flatVectorBytes: 0,
});

/** The log lines of one writer (the retraining's are how a test sees it happen). */
function capture() {
  const lines: { msg: string; o: Record<string, unknown> }[] = [];
  const push = (o: unknown, msg?: string) =>
    lines.push({ msg: msg ?? String(o), o: typeof o === 'object' && o ? (o as Record<string, unknown>) : {} });
  return {
    log: { info: push, warn: push, debug: () => undefined },
    retrains: () => lines.filter((l) => l.msg === 'vector index retrained'),
    lines,
  };
}

const readMeta = (dir: string) => JSON.parse(readFileSync(join(dir, 'svc-index-meta.json'), 'utf8')) as { vectorIndexTrainedOn?: number };

/** The vector index's statistics as LanceDB reports them for a table handle (at the version it reads). */
async function vectorStatsOf(table: lancedb.Table) {
  const name = (await table.listIndices()).find((i) => i.columns.includes('vector'))!.name;
  return (await table.indexStats(name))!;
}

/** The vector index's statistics as LanceDB reports them at the table's newest version. */
async function vectorStats(dir: string) {
  const db = await lancedb.connect(dir);
  const table = await db.openTable('passages');
  try {
    return await vectorStatsOf(table);
  } finally {
    table.close();
    db.close();
  }
}

/**
 * The page of the vector arm's nearest passage to `text`'s vector. k 50: the IVF-PQ search re-ranks five times k
 * candidates by their exact distance, so a passage of exactly that vector comes first even though 2 PQ subvectors of
 * a 32-dimension vector rank the candidates coarsely.
 */
async function nearestPage(idx: PassageIndex, text: string): Promise<number | undefined> {
  const [q] = await embedder.embed([text]);
  return (await idx.vectorCandidates(q!, {}, 50))[0]?.page_ref;
}

t.test('the rule: doubled vectors, too many segments within the time share, an index of unknown training', async (t) => {
  const fresh = { lastRetrainMs: 0, sinceLastRetrainMs: Infinity };
  t.equal(vectorRetrainDue({ vectors: 1999, trainedOn: 1000, segments: 1, ...fresh }), false, 'grown less than twice');
  t.equal(vectorRetrainDue({ vectors: 2000, trainedOn: 1000, segments: 1, ...fresh }), true, 'grown twice');
  t.equal(vectorRetrainDue({ vectors: 1000, trainedOn: 1000, segments: VECTOR_SEGMENT_LIMIT, ...fresh }), false, 'segments at the limit');
  t.equal(vectorRetrainDue({ vectors: 1000, trainedOn: 1000, segments: VECTOR_SEGMENT_LIMIT + 1, ...fresh }), true, 'segments past it');
  t.equal(vectorRetrainDue({ vectors: 1000, trainedOn: undefined, segments: 1, ...fresh }), true, 'trained size unknown');
  const recent = { lastRetrainMs: 60_000, sinceLastRetrainMs: 8 * 60_000 };
  t.equal(
    vectorRetrainDue({ vectors: 1000, trainedOn: 1000, segments: VECTOR_SEGMENT_LIMIT + 1, ...recent }),
    false,
    'segments past the limit but the last retraining took a minute and ended eight minutes ago',
  );
  t.equal(
    vectorRetrainDue({ vectors: 1000, trainedOn: 1000, segments: VECTOR_SEGMENT_LIMIT + 1, ...recent, sinceLastRetrainMs: 9 * 60_000 }),
    true,
    'nine minutes after',
  );
  t.equal(vectorRetrainDue({ vectors: 2000, trainedOn: 1000, segments: 1, ...recent }), true, 'doubling does not wait for the time share');
});

t.test('an index grown by small optimizes is retrained when the vectors doubled, beside the writes', async (t) => {
  const dir = t.testdir();
  const opts = writerOptions(dir);
  const first = capture();
  let idx = await PassageIndex.open({ ...opts, log: first.log });
  t.teardown(() => idx.close());

  await idx.upsertPages([makePage(1, 'planted.example', [PLANTED]), ...pages(2, 199)]); // 399 passages
  await idx.optimize();
  t.equal((await idx.stats()).vectorIndex, true, 'the ANN index is built at the threshold');
  t.equal(readMeta(dir).vectorIndexTrainedOn, 399, 'its trained size is recorded');

  // 399 → 699 vectors in three optimizes: fewer than twice, few segments: the index is folded into, not retrained.
  for (let b = 0; b < 3; b++) {
    await idx.upsertPages(pages(1000 + b * 50, 50));
    await idx.optimize();
    await idx.maintenanceSettled();
  }
  const grown = await vectorStats(dir);
  t.equal(grown.numIndexedRows, 699, 'the optimizes folded the new rows into the index');
  t.ok(grown.numIndices! > 1, `they added delta segments (${grown.numIndices})`);
  t.equal(first.retrains().length, 0, 'no retraining below twice the trained size');
  t.equal(readMeta(dir).vectorIndexTrainedOn, 399);
  t.equal(await nearestPage(idx, PLANTED), 1, 'the grown index finds the planted passage');
  const reader = await PassageIndex.open({ ...opts, writes: false });
  t.teardown(() => reader.close());
  const rawDb = await lancedb.connect(dir);
  const rawReader = await rawDb.openTable('passages');
  t.teardown(() => {
    rawReader.close();
    rawDb.close();
  });
  t.equal((await vectorStatsOf(rawReader)).numIndices, grown.numIndices, 'before: the grown segments');

  // 799 vectors: twice the trained size. The retraining runs after the optimize returned; a write meanwhile is kept.
  await idx.upsertPages(pages(2000, 50));
  await idx.optimize();
  const during = idx.maintenanceSettled();
  await idx.upsertPages([makePage(5000, 'late.example', ['violet glacier metronome bramble'])]);
  await during;
  t.equal(first.retrains().length, 1, 'retrained once');
  const trained = readMeta(dir).vectorIndexTrainedOn!;
  t.ok(trained === 799 || trained === 800, `trained on the vectors it read (${trained})`);
  const retrained = await vectorStats(dir);
  t.equal(retrained.numIndices, 1, 'one segment, no deltas');
  t.equal(retrained.numIndexedRows + retrained.numUnindexedRows, 800, 'every row, the late write included');
  t.equal(await nearestPage(idx, PLANTED), 1, 'the retrained index finds the planted passage');
  t.equal(await nearestPage(idx, 'violet glacier metronome bramble'), 5000, 'the page written during the retraining is found');

  // A reader opened before the retraining searches the new index once at its version (as `catchUp` re-reads it).
  await reader.catchUp(await idx.servingVersion());
  await rawReader.checkoutLatest();
  const seen = await vectorStatsOf(rawReader);
  t.same([seen.numIndices, seen.numIndexedRows], [1, trained], "a handle opened before reads the new index's segment");
  t.equal(await nearestPage(reader, PLANTED), 1, 'a reader finds the planted passage');
  t.equal(await nearestPage(reader, 'violet glacier metronome bramble'), 5000, "a reader finds the late write's passage");

  // The next optimize folds the late row in; a reopened writer keeps the trained size and does not retrain.
  await idx.optimize();
  t.equal((await vectorStats(dir)).numUnindexedRows, 0, 'the late row is indexed at the next optimize');
  await idx.close();
  const second = capture();
  idx = await PassageIndex.open({ ...opts, log: second.log });
  await idx.upsertPages(pages(3000, 50));
  await idx.optimize();
  await idx.maintenanceSettled();
  t.equal(second.retrains().length, 0, 'a reopened writer keeps the rule: 900 vectors is not twice the trained size');
  t.equal(readMeta(dir).vectorIndexTrainedOn, trained, 'the trained size survived the reopen');
  t.equal(await nearestPage(idx, 'violet glacier metronome bramble'), 5000);
});

t.test('too many delta segments retrain the index before the vectors double', async (t) => {
  const dir = t.testdir();
  const opts = writerOptions(dir);
  const c = capture();
  const idx = await PassageIndex.open({ ...opts, log: c.log });
  t.teardown(() => idx.close());
  await idx.upsertPages([makePage(1, 'planted.example', [PLANTED]), ...pages(2, 399)]); // 799 passages
  await idx.optimize();
  t.equal(readMeta(dir).vectorIndexTrainedOn, 799);
  let segments = 1;
  let ref = 1000;
  // Small optimizes, each adding a delta segment, until LanceDB reports more than the limit.
  for (let b = 0; b < 3 * VECTOR_SEGMENT_LIMIT && c.retrains().length === 0; b++) {
    await idx.upsertPages(pages(ref, 5));
    ref += 5;
    await idx.optimize();
    await idx.maintenanceSettled();
    if (c.retrains().length === 0) {
      segments = (await vectorStats(dir)).numIndices!;
      t.ok(segments <= VECTOR_SEGMENT_LIMIT + 1, `no retraining at ${segments} segments`);
    }
  }
  t.equal(c.retrains().length, 1, 'retrained once the segments passed the limit');
  t.equal(c.retrains()[0]!.o.before && (c.retrains()[0]!.o.before as { segments: number }).segments, VECTOR_SEGMENT_LIMIT + 1);
  const vectors = 799 + (ref - 1000) * 2;
  t.ok(vectors < 2 * 799, `before the vectors doubled (${vectors})`);
  t.equal(readMeta(dir).vectorIndexTrainedOn, vectors, 'trained on every vector');
  t.equal((await vectorStats(dir)).numIndices, 1, 'one segment again');
  t.equal(await nearestPage(idx, PLANTED), 1, 'the retrained index finds the planted passage');
});

t.test('an index built before the trained size was recorded is retrained once', async (t) => {
  const dir = t.testdir();
  const opts = writerOptions(dir);
  let idx = await PassageIndex.open(opts);
  await idx.upsertPages([makePage(1, 'planted.example', [PLANTED]), ...pages(2, 199)]);
  await idx.optimize();
  await idx.close();
  const meta = readMeta(dir);
  delete meta.vectorIndexTrainedOn;
  writeFileSync(join(dir, 'svc-index-meta.json'), JSON.stringify(meta));

  const c = capture();
  idx = await PassageIndex.open({ ...opts, log: c.log });
  t.teardown(() => idx.close());
  await idx.upsertPages(pages(1000, 10));
  await idx.optimize();
  await idx.maintenanceSettled();
  t.equal(c.retrains().length, 1, 'retrained at the first optimize');
  t.equal(readMeta(dir).vectorIndexTrainedOn, 419, 'its trained size is recorded now');
  await idx.optimize();
  await idx.maintenanceSettled();
  t.equal(c.retrains().length, 1, 'and not again');
  t.equal(await nearestPage(idx, PLANTED), 1);
});
