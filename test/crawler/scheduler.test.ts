import t from 'tap';
import { join } from 'node:path';
import { PolitenessScheduler } from '../../crawler/scheduler.js';

/** A scheduler on a virtual clock: sleep() advances the clock, so tests are exact and instant. */
function virtual(opts: ConstructorParameters<typeof PolitenessScheduler>[0] = {}) {
  let clock = 0;
  const s = new PolitenessScheduler({
    ...opts,
    now: () => clock,
    sleep: async (ms) => {
      clock += ms;
      await Promise.resolve();
    },
  });
  return { s, now: () => clock, set: (v: number) => (clock = v) };
}

t.test('the gap runs from the end of one request to the start of the next', async (t) => {
  const { s, now, set } = virtual({ gapMs: 1000 });
  const starts: number[] = [];
  for (let i = 0; i < 4; i++) {
    const slot = await s.acquire('a.test');
    starts.push(now());
    set(now() + 150); // the request takes 150 ms
    slot.release({ status: 200 });
  }
  t.same(starts, [0, 1150, 2300, 3450]);
});

t.test('one connection per host: a second acquire waits for the release', async (t) => {
  const s = new PolitenessScheduler({ gapMs: 0 });
  const first = await s.acquire('a.test');
  let second = false;
  const p = s.acquire('a.test').then((slot) => {
    second = true;
    return slot;
  });
  await new Promise((r) => setTimeout(r, 20));
  t.equal(second, false, 'still waiting while the first is held');
  t.equal(s.isBusy('a.test'), true);
  first.release({ status: 200 });
  const slot = await p;
  t.equal(second, true);
  slot.release({ status: 200 });
  t.equal(s.active, 0);
});

t.test('hosts are independent; global concurrency is bounded', async (t) => {
  const s = new PolitenessScheduler({ gapMs: 0, concurrency: 2 });
  const a = await s.acquire('a.test');
  const b = await s.acquire('b.test');
  t.equal(s.canStart('c.test'), false, 'two in flight: no third');
  let third = false;
  const p = s.acquire('c.test').then((x) => ((third = true), x));
  await new Promise((r) => setTimeout(r, 20));
  t.equal(third, false);
  a.release({ status: 200 });
  const c = await p;
  t.equal(third, true);
  b.release({ status: 200 });
  c.release({ status: 200 });
});

t.test('Crawl-delay is a floor on the gap, capped', async (t) => {
  const { s } = virtual({ gapMs: 1000, maxCrawlDelayMs: 30_000 });
  s.setCrawlDelay('a.test', 5);
  t.equal(s.gapFor('a.test'), 5000);
  s.setCrawlDelay('a.test', 0.2);
  t.equal(s.gapFor('a.test'), 1000, 'a smaller Crawl-delay never shortens the configured gap');
  s.setCrawlDelay('a.test', 3600);
  t.equal(s.gapFor('a.test'), 30_000, 'capped');
  s.setCrawlDelay('a.test', null);
  t.equal(s.gapFor('a.test'), 1000);
  t.equal(s.gapFor('b.test'), 1000);
});

t.test('429/503: Retry-After (seconds or HTTP-date) is honoured, else exponential back-off that decays', async (t) => {
  const { s, now, set } = virtual({ gapMs: 1000, maxBackoffMs: 600_000 });
  let slot = await s.acquire('a.test');
  slot.release({ status: 429, retryAfter: '7' });
  t.equal(s.readyAt('a.test'), 7000);
  slot = await s.acquire('a.test');
  t.equal(now(), 7000, 'waited the Retry-After');
  slot.release({ status: 503, retryAfter: new Date(now() + 30_000).toUTCString() });
  t.ok(s.readyAt('a.test') >= now() + 29_000 && s.readyAt('a.test') <= now() + 30_000, 'HTTP-date form');
  set(s.readyAt('a.test'));
  slot = await s.acquire('a.test');
  slot.release({ status: 503 });
  t.equal(s.readyAt('a.test') - now(), 1000 * 2 ** 3, 'third consecutive 429/503 without Retry-After: gap × 2^3');
  set(s.readyAt('a.test'));
  slot = await s.acquire('a.test');
  slot.release({ status: 429, retryAfter: '999999' });
  t.equal(s.readyAt('a.test') - now(), 600_000, 'Retry-After capped');
  set(s.readyAt('a.test'));
  slot = await s.acquire('a.test');
  slot.release({ status: 200 });
  t.equal(s.readyAt('a.test') - now(), 1000, 'success: normal gap');
});

t.test('waitingHosts counts hosts held back by their gap', async (t) => {
  const { s } = virtual({ gapMs: 1000 });
  (await s.acquire('a.test')).release({ status: 200 });
  (await s.acquire('b.test')).release({ status: 200 });
  t.equal(s.waitingHosts(), 2);
});

t.test('an aborted wait rejects', async (t) => {
  const s = new PolitenessScheduler({ gapMs: 60_000 });
  (await s.acquire('a.test')).release({ status: 200 });
  const ac = new AbortController();
  const p = s.acquire('a.test', ac.signal);
  ac.abort(new Error('stop'));
  await t.rejects(p, /stop/);
});

t.test('a Crawl-delay learnt from the robots.txt just fetched applies to the very next request', async (t) => {
  const { s, now, set } = virtual({ gapMs: 20 });
  const robots = await s.acquire('a.test');
  set(5);
  robots.release({ status: 200 });
  s.setCrawlDelay('a.test', 1);
  (await s.acquire('a.test')).release({ status: 200 });
  t.equal(now(), 1005);
});

t.test("issue 10: a fleet worker's settled() waits for its slot releases to land in the shared state", async (t) => {
  const { openSqliteRepositories } = await import('../../state/repos/sqlite.js');
  const { FleetScheduler } = await import('../../crawler/scheduler.js');
  const repos = openSqliteRepositories(join(t.testdir(), 'state.sqlite'), { defaultGapMs: 200 });
  t.teardown(() => repos.close());
  // The shared state as a database across the network answers: a write lands a little after it is sent.
  let landed = 0;
  const politeness = {
    ...repos.politeness,
    setGap: repos.politeness.setGap.bind(repos.politeness),
    get: repos.politeness.get.bind(repos.politeness),
    acquire: repos.politeness.acquire.bind(repos.politeness),
    release: async (...args: Parameters<typeof repos.politeness.release>) => {
      await new Promise((r) => setTimeout(r, 40));
      await repos.politeness.release(...args);
      landed++;
    },
  };
  const s = new FleetScheduler({ politeness, holdMs: 60_000, gapMs: 200 });
  const before = Date.now();
  const slot = await s.acquire('a.test');
  t.ok((await repos.politeness.get('a.test'))!.nextFetchAt >= before + 60_000, 'held: the row says so until the hold lapses');
  slot.release({ status: 200 });
  await s.settled();
  t.equal(landed, 1, 'the release has landed');
  const row = (await repos.politeness.get('a.test'))!;
  t.ok(row.nextFetchAt < before + 60_000, 'after settled() the row gives the gap after the response, not the hold');
  t.ok(row.nextFetchAt >= before + 200);
  await s.settled();
  t.equal(landed, 1, 'nothing pending: settled() returns at once');
});

t.test("issue 10: a request waiting for the shared slot does not keep the host's claimed item from its reserved turn", async (t) => {
  const { openSqliteRepositories } = await import('../../state/repos/sqlite.js');
  const { FleetScheduler, hostSlotToken } = await import('../../crawler/scheduler.js');
  const repos = openSqliteRepositories(join(t.testdir(), 'state.sqlite'), { defaultGapMs: 100 });
  t.teardown(() => repos.close());
  const s = new FleetScheduler({ politeness: repos.politeness, holdMs: 60_000, gapMs: 100 });
  // The host is reserved for item B (what claim() does): held for B until 300 ms from now.
  t.match(await repos.politeness.acquire('a.test', 'B', 300), { acquired: true });
  const order: string[] = [];
  // Item A of the same process (say its page request after its robots.txt) asks first and must wait.
  const a = hostSlotToken
    .run('A', () => s.acquire('a.test'))
    .then((slot) => {
      order.push('A');
      slot.release({ status: 200 });
    });
  await new Promise((r) => setTimeout(r, 20));
  const b = await hostSlotToken.run('B', () => s.acquire('a.test'));
  order.push('B');
  t.same(order, ['B'], 'the reserved item goes first, while A still waits');
  b.release({ status: 200 });
  await a;
  t.same(order, ['B', 'A']);
});
