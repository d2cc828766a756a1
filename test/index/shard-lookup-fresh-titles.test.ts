/**
 * A searcher's `lookup` (index/shards/shard-wire.ts) answers the title statistics of the version it serves: asked
 * first thing after a start, before any query brought its postings up to date, it counts the titles the table holds —
 * the api replica scores every title with them.
 */
import { join } from 'node:path';
import t from 'tap';
import { PassageIndex } from '../../index/engines/lance/store.js';
import { createHashingEmbedder } from '../../index/serving/embedder.js';
import { answerShardCall, type ShardLookupAnswer } from '../../index/shards/shard-wire.js';
import { makePage } from '../helpers/page-input.js';

t.test('a lookup asked before any query counts the titles of the version served', async (t) => {
  const dir = join(t.testdir(), 'shard');
  const embedder = createHashingEmbedder(32);
  const writer = await PassageIndex.open({ dir, embedder, refreshAfterMs: 0 });
  t.teardown(() => writer.close());
  await writer.upsertPages([
    makePage(1, 'a.example', ['zinc permit for river works'], { title: 'River works' }),
    makePage(2, 'b.example', ['sleep and memory in cells'], { title: 'Sleep and memory' }),
  ]);
  const searcher = await PassageIndex.open({ dir, embedder, writes: false, refreshAfterMs: 0 });
  t.teardown(() => searcher.close());
  const ask = async () =>
    (await answerShardCall(searcher, 'lookup', { domains: [], lang: null, titleTerms: ['river'], terms: ['river'] })) as ShardLookupAnswer;
  const first = await ask();
  t.equal(first.titleCorpus.titles, 2, 'both titles counted');
  t.equal(first.titleCorpus.df.get('river'), 1);
});
