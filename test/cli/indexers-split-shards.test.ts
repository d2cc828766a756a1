/**
 * Two indexers owning shards 0-1 and 2-3 of an index of 4 (`svc serve --role indexer --shards`, here through
 * createServices on one data dir) drain one outbox: each claims only its shards' entries (the URL hash they carry),
 * so every page lands in exactly its shard, once, in its latest version, and a removal reaches the shard holding the
 * page. A third indexer asking for a shard already held is refused, naming the shard and its owner. Expected shards
 * are computed here from the URLs (FNV-1a modulo 4).
 */
import { join } from 'node:path';
import t from 'tap';
import { loadConfig } from '../../config.js';
import { OutboxSink } from '../../crawler/outbox.js';
import { ShardOwnedError } from '../../crawler/shard-fence.js';
import { createServices, type Services } from '../../main.js';
import { openIndex, ShardedIndex } from '../../index/shards/sharded-index.js';
import { urlHash32 } from '../../page-model.js';
import { openStateDb } from '../../state/db.js';
import { sqliteRepositories } from '../../state/repos/sqlite.js';
import { makePage } from '../helpers/page-input.js';
import { waitFor } from '../helpers/wait-for.js';

const WAIT_MS = 30_000;

t.test('2 indexers of 2 shards each drain one outbox: every page in exactly its shard, once; an owned shard is refused', async (t) => {
  const dir = t.testdir();
  const config = loadConfig({
    env: { SVC_INDEX_SHARDS: '4', SVC_INDEX_WAIT_FOR_WRITER_S: '0', SVC_SHARD_LEASE_S: '30' },
    flags: { dataDir: dir, crawl: false },
  });
  const open = (shards: number[]): Promise<Services> => createServices(config, { role: 'indexer', embedder: null, shards });
  const low = await open([0, 1]);
  t.teardown(() => low.close());
  const high = await open([2, 3]);
  t.teardown(() => high.close());

  const err = await open([1, 2]).then(
    async (s) => {
      await s.close();
      return null;
    },
    (e: unknown) => e,
  );
  t.ok(err instanceof ShardOwnedError, 'a third indexer for shards 1-2 is refused');
  t.match((err as Error).message, new RegExp(`^shard 1 is written by indexer-.+-${process.pid} \\(lease until `));
  t.match((err as Error).message, /; shard 2 is written by indexer-/);

  // The crawler side: 30 pages, then a newer version of every third and a removal of every fifth, all in one outbox.
  const db = openStateDb(join(dir, 'state.sqlite'));
  t.teardown(() => db.close());
  const repos = sqliteRepositories(db);
  const sink = new OutboxSink(repos.outbox);
  const pages: { i: number; ref: number; url: string; host: string }[] = [];
  for (let i = 0; i < 30; i++) {
    const host = `h${i % 4}.test`;
    const url = `https://${host}/page-${i}`;
    const ref = await repos.documents.allocate(url, host);
    pages.push({ i, ref, url, host });
    await sink.upsertPage(makePage(ref, host, [`First version of page ${i}.`], { url }));
  }
  for (const p of pages) {
    if (p.i % 3 === 0)
      await sink.upsertPage(makePage(p.ref, p.host, [`Second version of page ${p.i}.`, 'And a second passage.'], { url: p.url }));
    if (p.i % 5 === 0) await sink.removePage(p.ref, p.url);
  }
  const shardOf4 = (url: string) => urlHash32(url) % 4;
  t.ok(
    [0, 1, 2, 3].every((s) => pages.some((p) => shardOf4(p.url) === s)),
    'pages in every shard',
  );

  low.start();
  high.start();
  await waitFor(
    'the outbox drained',
    async () => {
      const s = await repos.outbox.stats();
      return s.pending + s.leased === 0;
    },
    WAIT_MS,
  );
  t.match((await low.readiness!()).checks, { role: 'indexer', shards: '0,1 of 4' });
  // What an indexer opened is only its shards: a page of another shard is refused, not written.
  const foreign = pages.find((p) => shardOf4(p.url) === 3)!;
  await t.rejects(
    low.deps.index.upsertPage(makePage(foreign.ref, foreign.host, ['Not mine.'], { url: foreign.url })),
    new RegExp(`^page ${foreign.url} belongs to shard 3, which this index does not hold \\(0,1\\)$`),
  );

  const index = await openIndex({ dir: join(dir, 'lance'), embedder: null, textEngine: false, writes: false });
  t.teardown(() => index.close());
  t.ok(index instanceof ShardedIndex && index.shardCount === 4);
  const shards = (index as ShardedIndex).shards;
  for (const p of pages) {
    const found = await Promise.all(shards.map((s) => s.pagePassages(p.ref, 0, 10)));
    const holders = found.flatMap((f, i) => (f ? [i] : []));
    if (p.i % 5 === 0) {
      t.same(holders, [], `page ${p.i}: removed from its shard`);
      continue;
    }
    t.same(holders, [shardOf4(p.url)], `page ${p.i}: in shard ${shardOf4(p.url)} only`);
    const texts = found[shardOf4(p.url)]!.passages.map((x) => x.text);
    t.same(
      texts,
      p.i % 3 === 0 ? [`Second version of page ${p.i}.`, 'And a second passage.'] : [`First version of page ${p.i}.`],
      `page ${p.i}: its latest version, once`,
    );
  }
  const st = await index.stats();
  t.equal(st.pages, pages.filter((p) => p.i % 5 !== 0).length, 'one row per page left');
  // Closed here, before the test's folder is removed (the writers' upkeep must not run into its removal).
  await index.close();
  await low.close();
  await high.close();
});
