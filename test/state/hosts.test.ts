/** state/hosts.ts, the host facts the pipeline writes for svc_site (unit level, real SQLite). */
import t from 'tap';
import { join } from 'node:path';
import { openStateDb } from '../../state/db.js';
import { Hosts, median } from '../../state/hosts.js';

t.test('robots and llms.txt facts, last crawl, unknown hosts', async (t) => {
  const db = openStateDb(join(t.testdir(), 's.sqlite'));
  t.teardown(() => db.close());
  const h = new Hosts(db);
  t.equal(h.get('nowhere.test'), null);
  h.recordRobots('Ville.Test', {
    status: 'ok',
    httpStatus: 200,
    fetchedAt: '2026-11-01T00:00:00.000Z',
    rules: ['Disallow: /x'],
    sitemaps: ['https://ville.test/s.xml'],
    crawlDelaySec: 2,
  });
  h.recordLlms('ville.test', { present: true, fetchedAt: '2026-11-01T00:00:01.000Z', title: 'Ville', summary: 'Services', linkCount: 4 });
  h.recordCrawl('ville.test', '2026-11-02T00:00:00.000Z');
  h.recordCrawl('ville.test', '2026-11-03T00:00:00.000Z');
  const f = h.get('VILLE.test')!;
  t.same(f.robots, {
    status: 'ok',
    httpStatus: 200,
    fetchedAt: '2026-11-01T00:00:00.000Z',
    rules: ['Disallow: /x'],
    sitemaps: ['https://ville.test/s.xml'],
    crawlDelaySec: 2,
  });
  t.same(f.llms, { present: true, fetchedAt: '2026-11-01T00:00:01.000Z', title: 'Ville', summary: 'Services', linkCount: 4 });
  t.equal(f.lastCrawlAt, '2026-11-03T00:00:00.000Z');
  t.equal(f.pagesFetched, 2);
  h.recordLlms('ville.test', { present: false, fetchedAt: '2026-11-08T00:00:00.000Z', title: null, summary: null, linkCount: 0 });
  t.equal(h.get('ville.test')!.llms!.present, false);
});

t.test('link aggregates follow each page’s latest links and its withdrawal', async (t) => {
  const db = openStateDb(join(t.testdir(), 's.sqlite'));
  t.teardown(() => db.close());
  const h = new Hosts(db);
  h.recordPageLinks(
    1,
    'a.test',
    new Map([
      ['b.test', 3],
      ['a.test', 5],
      ['c.test', 1],
    ]),
  );
  h.recordPageLinks(2, 'c.test', new Map([['b.test', 1]]));
  t.same(
    [h.get('a.test')!.outboundLinks, h.get('b.test')!.inboundHosts, h.get('c.test')!.inboundHosts],
    [4, 2, 1],
    'own-host links do not count',
  );
  h.recordPageLinks(1, 'a.test', new Map([['c.test', 2]]));
  t.same([h.get('a.test')!.outboundLinks, h.get('b.test')!.inboundHosts], [2, 1], 'replaced, not added');
  h.withdrawPageLinks(2);
  t.equal(h.get('b.test'), null, 'nothing left about b.test');
});

t.test('change intervals: median over the newest 200 per host', async (t) => {
  const db = openStateDb(join(t.testdir(), 's.sqlite'));
  t.teardown(() => db.close());
  const h = new Hosts(db);
  for (const [i, ms] of [3000, 1000, 2000, 0, -5].entries()) h.recordChangeInterval('a.test', ms, `2026-11-0${i + 1}T00:00:00.000Z`);
  t.same([h.get('a.test')!.changeIntervalsObserved, h.get('a.test')!.medianChangeIntervalMs], [3, 2000], 'non-positive intervals ignored');
  for (let i = 0; i < 250; i++)
    h.recordChangeInterval('b.test', 10, `2026-11-01T00:00:${String(i % 60).padStart(2, '0')}.${String(i).padStart(3, '0')}Z`);
  t.equal(h.get('b.test')!.changeIntervalsObserved, 200);
  t.equal(median([1, 2, 3, 4]), 2.5);
  t.equal(median([]), null);
});
