import t from 'tap';
import { join } from 'node:path';
import { openStateDb } from '../../state/db.js';
import { openSqliteRepositories } from '../../state/repos/sqlite.js';
import { openRepositories } from '../../state/repos/open.js';
import { repoContract } from './repos-contract.js';

t.test('repository contract on SQLite', async (t) => {
  const dir = t.testdir();
  const open = async (name: string) => openSqliteRepositories(join(dir, `${name}.sqlite`));
  repoContract(t, open, open);
});

t.test('issue 10: repository contract on SQLite with the in-process usage counters svc serve uses', async (t) => {
  const dir = t.testdir();
  const { openStateDb: openDb } = await import('../../state/db.js');
  const { sqliteRepositories } = await import('../../state/repos/sqlite.js');
  const open = async (name: string) => {
    const db = openDb(join(dir, `${name}.sqlite`));
    return sqliteRepositories(db, { inProcessUsage: true, close: () => db.close() });
  };
  repoContract(t, open, open);
});

t.test('issue 10: opening migrates once; no SVC_DATABASE_URL means the state file in the data dir', async (t) => {
  const dir = t.testdir();
  const first = await openRepositories({ dataDir: dir });
  t.equal(first.backend, 'sqlite');
  t.ok(first.applied.includes('repos-001-host-politeness'));
  t.ok(first.applied.includes('keys-001-keys-and-counters'));
  await first.keys.create({ name: 'kept', perMinute: 1, perDay: 1 });
  await first.close();
  const again = await openRepositories({ dataDir: dir, databaseUrl: undefined });
  t.same(again.applied, [], 'up to date');
  t.same(
    (await again.keys.list()).map((k) => k.name),
    ['kept'],
  );
  await again.close();
  // The service's own opener sees the same file and schema.
  const db = openStateDb(join(dir, 'state.sqlite'));
  t.equal((db.prepare('SELECT count(*) AS n FROM api_keys').get() as { n: number }).n, 1);
  db.close();
});

t.test('issue 10: openRepositories on an already open state file shares that handle and leaves it open', async (t) => {
  const db = openStateDb(join(t.testdir(), 'state.sqlite'));
  t.teardown(() => db.close());
  const r = await openRepositories({ dataDir: '/nonexistent-not-used', embedded: { db, inProcessUsage: true } });
  t.equal(r.backend, 'sqlite');
  const { key } = await r.keys.create({ name: 'shared', perMinute: 2, perDay: 10 });
  t.equal((db.prepare('SELECT name FROM api_keys').get() as { name: string }).name, 'shared', 'written through the given handle');
  const v = await r.keys.verify(key);
  if (!v) throw new Error('key did not verify');
  const now = new Date('2026-11-22T10:00:30Z');
  const seen = [];
  for (let i = 0; i < 3; i++) seen.push((await r.usage.consume(v.digest, { perMinute: 2, perDay: 10 }, now)).allowed);
  t.same(seen, [true, true, false], 'the minute quota holds');
  await r.close();
  t.equal((db.prepare('SELECT 1 AS one').get() as { one: number }).one, 1, "close() leaves the caller's handle open");
});

t.test('issue 10: rows an older data dir holds without a politeness row are claimable after the migration', async (t) => {
  const file = join(t.testdir(), 'state.sqlite');
  const old = openStateDb(file);
  // The data dir as it was before repos-007: a frontier row whose host has no politeness row.
  old.exec(`DELETE FROM schema_migrations WHERE id = 'repos-007-frontier-claim-by-host'; DROP INDEX frontier_host_claim;`);
  old
    .prepare(
      `INSERT INTO frontier (url, host, priority, reason, state, next_at, created_at, updated_at) VALUES ('http://old.test/', 'old.test', 0, 'seed', 'queued', 0, 0, 0)`,
    )
    .run();
  old.close();
  const db = openStateDb(file);
  t.teardown(() => db.close());
  const { sqliteRepositories } = await import('../../state/repos/sqlite.js');
  const r = sqliteRepositories(db, { defaultGapMs: 700 });
  t.equal(await r.frontier.nextClaimAt(), 0, 'due now');
  const item = await r.frontier.claim({ owner: 'w', leaseMs: 1000, now: 5000 });
  t.equal(item?.url, 'http://old.test/');
  t.same(await r.politeness.get('old.test'), { host: 'old.test', gapMs: 1000, nextFetchAt: 6000 }, 'the default gap, 1 s');
});

t.test('issue 10: host evidence reads the facts the crawler records (state/hosts.ts writers)', async (t) => {
  const db = openStateDb(join(t.testdir(), 'state.sqlite'));
  t.teardown(() => db.close());
  const { Hosts } = await import('../../state/hosts.js');
  const { sqliteRepositories } = await import('../../state/repos/sqlite.js');
  const hosts = new Hosts(db);
  hosts.recordRobots('h.test', {
    status: 'ok',
    httpStatus: 200,
    fetchedAt: '2026-11-21T10:00:00.000Z',
    rules: ['Disallow: /x'],
    sitemaps: [],
    crawlDelaySec: 2,
  });
  hosts.recordCrawl('h.test', '2026-11-21T10:01:00.000Z');
  hosts.recordChangeInterval('h.test', 1000, '2026-11-21T10:02:00.000Z');
  hosts.recordChangeInterval('h.test', 3000, '2026-11-21T10:03:00.000Z');
  hosts.recordPageLinks(
    1,
    'h.test',
    new Map([
      ['o.test', 3],
      ['h.test', 9],
    ]),
  );
  hosts.recordPageLinks(2, 'o.test', new Map([['h.test', 1]]));
  const ev = await sqliteRepositories(db).hosts.evidence('h.test');
  t.same(ev.facts, HOST_FACTS_EXPECTED);
});

/** What both backends must report for the rows above (repos-postgres.test.ts inserts the same rows). */
const HOST_FACTS_EXPECTED = {
  host: 'h.test',
  robots: { status: 'ok', httpStatus: 200, fetchedAt: '2026-11-21T10:00:00.000Z', rules: ['Disallow: /x'], sitemaps: [], crawlDelaySec: 2 },
  llms: null,
  lastCrawlAt: '2026-11-21T10:01:00.000Z',
  pagesFetched: 1,
  medianChangeIntervalMs: 2000,
  changeIntervalsObserved: 2,
  outboundLinks: 3,
  inboundHosts: 1,
  extraction: { byVerdict: {}, thin: [] },
};

t.test('issue 10: the entities repository (SQLite): page sink, search, get, withdraw, counts', async (t) => {
  const { openSqliteRepositories: open } = await import('../../state/repos/sqlite.js');
  const r = open(join(t.testdir(), 'state.sqlite'));
  t.teardown(() => r.close());
  const entities = r.entities;
  if (!entities) throw new Error('SQLite holds entities');
  const node = {
    '@context': 'https://schema.org',
    '@type': 'Library',
    name: 'Bibliothèque Test',
    address: {
      '@type': 'PostalAddress',
      streetAddress: '1 rue Test',
      addressLocality: 'Québec',
      addressRegion: 'QC',
      postalCode: 'G1R 4S9',
      addressCountry: 'CA',
    },
  };
  await entities.observePage(
    { pageRef: 7, url: 'https://lib.example.ca/', host: 'lib.example.ca', lang: 'fr' },
    [node],
    '2026-11-21T10:00:00.000Z',
  );
  const found = await entities.search({ q: 'bibliotheque test', province: 'QC' });
  t.equal(found.length, 1);
  t.match(found[0], { name: 'Bibliothèque Test', kind: 'Library', address: { province: 'CA-QC', postal_code: 'G1R 4S9' } });
  t.same(await entities.get(found[0]!.id), found[0]);
  t.same(await entities.counts(), { entities: 1, sources: 1, pageSources: 1, datasetSources: 0 });
  await t.rejects(entities.search({ province: 'Atlantis' }), { name: 'EntityQueryError', field: 'province' });
  await entities.withdrawPage(7);
  t.equal(await entities.get(found[0]!.id), null, 'gone with its only source');
  t.same(await entities.counts(), { entities: 0, sources: 0, pageSources: 0, datasetSources: 0 });
});
