/**
 * Each shard is first asked for its best `shardShareOfTop(k, N)` text candidates, not k, and still the index's top k
 * come out exactly as one index's: a shard whose lowest given score reaches the merged k-th is asked again for its k.
 * Shown on a corpus whose best passages all sit in one shard (that shard, and only it, is asked again) and on one
 * spread evenly (no shard is), in process and over HTTP as an `api` replica asks searchers.
 */
import t, { type Test } from 'tap';
import { join } from 'node:path';
import { ARM_DEPTH, retrieve } from '../../index/retrieval/retrieval.js';
import { localIndexLocation } from '../../index/engines/lance/location.js';
import type { PassageIndex } from '../../index/engines/lance/store.js';
import { shardShareOfTop } from '../../index/engines/lance/shard-layout.js';
import { openIndex, shardOf, ShardedIndex, type ServedIndex, type ShardSource } from '../../index/shards/sharded-index.js';
import type { PageInput } from '../../page-model.js';
import { makePage } from '../helpers/page-input.js';
import { liveOf, remoteIndex, startShardServer } from '../helpers/shard-servers.js';

const N = 4;
const QUERY = 'river delta';
const FILLER = ['alder', 'basin', 'cedar', 'ember', 'fjord', 'grove', 'heath', 'inlet', 'jetty', 'knoll', 'loess'];
const words = (word: string, n: number): string[] => Array<string>(n).fill(word);
const filler = (n: number): string[] => Array.from({ length: n }, (_, i) => FILLER[i % FILLER.length]!);
/**
 * The `j`-th passage holding both query words: each j its own counts of them and length, so no two such passages
 * score the same. (One index breaks ties at its k-th candidate by its own row order, shards by passage key: a tie
 * straddling the k-th would tell them apart whatever each shard is asked for.)
 */
const both = (j: number): string =>
  [...words('delta', 1 + (j % 4)), ...words('river', 1 + ((j >> 2) % 3)), ...filler(Math.floor(j / 12))].join(' ');
/** A passage holding `river` alone: far below any holding `delta` too (`delta` is rarer, its idf far larger). */
const riverOnly = (j: number): string => ['river', ...filler(j % 11)].join(' ');

t.test('the depth a shard is first asked for', async (t) => {
  t.equal(shardShareOfTop(300, 1), 300, 'one shard: k');
  t.equal(shardShareOfTop(300, 4), 105, 'a quarter of 300 plus four standard deviations');
  t.equal(shardShareOfTop(1000, 4), 305);
  t.equal(shardShareOfTop(3, 2), 3, 'never more than k');
  for (const n of [2, 3, 5, 16]) t.ok(shardShareOfTop(300, n) >= Math.ceil(300 / n), `${n} shards: at least an even share`);
});

/** Every ranked passage of a BM25 query: its key and scores. */
const ranked = async (idx: ServedIndex, query: string) =>
  (await retrieve(idx, { query, mode: 'bm25' })).passages.map((p) => [p.row.page_ref, p.row.ordinal, p.score, p.bm25Score]);

/** The shards of `sharded` as sources that record the k of each text candidates call. */
function recording(sharded: ShardedIndex): { sources: ShardSource[]; asked: number[][] } {
  const asked = sharded.shards.map((): number[] => []);
  const sources = sharded.shards.map(
    (shard: PassageIndex, i) =>
      new Proxy(shard, {
        get(target, prop) {
          const v: unknown = Reflect.get(target, prop, target);
          if (typeof v !== 'function') return v;
          if (prop !== 'textCandidates') return (v as (...a: unknown[]) => unknown).bind(target);
          return (...args: Parameters<PassageIndex['textCandidates']>) => {
            asked[i]!.push(args[2]);
            return target.textCandidates(...args);
          };
        },
      }),
  );
  return { sources, asked };
}

async function corpus(t: Test, name: string, pages: readonly PageInput[]) {
  const dir = t.testdir(); // one folder per test: each call empties it
  const one = await openIndex({ dir: join(dir, `${name}-one`), shards: 1, embedder: null, refreshAfterMs: 0 });
  const many = (await openIndex({ dir: join(dir, `${name}-many`), shards: N, embedder: null, refreshAfterMs: 0 })) as ShardedIndex;
  t.teardown(async () => {
    await one.close();
    await many.close();
  });
  await one.upsertPages(pages);
  await many.upsertPages(pages);
  return { one, many };
}

const DEPTH = shardShareOfTop(ARM_DEPTH, N);

t.test('the best passages all in one shard: that shard is asked again, and the answer is one index’s', async (t) => {
  // Shard 0's pages hold both words in five passages each: more than k passages, every one better than any other
  // shard's (river alone, two passages a page).
  let j = 0;
  const pages = Array.from({ length: 320 }, (_, i) => {
    const ref = i + 1;
    const mine = shardOf(`https://a.example/page-${ref}`, N) === 0;
    return makePage(
      ref,
      'a.example',
      Array.from({ length: mine ? 5 : 2 }, (_, o) => (mine ? both(j++) : riverOnly(ref + o))),
    );
  });
  const top = pages.filter((p) => shardOf(p.url, N) === 0).length * 5;
  t.ok(top > ARM_DEPTH, `shard 0 holds ${top} passages better than any other shard's, more than k = ${ARM_DEPTH}`);
  const { one, many } = await corpus(t, 'skewed', pages);
  const want = await ranked(one, QUERY);
  t.equal(want.length, ARM_DEPTH, 'one index: k ranked passages');

  const { sources, asked } = recording(many);
  const local = ShardedIndex.over(sources, localIndexLocation(many.dir), { deadlineMs: Infinity });
  t.same(await ranked(local, QUERY), want, 'N shards in process: the ranked passages and scores of one index');
  t.same(
    asked,
    [[DEPTH, ARM_DEPTH], [DEPTH], [DEPTH], [DEPTH]],
    `every shard first asked for ${DEPTH}; only shard 0, whose lowest reaches the k-th, again for ${ARM_DEPTH}`,
  );

  const server = await startShardServer(new Map(many.shards.map((s, i) => [i, s])));
  const { index: remote, sources: remotes } = await remoteIndex({ count: N, live: () => liveOf([server], N), embedder: null });
  t.teardown(async () => {
    await remote.close();
    await server.close();
  });
  const { value } = await remote.covered(() => ranked(remote, QUERY));
  t.same(value, want, 'over searchers: the ranked passages and scores of one index');
  t.same(
    remotes.map((s) => [s.calls.get('arms'), s.calls.get('textCandidates') ?? 0]),
    [
      [1, 1],
      [1, 0],
      [1, 0],
      [1, 0],
    ],
    'over searchers: one arms call per shard, and one text candidates call again for shard 0 alone',
  );
});

t.test('passages spread over the shards: none is asked again, and the answer is one index’s', async (t) => {
  const pages = Array.from({ length: 200 }, (_, i) =>
    makePage(
      i + 1,
      'b.example',
      Array.from({ length: 3 }, (_, o) => both(3 * i + o)),
    ),
  );
  const { one, many } = await corpus(t, 'even', pages);
  const want = await ranked(one, QUERY);
  t.equal(want.length, ARM_DEPTH);
  const { sources, asked } = recording(many);
  const local = ShardedIndex.over(sources, localIndexLocation(many.dir), { deadlineMs: Infinity });
  t.same(await ranked(local, QUERY), want, 'the ranked passages and scores of one index');
  t.same(asked, [[DEPTH], [DEPTH], [DEPTH], [DEPTH]], `each shard asked once, for ${DEPTH} of the ${ARM_DEPTH}`);
});
