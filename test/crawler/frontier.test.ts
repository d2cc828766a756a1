/**
 * CrawlFrontier's policy over the real SQLite repositories: normalisation and dedup, priorities, the per-host
 * admission cap, dead-letter revival, back-off with jitter, dead letters, adaptive recrawl, time-based leases and
 * lease-guarded completion. Items are claimed the way the crawler claims them (FrontierRepo.claim with the
 * frontier's owner and lease); the hosts' politeness gap is 0 here so it never hides a frontier rule.
 */
import t, { type Test } from 'tap';
import { join } from 'node:path';
import { CrawlFrontier } from '../../crawler/crawl-frontier.js';
import { PRIORITY, type FrontierOptions } from '../../crawler/frontier.js';
import { openStateDb } from '../../state/db.js';
import { sqliteRepositories } from '../../state/repos/sqlite.js';
import { LeaseLostError } from '../../state/repos/types.js';

function setup(t: Test, opts: Omit<FrontierOptions, 'now'> = {}, start = 1_000_000) {
  const db = openStateDb(join(t.testdir(), 'state.sqlite'));
  t.teardown(() => db.close());
  let clock = start;
  const repos = sqliteRepositories(db, { defaultGapMs: 0 });
  const f = new CrawlFrontier(repos.frontier, { random: () => 0.5, ...opts, now: () => clock });
  /** The best due item, as the crawler's dispatch loop claims it. */
  const claim = () => repos.frontier.claim({ owner: f.owner, leaseMs: f.leaseMs, now: clock });
  const nextClaimAt = () => repos.frontier.nextClaimAt();
  return {
    f,
    claim,
    nextClaimAt,
    advance: (ms: number) => (clock += ms),
    set: (ms: number) => (clock = ms),
    now: () => clock,
  };
}

t.test('enqueue normalises, deduplicates and is idempotent', async (t) => {
  const { f } = setup(t);
  const a = await f.enqueue('HTTP://Alpha.Test:80/a/./b#frag', { reason: 'seed' });
  t.same(a, { id: a!.id, created: true, state: 'queued' });
  const b = await f.enqueue('http://alpha.test/a/b', { reason: 'link' });
  t.same(b, { id: a!.id, created: false, state: 'queued' });
  t.equal(await f.enqueue('ftp://x.test/', { reason: 'link' }), null);
  t.equal(await f.enqueue('http://user:pw@x.test/', { reason: 'link' }), null);
  t.equal((await f.counts()).queued, 1);
  t.equal((await f.get('http://alpha.test/a/b'))!.host, 'alpha.test');
  t.equal((await f.get('HTTP://Alpha.Test:80/a/./b'))!.id, a!.id, 'get normalises too');
});

t.test('priorities: submitted > sitemap > discovered, raising on re-enqueue', async (t) => {
  const { f, claim } = setup(t);
  await f.enqueue('http://h.test/discovered', { reason: 'link' });
  await f.enqueue('http://h.test/sitemap', { reason: 'sitemap', priority: 'sitemap' });
  await f.enqueue('http://h.test/submitted', { reason: 'submitted', priority: 'submitted', requestId: 'r1' });
  await f.enqueue('http://h.test/raised', { reason: 'link' });
  await f.enqueue('http://h.test/raised', { reason: 'sitemap', priority: 'sitemap' });
  t.equal((await f.get('http://h.test/raised'))!.priority, PRIORITY.sitemap, 'raised');
  await f.enqueue('http://h.test/raised', { reason: 'link' });
  t.equal((await f.get('http://h.test/raised'))!.priority, PRIORITY.sitemap, 'never lowered');
  const order: string[] = [];
  for (;;) {
    const it = await claim();
    if (!it) break;
    order.push(new URL(it.url).pathname);
    await f.complete(it, { outcome: 'indexed', status: 200 });
  }
  t.same(order, ['/submitted', '/sitemap', '/raised', '/discovered']);
  t.equal((await f.get('http://h.test/submitted'))!.requestId, 'r1');
  t.ok(PRIORITY.submitted > PRIORITY.sitemap && PRIORITY.sitemap > PRIORITY.discovered);
});

t.test('claims across hosts: the best due item first, nothing before it is due; when the next claim can be', async (t) => {
  const { f, claim, nextClaimAt } = setup(t);
  await f.enqueue('http://a.test/1', { reason: 'seed' });
  await f.enqueue('http://b.test/1', { reason: 'seed', priority: 'submitted' });
  await f.enqueue('http://c.test/1', { reason: 'seed', notBefore: 2_000_000 });
  t.equal(await nextClaimAt(), 1_000_000, 'something is due now');
  const first = (await claim())!;
  t.equal(first.host, 'b.test', 'the submitted one first');
  const second = (await claim())!;
  t.equal(second.host, 'a.test');
  t.equal(await claim(), null, 'c.test is not due yet');
  t.equal(await nextClaimAt(), 1_000_000 + 120_000, 'the earliest future event is a lease expiry');
  await f.enqueue('http://c.test/2', { reason: 'seed', notBefore: 1_050_000 });
  t.equal(await nextClaimAt(), 1_050_000);
});

t.test('leases: an expired lease returns the item; the old holder can no longer complete it', async (t) => {
  const { f, claim, advance } = setup(t, { leaseMs: 1000 });
  await f.enqueue('http://a.test/x', { reason: 'seed' });
  const first = (await claim())!;
  t.equal(first.leaseUntil, 1_000_000 + 1000);
  t.equal(await claim(), null);
  advance(1001);
  const second = (await claim())!;
  t.equal(second.id, first.id);
  await t.rejects(f.complete(first, { outcome: 'indexed' }), LeaseLostError);
  await t.rejects(f.renew(first), LeaseLostError);
  await f.renew(second);
  await f.complete(second, { outcome: 'indexed', status: 200 });
  t.equal((await f.get('http://a.test/x'))!.completions, 1);
  t.equal((await f.get('http://a.test/x'))!.state, 'done');
  await t.rejects(f.complete(second, { outcome: 'indexed' }), LeaseLostError, 'completed once per lease');
});

t.test('retries: exponential backoff with jitter, Retry-After respected, dead letter after N attempts', async (t) => {
  let r = 0.5;
  const { f, claim, set, advance } = setup(t, { random: () => r, retryBaseMs: 1000, retryMaxMs: 60_000, maxAttempts: 4 }, 0);
  t.equal(f.backoffMs(1), 1000, 'base × 2^0 × (0.5 + 0.5)');
  t.equal(f.backoffMs(3), 4000);
  r = 0;
  t.equal(f.backoffMs(3), 2000, 'jitter low end');
  r = 0.999;
  t.equal(f.backoffMs(3), 5996, 'jitter high end');
  t.equal(f.backoffMs(30), Math.round(60_000 * 1.499), 'capped');
  r = 0.5;
  await f.enqueue('http://a.test/flaky', { reason: 'seed' });
  let it = (await claim())!;
  t.same(await f.fail(it, { error: 'http_500', retryable: true, status: 500 }), { state: 'retrying', nextAt: 1000 });
  t.equal(await claim(), null, 'backing off');
  t.same(await f.countsForHost('a.test'), { queued: 0, leased: 0, retrying: 1, done: 0, dead: 0 });
  set(1000);
  it = (await claim())!;
  t.equal(it.attempts, 1);
  t.same(
    await f.fail(it, { error: 'http_429', retryable: true, retryAfterMs: 30_000 }),
    { state: 'retrying', nextAt: 31_000 },
    'Retry-After longer than the backoff wins',
  );
  set(31_000);
  it = (await claim())!;
  t.equal((await f.fail(it, { error: 'connect', retryable: true })).state, 'retrying');
  advance(100_000);
  it = (await claim())!;
  t.same(await f.fail(it, { error: 'connect', retryable: true }), { state: 'dead', nextAt: null });
  const dead = await f.deadLetters({ host: 'a.test' });
  t.equal(dead.length, 1);
  t.equal(dead[0]!.deadReason, 'connect (after 4 attempts)');
  t.equal(await claim(), null);
  await f.enqueue('http://a.test/blocked', { reason: 'seed' });
  it = (await claim())!;
  t.same(await f.fail(it, { error: 'blocked_address', retryable: false }), { state: 'dead', nextAt: null }, 'not retryable: dead at once');
  t.equal((await f.get('http://a.test/blocked'))!.deadReason, 'blocked_address');
  t.same(await f.countsForHost('a.test'), { queued: 0, leased: 0, retrying: 0, done: 0, dead: 2 });
  await f.enqueue('http://a.test/blocked', { reason: 'submitted', priority: 'submitted', refresh: true });
  t.equal((await f.get('http://a.test/blocked'))!.state, 'queued', 'a refresh brings a dead URL back');
});

t.test('dead letters: a link found again never revives one; a seed or submission given again does', async (t) => {
  const { f, claim } = setup(t);
  const { id } = (await f.enqueue('http://a.test/trap', { reason: 'link' }))!;
  await f.fail((await claim())!, { error: 'blocked_address', retryable: false });
  t.same(await f.enqueue('http://a.test/trap', { reason: 'link' }), { id, created: false, state: 'dead' }, 'traps stay dead');
  t.same(await f.enqueue('http://a.test/trap', { reason: 'sitemap', priority: 'sitemap' }), { id, created: false, state: 'dead' });
  t.equal((await f.get('http://a.test/trap'))!.priority, PRIORITY.sitemap, 'only the priority rose');
  t.same(await f.enqueue('http://a.test/trap', { reason: 'request:discovery', priority: 'submitted' }), {
    id,
    created: false,
    state: 'queued',
  });
  const row = (await f.get('http://a.test/trap'))!;
  t.equal(row.deadReason, null);
  t.equal(row.attempts, 0);
  t.equal(row.reason, 'request:discovery');
});

t.test('recrawl: validators stored, interval halves on change and grows when unchanged', async (t) => {
  const H = 3600_000;
  const { f, claim, advance, now } = setup(t, { recrawlInitialMs: 24 * H, recrawlMinMs: H, recrawlMaxMs: 30 * 24 * H });
  await f.enqueue('http://a.test/p', { reason: 'seed' });
  let it = (await claim())!;
  t.equal(it.fetchedBefore, false);
  await f.complete(it, { outcome: 'indexed', status: 200, changed: null, etag: '"v1"', lastModified: 'Wed, 01 Oct 2026 12:00:00 GMT' });
  let row = (await f.get('http://a.test/p'))!;
  t.equal(row.recrawlMs, 24 * H);
  t.equal(row.nextAt, now() + 24 * H);
  t.equal(await f.pending(), 0, 'done items waiting for recrawl are not pending');
  t.equal(await claim(), null);
  advance(24 * H);
  it = (await claim())!;
  t.equal(it.etag, '"v1"');
  t.equal(it.lastModified, 'Wed, 01 Oct 2026 12:00:00 GMT');
  t.equal(it.fetchedBefore, true);
  t.equal(it.priority, PRIORITY.recrawl);
  await f.complete(it, { outcome: 'unchanged', status: 304, changed: false, etag: '"v1"' });
  row = (await f.get('http://a.test/p'))!;
  t.equal(row.recrawlMs, 36 * H, 'unchanged: ×1.5');
  advance(36 * H);
  it = (await claim())!;
  await f.complete(it, { outcome: 'indexed', status: 200, changed: true });
  t.equal((await f.get('http://a.test/p'))!.recrawlMs, 18 * H, 'changed: ÷2');
  for (let i = 0; i < 10; i++) {
    advance(40 * 24 * H);
    it = (await claim())!;
    await f.complete(it, { outcome: 'indexed', changed: true });
  }
  t.equal((await f.get('http://a.test/p'))!.recrawlMs, H, 'bounded below');
  advance(H);
  it = (await claim())!;
  await f.complete(it, { outcome: 'indexed', changed: true, recrawlBy: now() + 60_000 });
  t.equal((await f.get('http://a.test/p'))!.nextAt, now() + 60_000, 'recrawlBy (unavailable_after) brings the recrawl forward');
  t.equal((await f.get('http://a.test/p'))!.completions, 14);
  for (let i = 0; i < 7; i++) {
    advance(40 * 24 * H);
    it = (await claim())!;
    await f.complete(it, { outcome: 'unchanged', changed: false });
  }
  t.equal((await f.get('http://a.test/p'))!.recrawlMs, H * 1.5 ** 7, 'grows by half while unchanged');
  for (let i = 0; i < 10; i++) {
    advance(40 * 24 * H);
    it = (await claim())!;
    await f.complete(it, { outcome: 'unchanged', changed: false });
  }
  t.equal((await f.get('http://a.test/p'))!.recrawlMs, 30 * 24 * H, 'bounded above');
  advance(40 * 24 * H);
  it = (await claim())!;
  await f.complete(it, { outcome: 'gone', status: 410, recrawlInMs: null });
  row = (await f.get('http://a.test/p'))!;
  t.equal(row.nextAt, Number.MAX_SAFE_INTEGER, 'recrawlInMs null: never due again');
  t.equal(row.recrawlMs, null);
  t.equal(await claim(), null);
});

t.test('markFetched records a redirect target without fetching it again', async (t) => {
  const { f, claim, now } = setup(t);
  await f.markFetched('http://b.test/landing', { outcome: 'indexed', status: 200, reason: 'redirect' });
  const row = (await f.get('http://b.test/landing'))!;
  t.equal(row.state, 'done');
  t.equal(row.nextAt, now() + 24 * 3600_000, 'due for recrawl after the initial interval');
  await f.enqueue('http://b.test/landing', { reason: 'link' });
  t.equal(await claim(), null, 'enqueueing it again does not make it due');
});

t.test('maxPerHost bounds discovered URLs per host (crawler traps), not submissions', async (t) => {
  const { f } = setup(t, { maxPerHost: 3 });
  const admitted = [];
  for (let i = 0; i < 5; i++) admitted.push(await f.enqueue(`http://trap.test/cal/${i}`, { reason: 'link' }));
  t.same(
    admitted.map((r) => r?.created ?? null),
    [true, true, true, null, null],
    'beyond the cap a link is refused',
  );
  t.equal((await f.countsForHost('trap.test')).queued, 3);
  t.ok(await f.enqueue('http://trap.test/submitted', { reason: 'submitted', priority: 'submitted' }));
  t.equal((await f.countsForHost('trap.test')).queued, 4);
  t.ok(await f.enqueue('http://trap.test/map', { reason: 'sitemap', priority: 'sitemap' }), 'sitemap entries are not capped either');
  t.equal(await f.enqueue('http://trap.test/cal/9', { reason: 'link' }), null, 'links still are');
});

t.test('the frontier is durable across reopen', async (t) => {
  const file = join(t.testdir(), 'state.sqlite');
  let db = openStateDb(file);
  await new CrawlFrontier(sqliteRepositories(db).frontier).enqueue('http://a.test/keep', { reason: 'seed', priority: 'submitted' });
  db.close();
  db = openStateDb(file);
  t.teardown(() => db.close());
  const f = new CrawlFrontier(sqliteRepositories(db).frontier);
  t.equal((await f.get('http://a.test/keep'))!.priority, PRIORITY.submitted);
  t.equal(await f.pending(), 1);
});
