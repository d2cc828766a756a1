import t from 'tap';
import { join } from 'node:path';
import { openStateDb } from '../../state/db.js';
import { RateLimiter } from '../../state/rate-limits.js';

const digest = 'ab'.repeat(32);
const limits = { perMinute: 5, perDay: 8 };
// Times on today's UTC date: closing the limiter prunes rows older than two days by the real clock, so a fixed
// calendar date would be pruned before the stored rows are read back once that date is two days old.
const today = new Date().toISOString().slice(0, 10);
const at = (time: string) => new Date(`${today}T${time}Z`);

t.test('counts survive a restart: written behind, read back on first use of the window', async (t) => {
  const file = join(t.testdir(), 'state.sqlite');
  const first = at('10:00:10');
  let db = openStateDb(file);
  let limiter = new RateLimiter(db);
  for (let i = 0; i < 3; i++) t.equal(limiter.consume(digest, limits, first).allowed, true);
  limiter.close();
  db.close();
  db = openStateDb(file);
  limiter = new RateLimiter(db);
  const d = limiter.consume(digest, limits, at('10:00:20'));
  t.match(d, { allowed: true, remainingMinute: 1, remainingDay: 4 });
  t.equal(limiter.consume(digest, limits, at('10:00:30')).remainingMinute, 0);
  const refused = limiter.consume(digest, limits, at('10:00:40'));
  t.match(refused, { allowed: false, remainingMinute: 0, retryAfter: 20 });
  // A new minute admits again until the day's 8 are used.
  t.match(limiter.consume(digest, limits, at('10:01:00')), { allowed: true, remainingDay: 2 });
  limiter.consume(digest, limits, at('10:01:01'));
  limiter.consume(digest, limits, at('10:01:02'));
  const dayFull = limiter.consume(digest, limits, at('10:01:03'));
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
  const start = at('10:00:00');
  for (let i = 0; i < 5; i++) limiter.consume(digest, limits, start);
  for (let i = 0; i < 10; i++) t.equal(limiter.consume(digest, limits, start).allowed, false);
  t.equal(limiter.consume('cd'.repeat(32), limits, start).remainingMinute, 4, 'another key has its own quota');
  t.equal(limiter.consume(digest, limits, at('10:01:00')).remainingDay, 2, 'refusals did not count');
});
