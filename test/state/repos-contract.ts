/**
 * The one contract of the state repositories, run against both backends (repos-sqlite.test.ts,
 * repos-postgres.test.ts). `open` must give fresh, empty, migrated repositories each time it is called.
 */
import type { Test } from 'tap';
import type { SvcError } from '../../errors.js';
import { LeaseLostError, type Repositories } from '../../state/repos/types.js';
import { urlHash32 } from '../../page-model.js';

export type OpenRepos = (name: string) => Promise<Repositories>;
/** Opens a second handle (its own connection or pool) on the store `open(name)` made: another worker of the fleet. */
export type ReopenRepos = (name: string) => Promise<Repositories>;

const T0 = Date.UTC(2026, 10, 21, 10, 0, 10);

async function withRepos(t: Test, open: OpenRepos, name: string): Promise<Repositories> {
  const r = await open(name);
  t.teardown(() => r.close());
  return r;
}

export function repoContract(t: Test, open: OpenRepos, reopen: ReopenRepos): void {
  t.test('keys: create, verify by digest, list, revoke', async (t) => {
    const r = await withRepos(t, open, 'keys');
    const { record, key } = await r.keys.create({ name: 'ci', perMinute: 5, perDay: 50, now: new Date(T0) });
    t.match(key, /^svc_[0-9A-Za-z]{10}_[0-9A-Za-z]{39}$/);
    const v = await r.keys.verify(key);
    t.match(v, { id: record.id, name: 'ci', perMinute: 5, perDay: 50, revokedAt: null });
    t.equal(v?.digest.length, 64, 'hex SHA-256 of the key');
    t.equal(await r.keys.verify(key.slice(0, -1) + (key.endsWith('A') ? 'B' : 'A')), null, 'a typo is not a key');
    t.same(
      (await r.keys.list()).map((k) => k.id),
      [record.id],
    );
    t.equal(await r.keys.revoke(record.id, new Date(T0 + 1000)), true);
    t.equal(await r.keys.revoke(record.id), false, 'already revoked');
    t.equal(await r.keys.verify(key), null, 'revoked keys do not verify');
    t.equal((await r.keys.list())[0]?.revokedAt, new Date(T0 + 1000).toISOString());
  });

  t.test('usage counters: minute and day windows, a refusal consumes nothing', async (t) => {
    const r = await withRepos(t, open, 'usage');
    const d = 'ab'.repeat(32);
    const limits = { perMinute: 3, perDay: 5 };
    const at = (ms: number) => new Date(T0 + ms);
    t.same(await r.usage.peek(d, limits, at(0)), {
      allowed: true,
      limitMinute: 3,
      limitDay: 5,
      remainingMinute: 3,
      remainingDay: 5,
      retryAfter: 0,
    });
    t.match(await r.usage.consume(d, limits, at(0)), { allowed: true, remainingMinute: 2, remainingDay: 4, retryAfter: 0 });
    await r.usage.consume(d, limits, at(1000));
    t.match(await r.usage.consume(d, limits, at(2000)), { allowed: true, remainingMinute: 0, remainingDay: 2 });
    t.match(await r.usage.consume(d, limits, at(3000)), { allowed: false, remainingMinute: 0, remainingDay: 2, retryAfter: 47 });
    t.match(
      await r.usage.peek(d, limits, at(3500)),
      { allowed: true, remainingMinute: 0, remainingDay: 2, retryAfter: 0 },
      'peek consumes nothing',
    );
    t.match(await r.usage.consume('cd'.repeat(32), limits, at(3000)), { allowed: true, remainingMinute: 2 }, 'other keys are independent');
    // Next minute: the minute window resets, the day keeps counting (3 used; the refusal consumed nothing).
    t.match(await r.usage.consume(d, limits, at(60_000)), { allowed: true, remainingMinute: 2, remainingDay: 1 });
    t.match(await r.usage.consume(d, limits, at(61_000)), { allowed: true, remainingDay: 0 });
    const full = await r.usage.consume(d, limits, at(62_000));
    t.match(full, { allowed: false, remainingDay: 0 });
    t.equal(full.retryAfter, 50_328, 'seconds until the next UTC day');
    t.equal(await r.usage.prune(T0 + 2 * 86_400_000), 5, 'every window row is older than two days later');
  });

  t.test('issue 10: concurrent quota checks admit exactly the remaining quota', async (t) => {
    const r = await withRepos(t, open, 'quota');
    const d = 'ef'.repeat(32);
    const limits = { perMinute: 1000, perDay: 37 };
    const now = new Date(T0);
    const out = await Promise.all(Array.from({ length: 200 }, () => r.usage.consume(d, limits, now)));
    t.equal(out.filter((x) => x.allowed).length, 37);
    t.same(
      out
        .filter((x) => x.allowed)
        .map((x) => x.remainingDay)
        .sort((a, b) => a - b),
      Array.from({ length: 37 }, (_, i) => i),
      'each slot once',
    );
  });

  t.test('frontier: enqueue dedupes, claims by priority, politeness per host', async (t) => {
    const r = await withRepos(t, open, 'frontier');
    t.same(await r.frontier.enqueue({ url: 'http://a.test/1', host: 'a.test', reason: 'seed' }, T0), { id: 1, added: true });
    t.match(await r.frontier.enqueue({ url: 'http://a.test/1', host: 'a.test', reason: 'link', priority: 9 }, T0), { id: 1, added: false });
    await r.frontier.enqueue({ url: 'http://a.test/2', host: 'a.test', reason: 'link', priority: 5 }, T0);
    await r.frontier.enqueue({ url: 'http://b.test/1', host: 'b.test', reason: 'seed', priority: 1 }, T0);
    await r.frontier.enqueue({ url: 'http://c.test/later', host: 'c.test', reason: 'seed', priority: 99, at: T0 + 10_000 }, T0);
    await r.politeness.setGap('a.test', 2000);
    t.same(await r.politeness.get('a.test'), { host: 'a.test', gapMs: 2000, nextFetchAt: 0 });
    t.same(await r.politeness.get('b.test'), { host: 'b.test', gapMs: 1000, nextFetchAt: 0 }, 'the default gap');
    const first = await r.frontier.claim({ owner: 'w1', leaseMs: 60_000, now: T0 });
    t.match(first, { url: 'http://a.test/2', host: 'a.test', priority: 5, attempts: 0, leaseUntil: T0 + 60_000 });
    t.equal((await r.politeness.get('a.test'))?.nextFetchAt, T0 + 2000, 'the claim moved the host on by its gap');
    const second = await r.frontier.claim({ owner: 'w2', leaseMs: 60_000, now: T0 + 10 });
    t.equal(second?.url, 'http://b.test/1', 'a.test waits for its gap; b.test is free');
    t.equal(await r.frontier.claim({ owner: 'w2', leaseMs: 60_000, now: T0 + 1999 }), null, 'nothing is due yet');
    const third = await r.frontier.claim({ owner: 'w2', leaseMs: 60_000, now: T0 + 2000 });
    t.equal(third?.url, 'http://a.test/1');
    t.same(await r.frontier.counts(), { queued: 1, leased: 3, retrying: 0, done: 0, dead: 0 });
    t.equal(await r.frontier.unfinished(), 4);
  });

  t.test('frontier: leases expire by time; a stale lease cannot complete', async (t) => {
    const r = await withRepos(t, open, 'lease');
    await r.frontier.enqueue({ url: 'http://a.test/x', host: 'a.test', reason: 'seed' }, T0);
    await r.politeness.setGap('a.test', 0);
    const a = await r.frontier.claim({ owner: 'dead-worker', leaseMs: 100, now: T0 });
    t.ok(a);
    t.equal(await r.frontier.claim({ owner: 'w2', leaseMs: 100, now: T0 + 99 }), null, 'held until the lease ends');
    const b = await r.frontier.claim({ owner: 'w2', leaseMs: 1000, now: T0 + 100 });
    t.equal(b?.id, a?.id, 'the expired lease came back');
    t.not(b?.lease, a?.lease);
    const lost = await r.frontier.complete(a!, { recrawlAt: T0 + 10_000, now: T0 + 150 }).catch((e: unknown) => e);
    t.ok(lost instanceof LeaseLostError);
    t.equal((lost as LeaseLostError).code, 'lease_lost');
    await t.rejects(r.frontier.release(a!), LeaseLostError);
    const extended = await r.frontier.extend(b!, 5000, T0 + 900);
    t.equal(extended.leaseUntil, T0 + 5900);
    t.equal(await r.frontier.claim({ owner: 'w3', leaseMs: 100, now: T0 + 1500 }), null, 'extended past the first expiry');
    await r.frontier.complete(extended, { recrawlAt: T0 + 86_400_000, status: 200, now: T0 + 1600 });
    t.same(await r.frontier.counts(), { queued: 0, leased: 0, retrying: 0, done: 1, dead: 0 });
    t.equal(await r.frontier.claim({ owner: 'w3', leaseMs: 100, now: T0 + 86_399_999 }), null);
    t.equal((await r.frontier.claim({ owner: 'w3', leaseMs: 100, now: T0 + 86_400_000 }))?.url, 'http://a.test/x', 'recrawl when due');
  });

  t.test('frontier: fail retries later or dead-letters; release gives back', async (t) => {
    const r = await withRepos(t, open, 'fail');
    await r.frontier.enqueue({ url: 'http://a.test/f', host: 'a.test', reason: 'seed' }, T0);
    await r.politeness.setGap('a.test', 0);
    const a = await r.frontier.claim({ owner: 'w', leaseMs: 1000, now: T0 });
    t.equal(await r.frontier.fail(a!, { error: 'timeout', retryAt: T0 + 500, now: T0 + 10 }), 'retrying');
    t.same(await r.frontier.counts(), { queued: 0, leased: 0, retrying: 1, done: 0, dead: 0 });
    t.equal(await r.frontier.claim({ owner: 'w', leaseMs: 1000, now: T0 + 499 }), null);
    const b = await r.frontier.claim({ owner: 'w', leaseMs: 1000, now: T0 + 500 });
    t.equal(b?.attempts, 1);
    await r.frontier.release(b!, T0 + 700, T0 + 600);
    t.same(await r.frontier.counts(), { queued: 0, leased: 0, retrying: 1, done: 0, dead: 0 }, 'a released retry stays a retry');
    const c = await r.frontier.claim({ owner: 'w', leaseMs: 1000, now: T0 + 700 });
    t.equal(await r.frontier.fail(c!, { error: 'HTTP 500 three times', retryAt: null, now: T0 + 710 }), 'dead');
    t.same(await r.frontier.counts(), { queued: 0, leased: 0, retrying: 0, done: 0, dead: 1 });
    t.equal(await r.frontier.claim({ owner: 'w', leaseMs: 1000, now: T0 + 10_000_000 }), null, 'dead items are never handed out');
  });

  t.test('issue 10: concurrent claims never hand out one URL twice', async (t) => {
    const r = await withRepos(t, open, 'claims');
    for (let i = 0; i < 40; i++)
      await r.frontier.enqueue({ url: `http://h${i % 20}.test/${i}`, host: `h${i % 20}.test`, reason: 'seed' }, T0);
    const got = await Promise.all(Array.from({ length: 60 }, (_, i) => r.frontier.claim({ owner: `w${i}`, leaseMs: 60_000, now: T0 })));
    const urls = got.filter((x) => x !== null).map((x) => x.url);
    t.equal(urls.length, 20, 'one per host: the other URL of each host waits for the gap');
    t.equal(new Set(urls).size, 20, 'no URL twice');
    t.equal(new Set(got.filter((x) => x !== null).map((x) => x.host)).size, 20, 'no host twice within its gap');
  });

  t.test('issue 10: a claim reserves its host for the claimed item; acquire/release hold the host slot fleet-wide', async (t) => {
    const r = await withRepos(t, open, 'slots');
    await r.frontier.enqueue({ url: 'http://s.test/1', host: 's.test', reason: 'seed' }, T0);
    await r.frontier.enqueue({ url: 'http://s.test/2', host: 's.test', reason: 'seed', at: T0 + 50 }, T0);
    await r.politeness.setGap('s.test', 1000);
    t.equal(await r.frontier.nextClaimAt(), T0, 'due now');
    const item = (await r.frontier.claim({ owner: 'w1', leaseMs: 60_000, now: T0 }))!;
    t.equal(await r.frontier.nextClaimAt({ unfinished: true }), T0 + 1000, 'the other URL waits for the host gap');
    t.same(
      await r.politeness.acquire('s.test', 'someone-else', 5000, T0 + 10),
      { acquired: false, retryAt: T0 + 1000 },
      'reserved for the claim',
    );
    t.same(await r.politeness.acquire('s.test', item.lease, 5000, T0 + 10), { acquired: true }, 'the claimed item starts at once');
    t.same(
      await r.politeness.acquire('s.test', 'someone-else', 5000, T0 + 1500),
      { acquired: false, retryAt: T0 + 5010 },
      'held while fetching',
    );
    await r.politeness.release('s.test', 'someone-else', T0 + 1600, T0 + 1600);
    t.equal((await r.politeness.get('s.test'))?.nextFetchAt, T0 + 5010, 'a release by a non-holder changes nothing');
    await r.politeness.release('s.test', item.lease, T0 + 1700, T0 + 1600);
    t.equal((await r.politeness.get('s.test'))?.nextFetchAt, T0 + 2600, 'the gap counts from the end of the request');
    t.same(
      await r.politeness.acquire('s.test', item.lease, 5000, T0 + 2000),
      { acquired: false, retryAt: T0 + 2600 },
      'the same item waits for the gap too',
    );
    t.same(await r.politeness.acquire('new.test', 'x', 5000, T0), { acquired: true }, 'an unknown host is created free');
    t.same(await r.politeness.get('new.test'), { host: 'new.test', gapMs: 1000, nextFetchAt: T0 + 5000 });
    t.same(await r.politeness.acquire('s.test', 'other', 100, T0 + 2600), { acquired: true }, 'free again after the gap');
    t.same(
      await r.politeness.acquire('s.test', 'third', 100, T0 + 2700),
      { acquired: true },
      'a lapsed hold (killed worker) frees the host',
    );
  });

  t.test('issue 10: host ids from the database, one per host however many writers ask', async (t) => {
    const r = await withRepos(t, open, 'hostids');
    const a = await r.hostIds.idFor('a.test');
    t.equal(await r.hostIds.idFor('a.test'), a, 'stable');
    const many = await Promise.all(['b.test', 'c.test', 'b.test', 'c.test', 'b.test'].map((h) => r.hostIds.idFor(h)));
    t.equal(many[0], many[2]);
    t.equal(many[1], many[3]);
    t.equal(new Set([a, ...many]).size, 3, 'distinct per host');
    t.ok(
      [a, ...many].every((id) => Number.isInteger(id) && id > 0 && id < 2 ** 31),
      "fits the index's Int32 host_id",
    );
    t.equal(await r.hostIds.hostOf(many[1]!), 'c.test');
    t.equal(await r.hostIds.hostOf(123_456), null);
  });

  t.test('issue 10: outbox: enqueue, claim a batch under a lease, ack after the write', async (t) => {
    const r = await withRepos(t, open, 'outbox');
    t.same(await r.outbox.stats(T0), { pending: 0, leased: 0, oldestAt: null });
    t.equal(await r.outbox.claim({ owner: 'indexer', limit: 10, leaseMs: 1000, now: T0 }), null, 'nothing to claim');
    const ids: number[] = [];
    for (let i = 0; i < 5; i++) ids.push(await r.outbox.enqueue(100 + i, JSON.stringify({ pageRef: 100 + i, title: `p${i}` }), T0 + i));
    t.same(
      [...ids].sort((a, b) => a - b),
      ids,
      'ids from the database, increasing',
    );
    t.same(await r.outbox.stats(T0 + 10), { pending: 5, leased: 0, oldestAt: T0 });
    const a = await r.outbox.claim({ owner: 'indexer-a', limit: 3, leaseMs: 1000, now: T0 + 10 });
    t.same(
      a?.entries.map((e) => [e.id, e.pageRef, e.attempts]),
      ids.slice(0, 3).map((id, i) => [id, 100 + i, 1]),
      'oldest first',
    );
    t.same(JSON.parse(a!.entries[1]!.payload), { pageRef: 101, title: 'p1' }, 'payload as enqueued');
    t.equal(a?.leaseUntil, T0 + 1010);
    t.match(a?.lease, /^indexer-a:/);
    const b = await r.outbox.claim({ owner: 'indexer-b', limit: 10, leaseMs: 1000, now: T0 + 20 });
    t.same(
      b?.entries.map((e) => e.id),
      ids.slice(3),
      'held entries are not handed out again',
    );
    t.equal(await r.outbox.claim({ owner: 'indexer-c', limit: 10, leaseMs: 1000, now: T0 + 30 }), null);
    t.same(await r.outbox.stats(T0 + 30), { pending: 0, leased: 5, oldestAt: T0 });
    t.equal(await r.outbox.ack(a!.lease), 3, 'acked after the index write: removed');
    t.equal(await r.outbox.ack(a!.lease), 0, 'acking twice removes nothing more');
    t.same(await r.outbox.stats(T0 + 40), { pending: 0, leased: 2, oldestAt: T0 + 3 });
    t.equal(await r.outbox.extend(b!.lease, 1000, T0 + 900), true, 'kept alive');
    t.equal(
      await r.outbox.claim({ owner: 'indexer-c', limit: 10, leaseMs: 1000, now: T0 + 1500 }),
      null,
      'extended: still held after the first lease',
    );
    t.equal(await r.outbox.ack(b!.lease), 2);
    t.same(await r.outbox.stats(T0 + 2000), { pending: 0, leased: 0, oldestAt: null }, 'drained');
  });

  t.test("issue 10: outbox: a killed indexer's claimed batch returns after its lease; its late ack removes nothing", async (t) => {
    const r = await withRepos(t, open, 'outbox-dead');
    for (let i = 0; i < 3; i++) await r.outbox.enqueue(i + 1, `{"pageRef":${i + 1}}`, T0);
    const dead = await r.outbox.claim({ owner: 'killed', limit: 10, leaseMs: 5000, now: T0 });
    t.equal(dead?.entries.length, 3);
    t.equal(await r.outbox.claim({ owner: 'restarted', limit: 10, leaseMs: 5000, now: T0 + 4999 }), null, 'not before the lease lapses');
    const again = await r.outbox.claim({ owner: 'restarted', limit: 10, leaseMs: 5000, now: T0 + 5000 });
    t.same(
      again?.entries.map((e) => [e.pageRef, e.attempts]),
      [
        [1, 2],
        [2, 2],
        [3, 2],
      ],
      'the whole batch, claimed a second time',
    );
    t.equal(await r.outbox.extend(dead!.lease, 5000, T0 + 5001), false, 'the old holder lost it');
    t.equal(await r.outbox.ack(dead!.lease), 0, 'a stale ack removes nothing');
    t.equal(await r.outbox.ack(again!.lease), 3);
    t.equal(await r.outbox.claim({ owner: 'restarted', limit: 10, leaseMs: 5000, now: T0 + 20_000 }), null);
  });

  t.test('issue 10: outbox: concurrent claimers never share an entry', async (t) => {
    const r = await withRepos(t, open, 'outbox-race');
    for (let i = 0; i < 40; i++) await r.outbox.enqueue(i, `{"pageRef":${i}}`, T0);
    const batches = await Promise.all(
      Array.from({ length: 8 }, (_, k) => r.outbox.claim({ owner: `w${k}`, limit: 7, leaseMs: 60_000, now: T0 + 1 })),
    );
    const got = batches.flatMap((b) => b?.entries.map((e) => e.pageRef) ?? []);
    t.equal(got.length, 40, 'every entry handed out');
    t.equal(new Set(got).size, 40, 'none twice');
  });

  t.test("shards: an indexer claims only its shards' outbox entries (URL hash modulo the count), in order", async (t) => {
    const r = await withRepos(t, open, 'outbox-shards');
    const urls = Array.from({ length: 24 }, (_, i) => `https://h${i % 5}.test/page-${i}`);
    for (const [i, u] of urls.entries()) await r.outbox.enqueue(i + 1, `{"n":${i}}`, T0 + i, urlHash32(u));
    await r.outbox.enqueue(100, '{"legacy":true}', T0 + 50);
    const want = (mine: number[]) => urls.flatMap((u, i) => (mine.includes(urlHash32(u) % 4) ? [i + 1] : []));
    t.ok(want([0, 1]).length > 0 && want([2, 3]).length > 0, 'both halves have pages');
    const a = await r.outbox.claim({ owner: 'ix-a', limit: 100, leaseMs: 60_000, now: T0 + 100, shards: { count: 4, mine: [0, 1] } });
    t.same(
      a?.entries.map((e) => e.pageRef),
      want([0, 1]),
      'shards 0-1: exactly their pages, oldest first',
    );
    const b = await r.outbox.claim({ owner: 'ix-b', limit: 100, leaseMs: 60_000, now: T0 + 100, shards: { count: 4, mine: [2, 3] } });
    t.same(
      b?.entries.map((e) => e.pageRef),
      want([2, 3]),
      'shards 2-3: the others; an entry without a hash is not theirs',
    );
    const all = await r.outbox.claim({
      owner: 'ix-all',
      limit: 100,
      leaseMs: 60_000,
      now: T0 + 100,
      shards: { count: 4, mine: [0, 1, 2, 3] },
    });
    t.same(
      all?.entries.map((e) => e.pageRef),
      [100],
      'an entry from before the hash goes to an indexer owning every shard',
    );
  });

  t.test('shards: one writer per shard, all or none, fenced by a growing token; a lapsed lease is lost', async (t) => {
    const r = await withRepos(t, open, 'shard-writers');
    const a = await r.shardWriters.acquire({ owner: 'ix-a', shards: [0, 1], leaseMs: 1000, now: T0 });
    t.ok(a.ok, 'a free pair of shards is taken');
    if (!a.ok) return;
    const refused = await r.shardWriters.acquire({ owner: 'ix-b', shards: [1, 2], leaseMs: 1000, now: T0 + 10 });
    t.same(
      refused,
      { ok: false, heldBy: [{ shard: 1, owner: 'ix-a', token: a.token, leaseUntil: T0 + 1000 }] },
      'refused, naming the holder',
    );
    t.ok(
      (await r.shardWriters.acquire({ owner: 'ix-b', shards: [2], leaseMs: 1000, now: T0 + 20 })).ok,
      'all or none: shard 2 stayed free',
    );
    t.equal(await r.shardWriters.renew({ token: a.token, shards: [0, 1], leaseMs: 1000, now: T0 + 500 }), true);
    t.equal(await r.shardWriters.check({ token: a.token, shards: [0, 1], now: T0 + 1499 }), true, 'renewed to T0+1500');
    t.equal(await r.shardWriters.check({ token: a.token, shards: [0, 1], now: T0 + 1500 }), false, 'lapsed');
    t.equal(
      await r.shardWriters.renew({ token: a.token, shards: [0, 1], leaseMs: 1000, now: T0 + 1600 }),
      false,
      'a lapsed lease is not renewed',
    );
    const c = await r.shardWriters.acquire({ owner: 'ix-c', shards: [0, 1], leaseMs: 1000, now: T0 + 1700 });
    t.ok(c.ok && c.token > a.token, 'taken after the lapse, under a greater token');
    if (!c.ok) return;
    t.equal(await r.shardWriters.check({ token: a.token, shards: [0, 1], now: T0 + 1000 }), false, 'the old token is fenced off');
    t.equal(
      await r.shardWriters.renew({ token: c.token, shards: [0, 1, 2], leaseMs: 1000, now: T0 + 1800 }),
      false,
      'not every shard held',
    );
    t.equal(await r.shardWriters.check({ token: c.token, shards: [0, 1], now: T0 + 2600 }), true, 'a refused renewal changed nothing');
    await r.shardWriters.release({ token: c.token, shards: [0, 1] });
    t.ok((await r.shardWriters.acquire({ owner: 'ix-d', shards: [0], leaseMs: 1000, now: T0 + 1900 })).ok, 'released: free at once');
    t.same(
      (await r.shardWriters.list()).map((w) => [w.shard, w.owner]),
      [
        [0, 'ix-d'],
        [1, 'ix-c'],
        [2, 'ix-b'],
      ],
    );
  });

  t.test('documents: page_ref from the database, change history', async (t) => {
    const r = await withRepos(t, open, 'documents');
    const a = await r.documents.allocate('http://a.test/', 'a.test');
    const b = await r.documents.allocate('http://a.test/b', 'a.test');
    t.ok(b > a, 'increasing');
    t.equal(await r.documents.allocate('http://a.test/', 'a.test'), a, 'stable per URL');
    const same = await Promise.all(Array.from({ length: 10 }, () => r.documents.allocate('http://c.test/', 'c.test')));
    t.equal(new Set(same).size, 1, 'concurrent allocation of one URL agrees');
    t.match(await r.documents.get(a), { pageRef: a, url: 'http://a.test/', host: 'a.test', status: 'known', firstSeen: null });
    t.equal(await r.documents.recordIndexed(a, { contentHash: 'h1', title: 'A', at: '2026-11-21T10:00:00.000Z' }), 'new');
    t.equal(await r.documents.recordIndexed(a, { contentHash: 'h1', title: 'A', at: '2026-11-21T11:00:00.000Z' }), 'unchanged');
    t.equal(await r.documents.recordIndexed(a, { contentHash: 'h2', title: 'A2', at: '2026-11-21T12:00:00.000Z' }), 'changed');
    t.match(await r.documents.byUrl('http://a.test/'), {
      title: 'A2',
      contentHash: 'h2',
      firstSeen: '2026-11-21T10:00:00.000Z',
      lastChanged: '2026-11-21T12:00:00.000Z',
      lastFetched: '2026-11-21T12:00:00.000Z',
      status: 'indexed',
    });
    await r.documents.recordExcluded(a, 'removed', 'removal request', '2026-11-21T13:00:00.000Z');
    t.match(await r.documents.get(a), { status: 'removed', reason: 'removal request' });
    t.equal(
      await r.documents.recordIndexed(a, { contentHash: 'h2', title: 'A2', at: '2026-11-21T14:00:00.000Z' }),
      'new',
      'back after removal',
    );
    t.equal(await r.documents.get(999_999), null);
    await t.rejects(r.documents.recordIndexed(999_999, { contentHash: 'x', title: '', at: 'x' }), /unknown page_ref/);
  });

  t.test('issue 10: documents: the fresh feed and counts by status', async (t) => {
    const r = await withRepos(t, open, 'fresh');
    const a = await r.documents.allocate('http://f.test/a', 'f.test');
    const b = await r.documents.allocate('http://f.test/b', 'f.test');
    const c = await r.documents.allocate('http://f.test/c', 'f.test');
    await r.documents.allocate('http://f.test/d', 'f.test');
    await r.documents.recordIndexed(a, { contentHash: 'a1', title: 'A', at: '2026-11-21T10:00:00.000Z' });
    await r.documents.recordIndexed(b, { contentHash: 'b1', title: 'B', at: '2026-11-20T10:00:00.000Z' });
    await r.documents.recordIndexed(b, { contentHash: 'b2', title: 'B', at: '2026-11-21T11:00:00.000Z' });
    await r.documents.recordIndexed(c, { contentHash: 'c1', title: 'C', at: '2026-11-21T12:00:00.000Z' });
    await r.documents.recordExcluded(c, 'excluded', 'noindex', '2026-11-21T13:00:00.000Z');
    const fresh = await r.documents.fresh('2026-11-21T00:00:00.000Z', 10);
    t.same(
      fresh.map((d) => [d.url, d.change]),
      [
        ['http://f.test/b', 'changed'],
        ['http://f.test/a', 'new'],
      ],
      'indexed pages new or changed since, newest change first; excluded ones are not listed',
    );
    t.same(
      (await r.documents.fresh('2026-11-21T00:00:00.000Z', 1)).map((d) => d.url),
      ['http://f.test/b'],
      'limit',
    );
    t.same(await r.documents.counts(), { indexed: 2, excluded: 1, known: 1 });
  });

  t.test('issue 10: host evidence: URL scope from documents and frontier, facts null for an unseen host', async (t) => {
    const r = await withRepos(t, open, 'hosts');
    t.same(await r.hosts.evidence('nobody.test'), {
      facts: null,
      scope: { known: 0, indexed: 0, excluded: { total: 0, byReason: {} }, queued: 0, retrying: 0, dead: 0 },
    });
    const a = await r.documents.allocate('http://s.test/a', 's.test');
    const b = await r.documents.allocate('http://s.test/b', 's.test');
    await r.documents.allocate('http://s.test/crashed', 's.test');
    await r.documents.recordIndexed(a, { contentHash: 'a', title: 'A', at: '2026-11-21T10:00:00.000Z' });
    await r.documents.recordExcluded(b, 'excluded', 'robots', '2026-11-21T10:00:00.000Z');
    await r.frontier.enqueue({ url: 'http://s.test/a', host: 's.test', reason: 'seed' }, T0);
    await r.frontier.enqueue({ url: 'http://s.test/q', host: 's.test', reason: 'seed' }, T0);
    await r.frontier.enqueue({ url: 'http://s.test/sitemap.xml', host: 's.test', reason: 'seed', kind: 'sitemap' }, T0);
    await r.frontier.enqueue({ url: 'http://other.test/', host: 'other.test', reason: 'seed' }, T0);
    const ev = await r.hosts.evidence('S.test');
    t.equal(ev.facts, null, 'no crawler facts recorded');
    t.same(ev.scope, {
      known: 4,
      indexed: 1,
      excluded: { total: 2, byReason: { robots: 1, unprocessed: 1 } },
      queued: 1,
      retrying: 0,
      dead: 0,
    });
  });

  t.test('issue 10: request lifecycle: submit, dedupe, conflict, daily quota, transitions', async (t) => {
    const r = await withRepos(t, open, 'lifecycle');
    const now = new Date('2026-11-21T10:00:00.000Z');
    const opts = { perDay: 3, now };
    const first = await r.requests.submit(
      'k1',
      { type: 'discovery', url: 'http://a.test/', host: 'a.test', note: '  hi  ', idempotencyKey: 'i1' },
      opts,
    );
    t.match(first, {
      deduplicated: false,
      request: { type: 'discovery', url: 'http://a.test/', note: 'hi', status: 'received', receivedAt: now.toISOString() },
    });
    t.match(first.request.id, /^req_[\w-]+$/);
    t.same(first.request.history, [{ status: 'received', at: now.toISOString() }]);
    t.match(await r.requests.submit('k1', { type: 'discovery', url: 'http://a.test/', host: 'a.test', idempotencyKey: 'i1' }, opts), {
      deduplicated: true,
      request: { id: first.request.id },
    });
    t.match(
      await r.requests.submit('k1', { type: 'discovery', url: 'http://a.test/', host: 'a.test' }, opts),
      { deduplicated: true, request: { id: first.request.id } },
      'same type + URL still open',
    );
    const conflict = (await r.requests
      .submit('k1', { type: 'recrawl', url: 'http://a.test/', host: 'a.test', idempotencyKey: 'i1' }, opts)
      .catch((e: SvcError) => e)) as SvcError;
    t.equal(conflict.code, 'conflict');
    const bad = (await r.requests
      .submit('k1', { type: 'nope', url: 'http://a.test/', host: 'a.test' }, opts)
      .catch((e: SvcError) => e)) as SvcError;
    t.equal(bad.code, 'bad_request');
    t.equal(await r.requests.getForKey(first.request.id, 'k2'), null, "another key's request is invisible");
    t.match(await r.requests.getForKey(first.request.id, 'k1'), { id: first.request.id });

    // Quota: 3 per day; 1 used; 10 different URLs at once → exactly 2 more.
    const burst = await Promise.allSettled(
      Array.from({ length: 10 }, (_, i) => r.requests.submit('k1', { type: 'discovery', url: `http://a.test/${i}`, host: 'a.test' }, opts)),
    );
    t.equal(burst.filter((b) => b.status === 'fulfilled').length, 2, 'the daily quota is exact under concurrency');
    const refused = burst.find((b) => b.status === 'rejected') as PromiseRejectedResult;
    t.match(refused.reason, { code: 'submission_quota_exceeded', retryAfter: 14 * 3600 });

    const at = (m: number) => new Date(now.getTime() + m * 60_000);
    t.match(await r.requests.transition(first.request.id, 'queued', {}, at(1)), { status: 'queued', updatedAt: at(1).toISOString() });
    t.match(await r.requests.transition(first.request.id, 'in_progress', {}, at(2)), { status: 'in_progress', attempts: 1 });
    await t.rejects(r.requests.transition(first.request.id, 'completed', {}, at(3)), /needs an outcome/);
    const done = await r.requests.transition(first.request.id, 'completed', { outcome: 'indexed' }, at(3));
    t.match(done, { status: 'completed', outcome: 'indexed', reason: null });
    t.same(
      done.history.map((h) => h.status),
      ['received', 'queued', 'in_progress', 'completed'],
    );
    await t.rejects(r.requests.transition(first.request.id, 'queued'), /not allowed/, 'a completed request never changes again');
    t.match(await r.requests.find(first.request.id), { status: 'completed' });
    t.same((await r.requests.listByStatus('received')).length, 2);
    t.same(await r.requests.counts(), { received: 2, queued: 0, in_progress: 0, completed: 1, failed: 0 });
  });

  t.test(
    'issue 10: frontier admission: scope and request id stored, priority raised, refresh, rescope, revive, per-host cap',
    async (t) => {
      const r = await withRepos(t, open, 'admit');
      const a = await r.frontier.admit(
        { url: 'http://a.test/', host: 'a.test', reason: 'seed', priority: 30, scope: ['B.test', 'a.test', 'a.test'], requestId: 'req_1' },
        T0,
      );
      t.same(a, { id: a!.id, added: true, state: 'queued' });
      t.match(await r.frontier.get('http://a.test/'), {
        url: 'http://a.test/',
        state: 'queued',
        priority: 30,
        reason: 'seed',
        requestId: 'req_1',
        scope: ['a.test', 'b.test'],
        nextAt: T0,
      });
      t.equal(await r.frontier.get('http://a.test/none'), null);
      // A link found again never lowers the priority, never changes the reason.
      t.same(await r.frontier.admit({ url: 'http://a.test/', host: 'a.test', reason: 'link', priority: 10 }, T0 + 1), {
        id: a!.id,
        added: false,
        state: 'queued',
      });
      t.match(await r.frontier.get('http://a.test/'), { priority: 30, reason: 'seed' });
      const l = await r.frontier.admit(
        { url: 'http://a.test/l', host: 'a.test', reason: 'link', priority: 10, scope: ['a.test', 'b.test'] },
        T0,
      );
      await r.frontier.admit({ url: 'http://a.test/l', host: 'a.test', reason: 'link', priority: 20, requestId: 'req_2' }, T0);
      t.match(
        await r.frontier.get('http://a.test/l'),
        { priority: 20, requestId: 'req_2', reason: 'link' },
        'a higher priority raises it; the request id is kept',
      );
      // Complete the seed; a refresh makes it due now with the higher priority.
      await r.politeness.setGap('a.test', 0);
      const c = await r.frontier.claim({ owner: 'w', leaseMs: 1000, now: T0 + 10 });
      t.equal(c?.url, 'http://a.test/');
      await r.frontier.complete(c!, {
        recrawlAt: T0 + 86_400_000,
        status: 200,
        outcome: 'indexed',
        etag: '"e1"',
        lastModified: 'Sat, 21 Nov 2026 10:00:00 GMT',
        recrawlMs: 86_400_000,
        changed: true,
        priority: 0,
        now: T0 + 20,
      });
      t.match(await r.frontier.get('http://a.test/'), {
        state: 'done',
        priority: 0,
        etag: '"e1"',
        lastStatus: 200,
        lastOutcome: 'indexed',
        recrawlMs: 86_400_000,
        completions: 1,
        nextAt: T0 + 86_400_000,
      });
      t.same(
        await r.frontier.admit(
          {
            url: 'http://a.test/',
            host: 'a.test',
            reason: 'request:recrawl',
            priority: 30,
            refresh: true,
            requestId: 'req_3',
            at: T0 + 100,
          },
          T0 + 100,
        ),
        { id: a!.id, added: false, state: 'queued' },
      );
      t.match(await r.frontier.get('http://a.test/'), {
        state: 'queued',
        nextAt: T0 + 100,
        priority: 30,
        reason: 'request:recrawl',
        requestId: 'req_3',
        attempts: 0,
      });
      const again = await r.frontier.claim({ owner: 'w', leaseMs: 1000, now: T0 + 200 });
      t.match(
        again,
        {
          url: 'http://a.test/',
          etag: '"e1"',
          lastModified: 'Sat, 21 Nov 2026 10:00:00 GMT',
          fetchedBefore: true,
          recrawlMs: 86_400_000,
          scope: ['a.test', 'b.test'],
        },
        'validators for a conditional GET',
      );
      t.same(
        await r.frontier.admit({ url: 'http://a.test/', host: 'a.test', reason: 'seed', priority: 30, refresh: true }, T0 + 201),
        { id: a!.id, added: false, state: 'leased' },
        'a leased row is left to its holder',
      );
      // Rescope: the seed and everything admitted under its old scope take the new one.
      t.match(
        await r.frontier.admit(
          { url: 'http://a.test/', host: 'a.test', reason: 'seed', priority: 30, scope: null, rescope: true },
          T0 + 300,
        ),
        { state: 'leased' },
      );
      t.equal((await r.frontier.get('http://a.test/'))?.scope, null);
      t.equal((await r.frontier.get('http://a.test/l'))?.scope, null, 'rows under the old scope follow');
      t.ok(l);
      // Dead rows: a link never revives them, a seed (reviveDead) does.
      const d = await r.frontier.claim({ owner: 'w', leaseMs: 1000, now: T0 + 400 });
      t.equal(d?.url, 'http://a.test/l');
      t.equal(
        await r.frontier.fail(d!, {
          error: 'http_500',
          retryAt: null,
          deadReason: 'http_500 (after 5 attempts)',
          status: 500,
          now: T0 + 410,
        }),
        'dead',
      );
      t.match(await r.frontier.get('http://a.test/l'), {
        state: 'dead',
        deadReason: 'http_500 (after 5 attempts)',
        lastError: 'http_500',
        lastStatus: 500,
        lastOutcome: 'dead',
        attempts: 1,
      });
      t.match(await r.frontier.admit({ url: 'http://a.test/l', host: 'a.test', reason: 'link', priority: 10 }, T0 + 500), {
        state: 'dead',
      });
      t.match(
        await r.frontier.admit({ url: 'http://a.test/l', host: 'a.test', reason: 'seed', priority: 30, reviveDead: true }, T0 + 500),
        { state: 'queued' },
      );
      t.match(await r.frontier.get('http://a.test/l'), { state: 'queued', attempts: 0, deadReason: null, nextAt: T0 + 500 });
      // The per-host cap refuses new rows only.
      t.equal(
        await r.frontier.admit({ url: 'http://a.test/x', host: 'a.test', reason: 'link', priority: 10, maxPerHost: 2 }, T0),
        null,
        'a.test has 2 rows',
      );
      t.match(
        await r.frontier.admit({ url: 'http://a.test/l', host: 'a.test', reason: 'link', priority: 10, maxPerHost: 2 }, T0),
        { added: false },
        'a known URL is not refused',
      );
      t.match(await r.frontier.admit({ url: 'http://z.test/x', host: 'z.test', reason: 'link', priority: 10, maxPerHost: 2 }, T0), {
        added: true,
      });
      // Workers finding one new link at once: one row, one "added".
      const race = await Promise.all(
        Array.from({ length: 12 }, () => r.frontier.admit({ url: 'http://z.test/race', host: 'z.test', reason: 'link', priority: 10 }, T0)),
      );
      t.equal(race.filter((x) => x?.added).length, 1, 'added once');
      t.equal(new Set(race.map((x) => x?.id)).size, 1, 'one row');
    },
  );

  t.test('issue 10: the per-host admission cap is exact for the fleet: two workers admitting one host at once', async (t) => {
    const a = await withRepos(t, open, 'hostcap');
    const b = await withRepos(t, reopen, 'hostcap');
    const link = (path: string) => ({ url: `http://cap.test/${path}`, host: 'cap.test', reason: 'link', priority: 10, maxPerHost: 25 });
    t.match(await a.frontier.admit({ url: 'http://cap.test/', host: 'cap.test', reason: 'seed', priority: 30 }, T0), { added: true });
    // Each of 60 new links is found by both workers at once; the cap leaves room for 24 beside the seed.
    const out = await Promise.all(Array.from({ length: 120 }, (_, i) => (i % 2 ? a : b).frontier.admit(link(`p${i >> 1}`), T0)));
    t.equal(out.filter((x) => x?.added === true).length, 24, 'exactly the room left under the cap, whichever worker admitted');
    t.equal(out.filter((x) => x !== null && !x.added).length, 24, "the other worker's admit of the same link finds it known");
    t.equal(out.filter((x) => x === null).length, 72, 'both workers refuse the 36 links beyond the cap');
    const rows = async (r: Repositories) => Object.values(await r.frontier.counts({ host: 'cap.test' })).reduce((x, y) => x + y, 0);
    t.equal(await rows(a), 25);
    t.equal(await rows(b), 25, 'both workers see the same rows');
    t.equal(await b.frontier.admit(link('late'), T0 + 1), null, 'a later link is refused by either worker');
    t.equal(await a.frontier.admit(link('late'), T0 + 1), null);
    // Seeds, submissions and redirect targets are never refused, and they count.
    t.match(await b.frontier.admit({ url: 'http://cap.test/seed2', host: 'cap.test', reason: 'seed', priority: 30 }, T0 + 2), {
      added: true,
    });
    await a.frontier.markFetched('http://cap.test/moved', 'cap.test', {
      reason: 'redirect',
      outcome: 'indexed',
      status: 200,
      recrawlMs: 86_400_000,
      priority: 0,
      now: T0 + 3,
    });
    t.match(await a.frontier.enqueue({ url: 'http://cap.test/plain', host: 'cap.test', reason: 'seed', priority: 30 }, T0 + 4), {
      added: true,
    });
    t.equal(await rows(b), 28);
    t.equal((await a.frontier.admit({ ...link('late'), maxPerHost: 29 }, T0 + 5)) !== null, true, 'a higher cap leaves room for one more');
    t.equal(await b.frontier.admit({ ...link('later'), maxPerHost: 29 }, T0 + 6), null, 'and only one');
    t.equal(await rows(a), 29);
  });

  t.test('issue 11: expedite (fast lane) makes a known done or queued URL due now; back-off, dead letters and leases stand', async (t) => {
    const r = await withRepos(t, open, 'expedite');
    await r.politeness.setGap('e.test', 0);
    for (const p of ['done', 'retry', 'dead', 'leased'])
      await r.frontier.enqueue({ url: `http://e.test/${p}`, host: 'e.test', reason: 'link', priority: 10 }, T0);
    await r.frontier.enqueue({ url: 'http://e.test/later', host: 'e.test', reason: 'link', priority: 10, at: T0 + 50_000 }, T0);
    const claimed = new Map<string, Awaited<ReturnType<typeof r.frontier.claim>>>();
    for (let i = 0; i < 4; i++) {
      const c = await r.frontier.claim({ owner: 'w', leaseMs: 60_000, now: T0 + i });
      claimed.set(c!.url, c);
    }
    await r.frontier.complete(claimed.get('http://e.test/done')!, {
      recrawlAt: T0 + 86_400_000,
      status: 200,
      outcome: 'indexed',
      priority: 0,
      now: T0 + 10,
    });
    await r.frontier.fail(claimed.get('http://e.test/retry')!, { error: 'http_429', retryAt: T0 + 7000, status: 429, now: T0 + 10 });
    await r.frontier.fail(claimed.get('http://e.test/dead')!, { error: 'blocked_address', retryAt: null, now: T0 + 10 });
    const fast = (p: string) =>
      r.frontier.enqueue(
        {
          url: `http://e.test/${p}`,
          host: 'e.test',
          reason: 'webmaster_fast_lane',
          priority: 40,
          kind: 'page',
          at: T0 + 100,
          expedite: true,
        },
        T0 + 100,
      );
    for (const p of ['done', 'retry', 'dead', 'leased', 'later']) t.match(await fast(p), { added: false }, p);
    t.match(
      await r.frontier.get('http://e.test/done'),
      { state: 'queued', nextAt: T0 + 100, priority: 40, reason: 'webmaster_fast_lane' },
      'done: due now, first in line',
    );
    t.match(await r.frontier.get('http://e.test/later'), { state: 'queued', nextAt: T0 + 100, priority: 40 }, 'queued for later: due now');
    t.match(
      await r.frontier.get('http://e.test/retry'),
      { state: 'retrying', nextAt: T0 + 7000, priority: 40 },
      'a back-off (Retry-After) stands',
    );
    t.match(
      await r.frontier.get('http://e.test/dead'),
      { state: 'dead', deadReason: 'blocked_address', priority: 40 },
      'a dead letter stands',
    );
    t.match(await r.frontier.get('http://e.test/leased'), { state: 'leased', nextAt: T0 + 3 + 60_000 }, "a leased row is its holder's");
    t.equal((await r.frontier.claim({ owner: 'w', leaseMs: 1000, now: T0 + 100 }))?.priority, 40);
  });

  t.test('issue 10: frontier: single-URL claims, redirect targets, dead letters and pending rows', async (t) => {
    const r = await withRepos(t, open, 'claimurl');
    await r.frontier.admit({ url: 'http://a.test/later', host: 'a.test', reason: 'seed', at: T0 + 60_000 }, T0);
    const c = await r.frontier.claimUrl('http://a.test/later', { owner: 'now', leaseMs: 1000, now: T0 });
    t.match(c, { url: 'http://a.test/later', leaseUntil: T0 + 1000 }, 'due or not');
    t.equal(
      await r.frontier.claimUrl('http://a.test/later', { owner: 'other', leaseMs: 1000, now: T0 + 999 }),
      null,
      'busy while the lease lives',
    );
    t.equal(await r.frontier.claimUrl('http://a.test/unknown', { owner: 'other', leaseMs: 1000, now: T0 }), null);
    await r.frontier.markFetched('http://a.test/later', 'a.test', {
      reason: 'redirect',
      outcome: 'indexed',
      status: 200,
      recrawlMs: 3_600_000,
      priority: 0,
      now: T0 + 5,
    });
    t.match(await r.frontier.get('http://a.test/later'), { state: 'leased' }, 'a leased row is left to its holder');
    await r.frontier.markFetched('http://b.test/target', 'b.test', {
      reason: 'redirect',
      outcome: 'indexed',
      status: 200,
      etag: '"t"',
      scope: ['b.test'],
      recrawlMs: 3_600_000,
      priority: 0,
      now: T0 + 5,
    });
    t.match(await r.frontier.get('http://b.test/target'), {
      state: 'done',
      reason: 'redirect',
      etag: '"t"',
      completions: 1,
      recrawlMs: 3_600_000,
      nextAt: T0 + 5 + 3_600_000,
      scope: ['b.test'],
    });
    await r.frontier.markFetched('http://b.test/target', 'b.test', {
      reason: 'redirect',
      outcome: 'unchanged',
      status: 304,
      recrawlMs: 1,
      priority: 0,
      now: T0 + 10,
    });
    t.match(
      await r.frontier.get('http://b.test/target'),
      { completions: 2, lastOutcome: 'unchanged', nextAt: T0 + 10 + 3_600_000 },
      'its own interval wins',
    );
    t.equal((await r.politeness.get('b.test'))?.gapMs, 1000, 'its host is known to politeness');
    await r.frontier.fail(c!, { error: 'blocked', retryAt: null, now: T0 + 20 });
    await r.frontier.admit({ url: 'http://b.test/q2', host: 'b.test', reason: 'seed', at: T0 + 2 }, T0);
    await r.frontier.admit({ url: 'http://b.test/q1', host: 'b.test', reason: 'seed', at: T0 + 1 }, T0);
    t.same(
      (await r.frontier.deadLetters()).map((x) => [x.url, x.deadReason]),
      [['http://a.test/later', 'blocked']],
    );
    t.same(await r.frontier.deadLetters({ host: 'b.test' }), []);
    t.same(
      (await r.frontier.pendingItems(5)).map((x) => x.url),
      ['http://b.test/q1', 'http://b.test/q2'],
      'soonest due first',
    );
    t.same(await r.frontier.counts({ host: 'B.test' }), { queued: 2, leased: 0, retrying: 0, done: 1, dead: 0 }, 'counts of one host');
  });

  t.test('issue 10: host facts written by the crawler are what svc_site reads', async (t) => {
    const r = await withRepos(t, open, 'hostwrites');
    const at = '2026-11-21T10:00:00.000Z';
    await r.hosts.recordRobots('W.test', {
      status: 'ok',
      httpStatus: 200,
      fetchedAt: at,
      rules: ['Disallow: /private'],
      sitemaps: ['http://w.test/sitemap.xml'],
      crawlDelaySec: 2,
    });
    await r.hosts.recordLlms('w.test', { present: true, fetchedAt: at, title: 'W', summary: 'A site', linkCount: 3 });
    await Promise.all([r.hosts.recordCrawl('w.test', at), r.hosts.recordCrawl('w.test', at), r.hosts.recordCrawl('w.test', at)]);
    await r.hosts.recordChangeInterval('w.test', 1000, at);
    await r.hosts.recordChangeInterval('w.test', 3000, at);
    await r.hosts.recordChangeInterval('w.test', 0, at);
    await r.hosts.recordPageLinks(
      7,
      'w.test',
      new Map([
        ['x.test', 2],
        ['y.test', 1],
      ]),
    );
    await r.hosts.recordPageLinks(8, 'x.test', new Map([['w.test', 4]]));
    await r.hosts.recordPageLinks(7, 'w.test', new Map([['x.test', 5]]));
    const f = (await r.hosts.evidence('w.test')).facts;
    t.match(f, {
      host: 'w.test',
      robots: {
        status: 'ok',
        httpStatus: 200,
        fetchedAt: at,
        rules: ['Disallow: /private'],
        sitemaps: ['http://w.test/sitemap.xml'],
        crawlDelaySec: 2,
      },
      llms: { present: true, title: 'W', summary: 'A site', linkCount: 3 },
      lastCrawlAt: at,
      pagesFetched: 3,
      medianChangeIntervalMs: 2000,
      changeIntervalsObserved: 2,
      outboundLinks: 5,
      inboundHosts: 1,
    });
    await r.hosts.withdrawPageLinks(7);
    t.match((await r.hosts.evidence('w.test')).facts, { outboundLinks: 0, inboundHosts: 1 });
    // Extraction verdicts: the latest per page, counted per verdict, the thin pages newest first.
    const ex = (url: string, keptChars: number, verdict: string, at: string) => ({ url, pageChars: 900, keptChars, verdict, at });
    await r.hosts.recordExtraction('w.test', ex('http://w.test/a', 0, 'mostly_boilerplate', '2026-11-21T10:00:01.000Z'));
    await r.hosts.recordExtraction('w.test', ex('http://w.test/b', 40, 'short_text', '2026-11-21T10:00:02.000Z'));
    await r.hosts.recordExtraction('w.test', ex('http://w.test/c', 800, 'ok', '2026-11-21T10:00:03.000Z'));
    await r.hosts.recordExtraction('w.test', ex('http://w.test/a', 700, 'ok', '2026-11-21T10:00:04.000Z'));
    t.same((await r.hosts.evidence('w.test')).facts?.extraction, {
      byVerdict: { ok: 2, short_text: 1 },
      thin: [ex('http://w.test/b', 40, 'short_text', '2026-11-21T10:00:02.000Z')],
    });
  });

  t.test('requests: ids from the database, idempotency unique in the database', async (t) => {
    const r = await withRepos(t, open, 'requests');
    const sub = {
      keyDigest: 'k1',
      type: 'discovery' as const,
      url: 'http://a.test/',
      host: 'a.test',
      idempotencyDigest: 'i1',
      at: '2026-11-21T10:00:00.000Z',
    };
    const first = await r.requests.create(sub);
    if (!('request' in first)) throw new Error('expected a request');
    t.match(first, { deduplicated: false, request: { keyDigest: 'k1', type: 'discovery', status: 'received', receivedAt: sub.at } });
    t.match(first.request.id, /^req_[0-9a-f]{32}$/);
    t.match(await r.requests.create(sub), { deduplicated: true, request: { id: first.request.id } });
    t.match(await r.requests.create({ ...sub, url: 'http://a.test/other' }), { conflict: { id: first.request.id } });
    t.match(await r.requests.create({ ...sub, keyDigest: 'k2' }), { deduplicated: false }, 'idempotency keys are per API key');
    const plain = await Promise.all([
      r.requests.create({ ...sub, idempotencyDigest: null }),
      r.requests.create({ ...sub, idempotencyDigest: null }),
    ]);
    const ids = plain.map((p) => ('request' in p ? p.request.id : ''));
    t.equal(new Set(ids).size, 2, 'without an idempotency key every submission is its own request');
    const race = await Promise.all(Array.from({ length: 20 }, () => r.requests.create({ ...sub, idempotencyDigest: 'i-race' })));
    const raceIds = new Set(race.map((p) => ('request' in p ? p.request.id : 'conflict')));
    t.equal(raceIds.size, 1, 'one request for one idempotency key, however many arrive together');
    t.equal(race.filter((p) => 'request' in p && !p.deduplicated).length, 1);
    t.equal(await r.requests.setStatus(first.request.id, 'queued', '2026-11-21T10:00:01.000Z'), true);
    t.match(await r.requests.get(first.request.id), { status: 'queued', updatedAt: '2026-11-21T10:00:01.000Z' });
    t.equal(await r.requests.get('req_unknown'), null);
    t.equal(await r.requests.setStatus('req_unknown', 'queued'), false);
  });

  t.test('searchers: a heartbeat registers or renews an entry every handle reads; an entry older than the TTL is dead', async (t) => {
    const a = await withRepos(t, open, 'searchers');
    const b = await reopen('searchers');
    t.teardown(() => b.close());
    t.same(await b.searchers.live(60_000), [], 'none registered');
    const entry = { id: 's1', url: 'http://127.0.0.1:9001', shards: [0, 1], shardCount: 4, index: '/idx' };
    await a.searchers.heartbeat(entry);
    await a.searchers.heartbeat({ ...entry, id: 's2', url: 'http://127.0.0.1:9002', shards: [2, 3] });
    const live = await b.searchers.live(60_000);
    t.same(
      live.map(({ ageMs: _age, ...e }) => e),
      [entry, { ...entry, id: 's2', url: 'http://127.0.0.1:9002', shards: [2, 3] }],
      'both, by id, read by another handle',
    );
    t.ok(
      live.every((e) => e.ageMs >= 0 && e.ageMs < 60_000),
      'ages by the database clock',
    );
    await new Promise((r) => setTimeout(r, 30));
    t.same(await b.searchers.live(5), [], 'older than a 5 ms TTL: dead');
    const before = (await b.searchers.live(60_000)).find((e) => e.id === 's1')!.ageMs;
    await a.searchers.heartbeat({ ...entry, shards: [0] });
    const renewed = (await b.searchers.live(60_000)).find((e) => e.id === 's1')!;
    t.same(renewed.shards, [0], 'renewed with its new shards');
    t.ok(renewed.ageMs < before, 'a renewed heartbeat is younger');
    await a.searchers.remove('s1');
    t.same(
      (await b.searchers.live(60_000)).map((e) => e.id),
      ['s2'],
      'removed on stop',
    );
  });

  t.test('robots.txt files: one fetch lease per origin across handles, lapsing; the stored file read back byte for byte', async (t) => {
    const a = await withRepos(t, open, 'robotsfiles');
    const b = await reopen('robotsfiles');
    t.teardown(() => b.close());
    const o = 'http://r.test:8080';
    t.equal(await a.robots.get(o), null, 'nothing stored yet');
    const [x, y] = await Promise.all([a.robots.lease(o, 'w1', 1000, T0), b.robots.lease(o, 'w2', 1000, T0)]);
    t.equal(Number(x) + Number(y), 1, 'exactly one of two workers takes the lease');
    const holder = x ? 'w1' : 'w2';
    const other = x ? 'w2' : 'w1';
    t.equal(await b.robots.get(o), null, 'a lease alone is no file');
    t.equal(await a.robots.lease(o, other, 1000, T0 + 999), false, 'held until it lapses');
    t.equal(await a.robots.lease(o, holder, 1000, T0 + 999), true, 'the holder may renew');
    t.equal(await b.robots.lease(o, other, 1000, T0 + 2000), true, 'a lapsed lease is taken over');
    await a.robots.release(o, holder);
    t.equal(await a.robots.lease(o, 'w4', 1000, T0 + 2001), false, "a former holder's release leaves the new lease alone");
    await a.robots.release(o, other);
    t.equal(await a.robots.lease(o, 'w4', 1000, T0 + 2002), true, 'released by its holder: free at once');
    await a.robots.release(o, 'w4');
    t.equal(await b.robots.lease(o, other, 1000, T0 + 2003), true);
    const body = new Uint8Array([0x55, 0x73, 0x65, 0x72, 0x2d, 0x61, 0x67, 0x65, 0x6e, 0x74, 0x3a, 0x20, 0x2a, 0x0a, 0xff, 0x00]);
    const row = {
      origin: o,
      status: 'ok',
      fetchedAt: T0 + 2100,
      expiresAt: T0 + 86_400_000,
      httpStatus: 200,
      url: `${o}/robots.txt`,
      error: null,
      truncated: true,
      body,
    };
    await b.robots.put(row);
    const got = await a.robots.get(o);
    t.same({ ...got, body: got?.body ? [...got.body] : null }, { ...row, body: [...body] }, 'the same row through the other handle');
    t.equal(await a.robots.lease(o, 'w3', 1000, T0 + 2200), true, 'storing the file ended the lease');
    await a.robots.put({ ...row, status: 'unreachable', httpStatus: null, error: 'timeout', truncated: false, body: null });
    t.match(await b.robots.get(o), { status: 'unreachable', body: null, error: 'timeout', truncated: false });
    await b.robots.forget(o);
    t.equal(await a.robots.get(o), null, 'forgotten for every handle');
  });
}
