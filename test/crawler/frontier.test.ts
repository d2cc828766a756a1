import t, { type Test } from 'tap';
import { join } from 'node:path';
import { openStateDb } from '../../state/db.js';
import { Frontier, LeaseLostError, PRIORITY } from '../../crawler/frontier.js';

function setup(t: Test, opts: ConstructorParameters<typeof Frontier>[1] = {}) {
  const dir = t.testdir();
  const db = openStateDb(join(dir, 'state.sqlite'));
  t.teardown(() => db.close());
  let clock = 1_000_000;
  const f = new Frontier(db, { now: () => clock, random: () => 0.5, ...opts });
  return { db, f, dir, advance: (ms: number) => (clock += ms), now: () => clock };
}

t.test('enqueue normalises, deduplicates and is idempotent', async (t) => {
  const { f } = setup(t);
  const a = f.enqueue('HTTP://Alpha.Test:80/a/./b#frag', { reason: 'seed' });
  t.same(a, { id: a!.id, created: true, state: 'queued' });
  const b = f.enqueue('http://alpha.test/a/b', { reason: 'link' });
  t.same(b, { id: a!.id, created: false, state: 'queued' });
  t.equal(f.enqueue('ftp://x.test/', { reason: 'link' }), null);
  t.equal(f.enqueue('http://user:pw@x.test/', { reason: 'link' }), null);
  t.equal(f.counts().queued, 1);
  t.equal(f.get('http://alpha.test/a/b')!.host, 'alpha.test');
});

t.test('priorities: submitted > sitemap > discovered, raising on re-enqueue', async (t) => {
  const { f } = setup(t);
  f.enqueue('http://h.test/discovered', { reason: 'link' });
  f.enqueue('http://h.test/sitemap', { reason: 'sitemap', priority: 'sitemap' });
  f.enqueue('http://h.test/submitted', { reason: 'submitted', priority: 'submitted', requestId: 'r1' });
  f.enqueue('http://h.test/raised', { reason: 'link' });
  f.enqueue('http://h.test/raised', { reason: 'sitemap', priority: 'sitemap' });
  const order: string[] = [];
  for (;;) {
    const it = f.claim('h.test');
    if (!it) break;
    order.push(new URL(it.url).pathname);
    f.complete(it, { outcome: 'indexed', status: 200 });
  }
  t.same(order, ['/submitted', '/sitemap', '/raised', '/discovered']);
  t.equal(f.get('http://h.test/submitted')!.requestId, 'r1');
  t.ok(PRIORITY.submitted > PRIORITY.sitemap && PRIORITY.sitemap > PRIORITY.discovered);
});

t.test('per-host queues: readyHosts lists hosts with due work; claim is per host', async (t) => {
  const { f } = setup(t);
  f.enqueue('http://a.test/1', { reason: 'seed' });
  f.enqueue('http://b.test/1', { reason: 'seed', priority: 'submitted' });
  f.enqueue('http://c.test/1', { reason: 'seed', notBefore: 2_000_000 });
  t.same(
    f.readyHosts().map((h) => h.host),
    ['b.test', 'a.test'],
  );
  t.equal(f.claim('c.test'), null, 'not due yet');
  const it = f.claim('a.test')!;
  t.equal(it.host, 'a.test');
  t.same(
    f.readyHosts().map((h) => h.host),
    ['b.test'],
    'a leased item is not due',
  );
  t.equal(f.nextDueAt(), 1_000_000 + 120_000, 'the earliest future event is the lease expiry (due items do not count)');
  f.enqueue('http://c.test/2', { reason: 'seed', notBefore: 1_050_000 });
  t.equal(f.nextDueAt(), 1_050_000);
});

t.test('leases: an expired lease returns the item; the old holder can no longer complete it', async (t) => {
  const { f, advance } = setup(t, { leaseMs: 1000 });
  f.enqueue('http://a.test/x', { reason: 'seed' });
  const first = f.claim('a.test')!;
  t.equal(f.claim('a.test'), null);
  advance(1001);
  const second = f.claim('a.test')!;
  t.equal(second.id, first.id);
  t.throws(() => f.complete(first, { outcome: 'indexed' }), LeaseLostError);
  f.complete(second, { outcome: 'indexed', status: 200 });
  t.equal(f.get('http://a.test/x')!.completions, 1);
  t.equal(f.get('http://a.test/x')!.state, 'done');
});

t.test('retries: exponential backoff with jitter, Retry-After respected, dead letter after N attempts', async (t) => {
  let r = 0.5;
  const dir = t.testdir();
  const db = openStateDb(join(dir, 'state.sqlite'));
  t.teardown(() => db.close());
  let clock = 0;
  const f = new Frontier(db, { now: () => clock, random: () => r, retryBaseMs: 1000, retryMaxMs: 60_000, maxAttempts: 4 });
  t.equal(f.backoffMs(1), 1000, 'base × 2^0 × (0.5 + 0.5)');
  t.equal(f.backoffMs(3), 4000);
  r = 0;
  t.equal(f.backoffMs(3), 2000, 'jitter low end');
  r = 0.999;
  t.equal(f.backoffMs(3), 5996, 'jitter high end');
  t.equal(f.backoffMs(30), Math.round(60_000 * 1.499), 'capped');
  r = 0.5;
  f.enqueue('http://a.test/flaky', { reason: 'seed' });
  let it = f.claim('a.test')!;
  t.same(f.fail(it, { error: 'http_500', retryable: true, status: 500 }), { state: 'retrying', nextAt: 1000 });
  t.equal(f.claim('a.test'), null, 'backing off');
  t.same(f.countsForHost('a.test'), { queued: 0, leased: 0, retrying: 1, done: 0, dead: 0 });
  clock = 1000;
  it = f.claim('a.test')!;
  t.equal(it.attempts, 1);
  t.same(
    f.fail(it, { error: 'http_429', retryable: true, retryAfterMs: 30_000 }),
    { state: 'retrying', nextAt: 31_000 },
    'Retry-After longer than the backoff wins',
  );
  clock = 31_000;
  it = f.claim('a.test')!;
  t.equal(f.fail(it, { error: 'connect', retryable: true }).state, 'retrying');
  clock += 100_000;
  it = f.claim('a.test')!;
  t.same(f.fail(it, { error: 'connect', retryable: true }), { state: 'dead', nextAt: null });
  const dead = f.deadLetters({ host: 'a.test' });
  t.equal(dead.length, 1);
  t.equal(dead[0]!.deadReason, 'connect (after 4 attempts)');
  t.equal(f.claim('a.test'), null);
  f.enqueue('http://a.test/blocked', { reason: 'seed' });
  it = f.claim('a.test')!;
  t.same(f.fail(it, { error: 'blocked_address', retryable: false }), { state: 'dead', nextAt: null }, 'not retryable: dead at once');
  t.equal(f.get('http://a.test/blocked')!.deadReason, 'blocked_address');
  t.same(f.countsForHost('a.test'), { queued: 0, leased: 0, retrying: 0, done: 0, dead: 2 });
  f.enqueue('http://a.test/blocked', { reason: 'submitted', priority: 'submitted', refresh: true });
  t.equal(f.get('http://a.test/blocked')!.state, 'queued', 'a refresh brings a dead URL back');
});

t.test('recrawl: validators stored, interval halves on change and grows when unchanged', async (t) => {
  const H = 3600_000;
  const { f, advance, now } = setup(t, { recrawlInitialMs: 24 * H, recrawlMinMs: H, recrawlMaxMs: 30 * 24 * H });
  f.enqueue('http://a.test/p', { reason: 'seed' });
  let it = f.claim('a.test')!;
  t.equal(it.fetchedBefore, false);
  f.complete(it, { outcome: 'indexed', status: 200, changed: null, etag: '"v1"', lastModified: 'Wed, 01 Oct 2026 12:00:00 GMT' });
  let row = f.get('http://a.test/p')!;
  t.equal(row.recrawlMs, 24 * H);
  t.equal(row.nextAt, now() + 24 * H);
  t.equal(f.pending(), 0, 'done items waiting for recrawl are not pending');
  t.equal(f.claim('a.test'), null);
  advance(24 * H);
  it = f.claim('a.test')!;
  t.equal(it.etag, '"v1"');
  t.equal(it.lastModified, 'Wed, 01 Oct 2026 12:00:00 GMT');
  t.equal(it.fetchedBefore, true);
  t.equal(it.priority, PRIORITY.recrawl);
  f.complete(it, { outcome: 'unchanged', status: 304, changed: false, etag: '"v1"' });
  row = f.get('http://a.test/p')!;
  t.equal(row.recrawlMs, 36 * H, 'unchanged: ×1.5');
  advance(36 * H);
  it = f.claim('a.test')!;
  f.complete(it, { outcome: 'indexed', status: 200, changed: true });
  t.equal(f.get('http://a.test/p')!.recrawlMs, 18 * H, 'changed: ÷2');
  for (let i = 0; i < 10; i++) {
    advance(40 * 24 * H);
    it = f.claim('a.test')!;
    f.complete(it, { outcome: 'indexed', changed: true });
  }
  t.equal(f.get('http://a.test/p')!.recrawlMs, H, 'bounded below');
  advance(H);
  it = f.claim('a.test')!;
  f.complete(it, { outcome: 'indexed', changed: true, recrawlBy: now() + 60_000 });
  t.equal(f.get('http://a.test/p')!.nextAt, now() + 60_000, 'recrawlBy (unavailable_after) brings the recrawl forward');
  t.equal(f.get('http://a.test/p')!.completions, 14);
});

t.test('markFetched records a redirect target without fetching it again', async (t) => {
  const { f } = setup(t);
  f.markFetched('http://b.test/landing', { outcome: 'indexed', status: 200, reason: 'redirect' });
  t.equal(f.get('http://b.test/landing')!.state, 'done');
  f.enqueue('http://b.test/landing', { reason: 'link' });
  t.equal(f.claim('b.test'), null, 'enqueueing it again does not make it due');
});

t.test('maxPerHost bounds discovered URLs per host (crawler traps), not submissions', async (t) => {
  const { f } = setup(t, { maxPerHost: 3 });
  for (let i = 0; i < 5; i++) f.enqueue(`http://trap.test/cal/${i}`, { reason: 'link' });
  t.equal(f.countsForHost('trap.test').queued, 3);
  t.ok(f.enqueue('http://trap.test/submitted', { reason: 'submitted', priority: 'submitted' }));
  t.equal(f.countsForHost('trap.test').queued, 4);
});

t.test('the frontier is durable across reopen', async (t) => {
  const dir = t.testdir();
  const file = join(dir, 'state.sqlite');
  let db = openStateDb(file);
  new Frontier(db).enqueue('http://a.test/keep', { reason: 'seed', priority: 'submitted' });
  db.close();
  db = openStateDb(file);
  t.teardown(() => db.close());
  const f = new Frontier(db);
  t.equal(f.get('http://a.test/keep')!.priority, PRIORITY.submitted);
  t.equal(f.pending(), 1);
});
