import t from 'tap';
import { join } from 'node:path';
import { openStateDb } from '../../state/db.js';
import { RateLimiter } from '../../state/rate-limits.js';

const digest = 'ab'.repeat(32);
const limits = { perMinute: 5, perDay: 8 };

t.test('counts survive a restart: written behind, read back on first use of the window', async (t) => {
  const file = join(t.testdir(), 'state.sqlite');
  const at = new Date('2026-11-21T10:00:10Z');
  let db = openStateDb(file);
  let limiter = new RateLimiter(db);
  for (let i = 0; i < 3; i++) t.equal(limiter.consume(digest, limits, at).allowed, true);
  limiter.close();
  db.close();
  db = openStateDb(file);
  limiter = new RateLimiter(db);
  const d = limiter.consume(digest, limits, new Date('2026-11-21T10:00:20Z'));
  t.match(d, { allowed: true, remainingMinute: 1, remainingDay: 4 });
  t.equal(limiter.consume(digest, limits, new Date('2026-11-21T10:00:30Z')).remainingMinute, 0);
  const refused = limiter.consume(digest, limits, new Date('2026-11-21T10:00:40Z'));
  t.match(refused, { allowed: false, remainingMinute: 0, retryAfter: 20 });
  // A new minute admits again until the day's 8 are used.
  t.match(limiter.consume(digest, limits, new Date('2026-11-21T10:01:00Z')), { allowed: true, remainingDay: 2 });
  limiter.consume(digest, limits, new Date('2026-11-21T10:01:01Z'));
  limiter.consume(digest, limits, new Date('2026-11-21T10:01:02Z'));
  const dayFull = limiter.consume(digest, limits, new Date('2026-11-21T10:01:03Z'));
  t.match(dayFull, { allowed: false, remainingDay: 0 });
  t.equal(dayFull.retryAfter, 50_337, 'seconds until the next UTC day');
  limiter.close();
  const rows = db.prepare('SELECT window, count FROM usage_counters ORDER BY window, window_start').all();
  t.same(
    rows,
    [
      { window: 'day', count: 8 },
      { window: 'minute', count: 5 },
      { window: 'minute', count: 3 },
    ],
    'aggregate counters only',
  );
  db.close();
});

t.test('a refused request consumes nothing; other keys are independent', async (t) => {
  const db = openStateDb(join(t.testdir(), 'state.sqlite'));
  const limiter = new RateLimiter(db);
  t.teardown(() => {
    limiter.close();
    db.close();
  });
  const at = new Date('2026-11-21T10:00:00Z');
  for (let i = 0; i < 5; i++) limiter.consume(digest, limits, at);
  for (let i = 0; i < 10; i++) t.equal(limiter.consume(digest, limits, at).allowed, false);
  t.equal(limiter.consume('cd'.repeat(32), limits, at).remainingMinute, 4, 'another key has its own quota');
  t.equal(limiter.consume(digest, limits, new Date('2026-11-21T10:01:00Z')).remainingDay, 2, 'refusals did not count');
});
