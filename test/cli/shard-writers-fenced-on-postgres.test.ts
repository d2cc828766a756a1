/**
 * One writer per index shard, fenced through a real PostgreSQL (SVC_DATABASE_URL), with `svc serve --role indexer
 * --shards` processes on an index of 4 shards: a second indexer asking for an owned shard exits 1 naming the shard and
 * its owner; after a kill -9 of the owner its lease lapses (SVC_SHARD_LEASE_S) and a new indexer takes the shards
 * under a greater fencing token; a clean stop releases them at once. A writer that lost its lease (paused past it
 * with SIGSTOP) commits nothing more: the pages it could have written stay in the outbox for the next owner. And in
 * one process: a drainer whose token was taken over writes no page of its claimed batch.
 */
import { join } from 'node:path';
import t, { type Test } from 'tap';
import { OutboxDrainer, OutboxSink } from '../../crawler/outbox.js';
import { ShardFence, ShardLeaseLostError } from '../../crawler/shard-fence.js';
import { openIndex, shardOf } from '../../index/shards/sharded-index.js';
import { PassageIndex } from '../../index/engines/lance/store.js';
import { openPostgresRepositories } from '../../state/repos/postgres.js';
import type { Repositories } from '../../state/repos/types.js';
import { makePage } from '../helpers/page-input.js';
import { postgresUnavailable, startPostgres, type PostgresServer } from '../helpers/postgres-server.js';
import { serveRole, type ServeProcess } from '../helpers/serve-role.js';
import { waitFor } from '../helpers/wait-for.js';

const LEASE_S = 6;
const OUTBOX_LEASE_MS = 1000;

const why = postgresUnavailable();
if (why) {
  if (process.env.CI) t.fail(`shard writers on PostgreSQL cannot run: ${why}`);
  else t.test('shard writers on PostgreSQL', { skip: why }, async () => undefined);
} else {
  let server: PostgresServer;
  t.before(async () => {
    server = await startPostgres();
  });
  t.teardown(() => server?.stop());

  /** A fleet: the database, the index folder every indexer writes, and a way to start indexers on it. */
  const fleet = async (t: Test, name: string) => {
    const databaseUrl = await server.createDatabase(name);
    const repos = await openPostgresRepositories(databaseUrl);
    const root = t.testdir();
    const indexDir = join(root, 'index');
    const procs: ServeProcess[] = [];
    t.teardown(async () => {
      for (const p of procs) if (p.child.exitCode === null && p.child.signalCode === null) p.child.kill('SIGKILL');
      await Promise.all(procs.map((p) => p.exited));
      await repos.close();
    });
    let n = 0;
    const indexer = (shards?: string): ServeProcess => {
      const p = serveRole({
        role: 'indexer',
        dataDir: join(root, `indexer-${++n}`),
        leaseMs: OUTBOX_LEASE_MS,
        env: {
          SVC_LOG_LEVEL: 'warn',
          SVC_DATABASE_URL: databaseUrl,
          SVC_INDEX_URI: indexDir,
          SVC_INDEX_SHARDS: '4',
          SVC_SHARD_LEASE_S: String(LEASE_S),
        },
        ...(shards ? { args: ['--shards', shards] } : {}),
      });
      procs.push(p);
      return p;
    };
    const writers = async () => (await repos.shardWriters.list()).map((w) => ({ shard: w.shard, owner: w.owner, token: w.token }));
    /** Whether every one of `shards` is held under `token` now (the database's clock). */
    const holds = (token: number, shards: number[]) => repos.shardWriters.check({ token, shards });
    return { repos, indexDir, indexer, writers, holds };
  };

  /** `count` pages whose URLs fall in `shards` of 4, with page refs from the registry. */
  const pagesIn = async (repos: Repositories, shards: number[], count: number, tag: string) => {
    const out = [];
    for (let i = 0; out.length < count; i++) {
      const url = `https://fence.test/${tag}-${i}`;
      if (!shards.includes(shardOf(url, 4))) continue;
      out.push(makePage(await repos.documents.allocate(url, 'fence.test'), 'fence.test', [`Page ${tag} ${i}.`], { url }));
    }
    return out;
  };

  t.test('a second indexer for an owned shard is refused; kill -9 the owner: its lease lapses, a new one takes over', async (t) => {
    const f = await fleet(t, 'refused_then_takeover');
    const a = f.indexer('0-1');
    await a.url;
    const [w0] = await f.writers();
    t.match(await f.writers(), [
      { shard: 0, owner: new RegExp(`-${a.child.pid}$`) },
      { shard: 1, owner: new RegExp(`-${a.child.pid}$`) },
    ]);

    const b = f.indexer('1-3');
    t.equal(await b.exited, 1, 'the second indexer exits 1');
    t.match(
      b.out,
      new RegExp(`svc serve: shard 1 is written by indexer-\\S+-${a.child.pid} \\(lease until \\S+, renewed while it runs\\)`),
    );
    t.notMatch(b.out, /shard [23] is written/, 'only the held shard is named');
    t.same(
      (await f.writers()).filter((w) => w.shard >= 2),
      [],
      'all or none: shards 2 and 3 were not taken',
    );

    a.child.kill('SIGKILL');
    await a.exited;
    t.ok(await f.holds(w0!.token, [0, 1]), 'the killed owner still holds its shards until the lease lapses');
    await waitFor('the killed owner’s lease to lapse', async () => !(await f.holds(w0!.token, [0, 1])), LEASE_S * 1000 * 5);

    const c = f.indexer('0-1');
    await c.url;
    const after = await f.writers();
    t.match(after, [
      { shard: 0, owner: new RegExp(`-${c.child.pid}$`) },
      { shard: 1, owner: new RegExp(`-${c.child.pid}$`) },
    ]);
    t.ok(after[0]!.token > w0!.token, 'under a greater fencing token');

    // The new owner writes its shards' pages from the outbox.
    const pages = await pagesIn(f.repos, [0, 1], 3, 'after');
    const sink = new OutboxSink(f.repos.outbox);
    for (const p of pages) await sink.upsertPage(p);
    await waitFor('the new owner to drain its pages', async () => {
      const s = await f.repos.outbox.stats();
      return s.pending + s.leased === 0;
    });

    // A clean stop lets the shards go at once.
    c.child.kill('SIGTERM');
    t.equal(await c.exited, 0);
    t.same(
      (await f.repos.shardWriters.list()).map((w) => w.leaseUntil),
      [0, 0],
      'released at a clean stop',
    );
    const d = f.indexer('0-3');
    await d.url;
    t.pass('a new indexer takes them without waiting for a lease to lapse');
    d.child.kill('SIGTERM');
    t.equal(await d.exited, 0);

    const index = await openIndex({ dir: f.indexDir, embedder: null, textEngine: false, writes: false });
    t.teardown(() => index.close());
    t.equal((await index.stats()).pages, 3, 'the pages of the new owner are in the index');
  });

  t.test('an indexer paused past its lease commits nothing more: it exits 1, its pages wait for the next owner', async (t) => {
    const f = await fleet(t, 'paused_writer');
    const a = f.indexer();
    await a.url;
    const [w] = await f.writers();
    t.equal((await f.writers()).length, 4, 'an indexer without --shards takes every shard');

    a.child.kill('SIGSTOP');
    await waitFor('the paused indexer’s lease to lapse', async () => !(await f.holds(w!.token, [0, 1, 2, 3])), LEASE_S * 1000 * 5);
    const pages = await pagesIn(f.repos, [0, 1, 2, 3], 4, 'paused');
    const sink = new OutboxSink(f.repos.outbox);
    for (const p of pages) await sink.upsertPage(p);
    a.child.kill('SIGCONT');

    t.equal(await a.exited, 1, 'it stops with exit code 1');
    t.match(a.out, /svc serve: shards 0,1,2,3: .*; stopping/);
    const left = await f.repos.outbox.stats();
    t.equal(left.pending + left.leased, 4, 'nothing it claimed was acknowledged');
    const before = await openIndex({ dir: f.indexDir, embedder: null, textEngine: false, writes: false });
    t.equal((await before.stats()).pages, 0, 'and nothing was committed to the index');
    await before.close();

    const c = f.indexer();
    await c.url;
    await waitFor('the next owner to drain the outbox', async () => {
      const s = await f.repos.outbox.stats();
      return s.pending + s.leased === 0;
    });
    c.child.kill('SIGTERM');
    t.equal(await c.exited, 0);
    const index = await openIndex({ dir: f.indexDir, embedder: null, textEngine: false, writes: false });
    t.teardown(() => index.close());
    t.equal((await index.stats()).pages, 4, 'the next owner wrote them');
  });

  t.test('in one process: a drainer whose shards were taken over writes no page of its claimed batch', async (t) => {
    const databaseUrl = await server.createDatabase('taken_over');
    const repos = await openPostgresRepositories(databaseUrl);
    t.teardown(() => repos.close());
    const index = await PassageIndex.open({ dir: join(t.testdir(), 'lance'), embedder: null });
    t.teardown(() => index.close());
    const fence = await ShardFence.take({ repo: repos.shardWriters, owner: 'ix-old', shards: [0], leaseMs: 60_000 });
    t.teardown(() => fence.release());
    const drainer = new OutboxDrainer({
      outbox: repos.outbox,
      sink: index,
      log: { debug() {}, info() {}, warn() {} },
      beforeWrite: () => fence.check(),
    });
    const sink = new OutboxSink(repos.outbox);
    await sink.upsertPage(
      makePage(await repos.documents.allocate('https://fence.test/a', 'fence.test'), 'fence.test', ['A.'], { url: 'https://fence.test/a' }),
    );
    t.equal(await drainer.drainOnce(), 1, 'while it holds the shard, it writes');
    t.equal((await index.stats()).pages, 1);

    // As if its lease had lapsed and another indexer took the shard: the row now carries another owner's token.
    await repos.shardWriters.release({ token: fence.token, shards: [0] });
    const next = await repos.shardWriters.acquire({ owner: 'ix-new', shards: [0], leaseMs: 60_000 });
    t.ok(next.ok);
    await sink.upsertPage(
      makePage(await repos.documents.allocate('https://fence.test/b', 'fence.test'), 'fence.test', ['B.'], { url: 'https://fence.test/b' }),
    );
    await t.rejects(drainer.drainOnce(), ShardLeaseLostError, 'the check before the commit refuses');
    t.equal((await index.stats()).pages, 1, 'the page was not written');
    t.equal((await repos.outbox.stats()).leased, 1, 'its entry stays leased, to return to the next owner');
    t.ok(fence.lost.aborted, 'the fence says it is lost');
  });
}
