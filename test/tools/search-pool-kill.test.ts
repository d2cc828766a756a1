import t from 'tap';
import { poolService as service, restSearch } from '../helpers/search-pool-service.js';

/**
 * A search thread that dies (tools/search-pool.ts). In a file of its own: a thread terminated while LanceDB work of
 * its was in flight brought the test process down at exit in about one run in twenty-five (SIGABRT from napi-rs when
 * LanceDB's runtime dropped the thread's futures; `kill` now closes the thread instead, see there).
 */
t.test('a thread that dies: its searches are answered here, and it is replaced', async (t) => {
  const s = await service(t, 2);
  const pool = s.services.searchPool!;
  const inFlight = Promise.all(Array.from({ length: 30 }, (_, i) => restSearch(s, i % 2 ? 'passport fees' : 'wildfire status')));
  await pool.kill(0);
  const answers = await inFlight;
  t.same(
    answers.map((a) => a.status),
    Array.from({ length: 30 }, () => 200),
    'every search answered',
  );
  t.ok(
    answers.every((a) => a.body.results.length > 0),
    'with results',
  );
  t.ok(await pool.whenReady(30_000), 'a new thread took its place');
  t.equal(pool.ready, 2);
  // The stopped thread finished its native work and closed its index rather than being terminated inside it (which
  // left LanceDB futures to abort the process at exit, search-pool.ts `kill`).
  t.equal(pool.terminated, 0, 'the killed thread was closed, not terminated');
  const after = await restSearch(s, 'passport fees');
  t.equal(after.body.results[0]?.host, 'www.canada.ca');
});
