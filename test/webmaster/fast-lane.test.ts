/**
 * Issue 11: the fast lane. A verified owner's URL goes into the durable frontier with priority — idempotent,
 * deduplicated, within a daily per-property quota — and the real crawler then applies every rule to it: robots,
 * noindex, removal (gone), politeness, DNS and redirect re-validation, back-off and dead-lettering. Each rule is
 * shown on the fixture web (loopback, pinned names, guarded connector) with the real LanceDB index and SQLite.
 */
import t, { type Test } from 'tap';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { loadConfig } from '../../config.js';
import { createCrawler, type Crawler } from '../../crawler/crawler.js';
import { PRIORITY } from '../../crawler/frontier.js';
import { startTestWeb, type TestWeb } from '../../fixtures/test-web/index.js';
import { PassageIndex } from '../../index/engines/lance/store.js';
import { openStateDb, type StateDb } from '../../state/db.js';
import { Documents } from '../../state/documents.js';
import { EntityStore } from '../../state/entities.js';
import { sqliteRepositories } from '../../state/repos/sqlite.js';
import type { Repositories } from '../../state/repos/types.js';
import { accountIdOf } from '../../webmaster/accounts.js';
import type { ProofCheckers } from '../../webmaster/checkers.js';
import { FAST_LANE_PRIORITY, FAST_LANE_REASON, FastLane } from '../../webmaster/fast-lane.js';
import { hashChallenge, Ownership } from '../../webmaster/ownership.js';
import { testFetcher, type ConnectAttempt } from '../fixtures/net-guard.js';

const ME = { issuer: 'https://id.example.ca', subject: 'owner-fast' };
const STRANGER = { issuer: 'https://id.example.ca', subject: 'someone-else' };

let web: TestWeb;
t.before(async () => {
  web = await startTestWeb({ generatedHosts: 1, generatedPages: 8 });
});
t.teardown(() => web.close());

/** These tests are about the fast lane, not proofs: checkers are never called (a verified proof is stored directly). */
const noCheckers: ProofCheckers = {
  dnsTxt: async () => ({ found: false, outcome: 'not_found' }),
  metaTag: async () => ({ found: false, outcome: 'not_found' }),
  wellKnown: async () => ({ found: false, outcome: 'not_found' }),
};

interface Rig {
  db: StateDb;
  repos: Repositories;
  lane: FastLane;
  own: Ownership;
  crawler: Crawler;
  index: PassageIndex;
  documents: Documents;
  attempts: ConnectAttempt[];
  since: number;
  verified(kind: 'domain' | 'host', name: string): Promise<string>;
}

async function rig(t: Test, opts: { perDay?: number; gapMs?: number } = {}): Promise<Rig> {
  // Own temp dir, removed with retries: once (CI, 2 cores) tap's fixture removal met a LanceDB file still being
  // renamed into passages.lance after every handle was closed (ENOTEMPTY).
  const dir = mkdtempSync(join(tmpdir(), 'svc-fast-lane-'));
  const config = loadConfig({
    env: {},
    flags: { dataDir: dir, resolve: web.pins, crawlAllowLoopback: true, crawlGapMs: opts.gapMs ?? 20 },
  });
  const db = openStateDb(join(dir, 'state.sqlite'));
  const repos = sqliteRepositories(db, { defaultGapMs: config.crawlGapMs });
  const index = await PassageIndex.open({ dir: join(dir, 'lance'), embedder: null });
  const documents = new Documents(db);
  const { fetcher, attempts } = testFetcher(web);
  const crawler = createCrawler({
    config,
    repos,
    sink: index,
    entities: new EntityStore(db),
    fetcher,
    maxCrawlDelayMs: 200,
    frontier: { retryBaseMs: 20, retryMaxMs: 100, maxAttempts: 3 },
    fetchTimeouts: { connectTimeoutMs: 2000, headersTimeoutMs: 2000, totalTimeoutMs: 5000 },
  });
  t.teardown(async () => {
    await crawler.stop();
    await index.close();
    db.close();
    rmSync(dir, { recursive: true, force: true, maxRetries: 10, retryDelay: 100 });
  });
  const own = new Ownership({ repo: repos.webmaster, checkers: noCheckers });
  const lane = new FastLane({ repo: repos.webmaster, frontier: repos.frontier, ownership: own, perDay: opts.perDay ?? 20 });
  const verified = async (kind: 'domain' | 'host', name: string): Promise<string> => {
    const { property } = await own.createProperty(ME, kind, name);
    const now = Date.now();
    const p = await repos.webmaster.addProof({
      propertyId: property.id,
      method: 'dns_txt',
      tokenHash: hashChallenge('x'),
      createdAt: new Date(now).toISOString(),
      expiresAt: new Date(now + 86_400_000).toISOString(),
    });
    await repos.webmaster.updateProof(p.id, { state: 'verified', verifiedAt: new Date(now).toISOString() });
    return property.id;
  };
  return { db, repos, lane, own, crawler, index, documents, attempts, since: web.accessLog.length, verified };
}

interface Row {
  id: number;
  state: string;
  priority: number;
  reason: string;
  attempts: number;
  last_status: number | null;
  last_outcome: string | null;
  dead_reason: string | null;
  next_at: number;
}
const row = (r: Rig, url: string) => r.db.prepare('SELECT * FROM frontier WHERE url = ?').get(url) as Row | undefined;
const fetched = (r: Rig, host: string, path?: string) =>
  web.accessLog.slice(r.since).filter((e) => e.host === host && (path === undefined || e.path === path));

t.test('issue 11: fast lane — verified owners only, within the property, idempotent, deduplicated, daily quota, priority', async (t) => {
  const r = await rig(t, { perDay: 3 });
  const id = await r.verified('host', 'alpha.test');
  const url = web.url('alpha.test', '/page-1.html');

  const first = await r.lane.submit(ME, id, url, 'key-1');
  t.match(first, { outcome: 'ok', url, remainingToday: 2 });
  t.match(row(r, url), { id: first.frontierId, state: 'queued', priority: FAST_LANE_PRIORITY, reason: FAST_LANE_REASON });
  t.ok(FAST_LANE_PRIORITY > PRIORITY.submitted, 'above URL requests, sitemaps and links');
  t.match(
    await r.lane.submit(ME, id, url, 'key-1'),
    { outcome: 'replayed', frontierId: first.frontierId, remainingToday: 2 },
    'same key: same answer, not counted',
  );
  t.match(
    await r.lane.submit(ME, id, url),
    { outcome: 'duplicate', frontierId: first.frontierId, remainingToday: 2 },
    'same URL today: not counted',
  );
  t.match(
    await r.lane.submit(ME, id, `${url}#frag`, 'key-2'),
    { outcome: 'duplicate', frontierId: first.frontierId },
    'normalised before dedup',
  );
  t.match(
    await r.lane.submit(ME, id, web.url('alpha.test', '/page-2.html'), 'key-1'),
    { outcome: 'conflict', frontierId: null },
    'a key names one URL',
  );
  t.match(await r.lane.submit(ME, id, web.url('alpha.test', '/page-2.html')), { outcome: 'ok', remainingToday: 1 });
  t.match(await r.lane.submit(ME, id, web.url('alpha.test', '/page-3.html')), { outcome: 'ok', remainingToday: 0 });
  t.match(await r.lane.submit(ME, id, web.url('alpha.test', '/json-ld.html')), {
    outcome: 'quota_exceeded',
    frontierId: null,
    remainingToday: 0,
  });
  t.equal(row(r, web.url('alpha.test', '/json-ld.html')), undefined, 'nothing queued past the quota');

  t.match(await r.lane.submit(ME, id, web.url('beta.test', '/landing.html')), { outcome: 'out_of_property', frontierId: null });
  t.match(await r.lane.submit(ME, id, 'ftp://alpha.test/x'), { outcome: 'invalid_url' });
  await t.rejects(r.lane.submit(STRANGER, id, url), { code: 'not_owner' });
  const { property: unverified } = await r.own.createProperty(ME, 'host', 'beta.test');
  t.match(await r.lane.submit(ME, unverified.id, web.url('beta.test', '/landing.html')), { outcome: 'not_verified', frontierId: null });
  t.equal(row(r, web.url('beta.test', '/landing.html')), undefined);

  // A domain property covers its subdomains (and only them).
  const dom = await r.verified('domain', 'gen-0.test');
  t.match(await r.lane.submit(ME, dom, web.url('gen-0.test', '/p/1.html')), { outcome: 'ok' });
  t.match(await r.lane.submit(ME, dom, web.url('alpha.test', '/p/1.html')), { outcome: 'out_of_property' });

  // Priority: among due items the fast-lane URL is claimed first.
  await r.repos.frontier.enqueue({
    url: web.url('alpha.test', '/images.html'),
    host: 'alpha.test',
    reason: 'link',
    priority: PRIORITY.discovered,
    at: 0,
  });
  const claimed = await r.repos.frontier.claim({ owner: 't', leaseMs: 1000 });
  t.equal(claimed?.priority, FAST_LANE_PRIORITY);
  await r.repos.frontier.release(claimed!);

  const audit = await r.repos.webmaster.auditLog(id);
  t.same(
    audit.filter((e) => e.event.startsWith('fast_lane')).map((e) => e.outcome),
    ['ok', 'replayed', 'duplicate', 'duplicate', 'conflict', 'ok', 'ok', 'quota_exceeded', 'out_of_property', 'invalid_url'],
    'every submission audited, without its URL',
  );
  t.equal(accountIdOf(ME).startsWith('acct_'), true);
});

t.test('issue 11: fast lane never bypasses robots.txt', async (t) => {
  const r = await rig(t);
  const id = await r.verified('host', 'alpha.test');
  const url = web.url('alpha.test', '/private/secret.html');
  t.match(await r.lane.submit(ME, id, url), { outcome: 'ok' });
  await r.crawler.runUntilIdle({ timeoutMs: 20_000, idleHorizonMs: 500 });
  t.same(fetched(r, 'alpha.test', '/private/secret.html'), [], 'the disallowed page was never requested');
  t.ok(fetched(r, 'alpha.test', '/robots.txt').length >= 1, 'robots.txt was read first');
  t.match(row(r, url), { state: 'done', last_outcome: /robots/ });
});

t.test('issue 11: fast lane never bypasses noindex', async (t) => {
  const r = await rig(t);
  const id = await r.verified('host', 'alpha.test');
  const url = web.url('alpha.test', '/meta/noindex.html');
  await r.lane.submit(ME, id, url);
  await r.crawler.runUntilIdle({ timeoutMs: 20_000, idleHorizonMs: 500 });
  t.equal(fetched(r, 'alpha.test', '/meta/noindex.html').length, 1, 'fetched once');
  const doc = await r.documents.byUrl(url);
  t.match(doc, { status: 'excluded', reason: /noindex/ });
  t.equal(doc ? await r.index.getPage(doc.pageRef) : null, null, 'not in the index');
});

t.test('issue 11: fast lane never bypasses removal (a gone URL stays out of the index)', async (t) => {
  const r = await rig(t);
  const id = await r.verified('host', 'alpha.test');
  const url = web.url('alpha.test', '/switchable.html');
  web.setPage('alpha.test', '/switchable.html', { status: 410 });
  t.teardown(() => web.setPage('alpha.test', '/switchable.html', null));
  await r.lane.submit(ME, id, url);
  await r.crawler.runUntilIdle({ timeoutMs: 20_000, idleHorizonMs: 500 });
  t.equal(fetched(r, 'alpha.test', '/switchable.html').length, 1, 'fetched once');
  t.match(row(r, url), { state: 'done', last_status: 410, last_outcome: /gone/ });
  const doc = await r.documents.byUrl(url);
  t.not(doc?.status, 'indexed');
  t.equal(doc ? await r.index.getPage(doc.pageRef) : null, null, 'not in the index');
});

t.test('issue 11: fast lane never bypasses politeness (the per-host gap holds between fast-lane URLs)', async (t) => {
  const gap = 150;
  const r = await rig(t, { gapMs: gap });
  const id = await r.verified('host', 'gen-0.test');
  for (let i = 0; i < 5; i++) t.match(await r.lane.submit(ME, id, web.url('gen-0.test', `/p/${i}.html`)), { outcome: 'ok' });
  await r.crawler.runUntilIdle({ timeoutMs: 20_000, idleHorizonMs: 500, maxPages: 5 });
  const hits = fetched(r, 'gen-0.test');
  t.ok(hits.length >= 6, `robots.txt and the five pages fetched (${hits.length})`);
  for (let i = 1; i < hits.length; i++)
    t.ok(hits[i]!.at - hits[i - 1]!.at >= gap - 5, `gap ${hits[i]!.at - hits[i - 1]!.at} ms ≥ ${gap} ms`);
});

t.test('issue 11: fast lane never bypasses DNS and redirect re-validation', async (t) => {
  const r = await rig(t);
  const trap = await r.verified('host', 'trap.test');
  const intranet = await r.verified('host', 'intranet.test');
  const toPrivate = web.url('trap.test', '/to-private');
  const privateName = `http://intranet.test:${web.port}/page.html`;
  t.match(await r.lane.submit(ME, trap, toPrivate), { outcome: 'ok' });
  t.match(await r.lane.submit(ME, intranet, privateName), { outcome: 'ok' });
  await r.crawler.runUntilIdle({ timeoutMs: 20_000, idleHorizonMs: 500 });
  t.same(
    r.attempts.filter((a) => a.address !== '127.0.0.1'),
    [],
    'no connection to 10.0.0.1 or 10.0.0.2 was attempted',
  );
  t.equal(fetched(r, 'trap.test', '/to-private').length, 1, 'the redirecting URL itself was fetched');
  t.match(row(r, toPrivate), { state: 'dead', dead_reason: /blocked_address/ });
  t.match(row(r, privateName), { state: 'dead', dead_reason: /blocked_address/ });
});

t.test('issue 11: fast lane never bypasses back-off (429 Retry-After) nor dead-lettering', async (t) => {
  const r = await rig(t);
  const trap = await r.verified('host', 'trap.test');
  const docs = await r.verified('host', 'docs.test');
  const slow = web.url('trap.test', '/429');
  const broken = web.url('docs.test', '/broken');
  const before = Date.now();
  await r.lane.submit(ME, trap, slow);
  await r.lane.submit(ME, docs, broken);
  await r.crawler.runUntilIdle({ timeoutMs: 20_000, idleHorizonMs: 1000 });
  const asks = fetched(r, 'trap.test', '/429');
  t.ok(asks.length >= 1);
  for (let i = 1; i < asks.length; i++)
    t.ok(asks[i]!.at - asks[i - 1]!.at >= 7000, `asked again only after Retry-After: 7 (${asks[i]!.at - asks[i - 1]!.at} ms)`);
  const s = row(r, slow);
  t.match(s, { state: 'retrying', last_status: 429 });
  t.ok(s!.next_at - before >= 7000, `next attempt no sooner than Retry-After (${s!.next_at - before} ms)`);
  t.equal(fetched(r, 'docs.test', '/broken').length, 3, 'three attempts (maxAttempts)');
  t.match(row(r, broken), { state: 'dead', attempts: 3 });
});

t.test('issue 11 item 4: a fast-lane submission of an already crawled URL makes it due again (once per counted submission)', async (t) => {
  const r = await rig(t);
  const id = await r.verified('host', 'alpha.test');
  const url = web.url('alpha.test', '/page-1.html');
  await r.crawler.enqueue(url, { priority: 'submitted', reason: 'seed' });
  await r.crawler.runUntilIdle({ timeoutMs: 20_000, idleHorizonMs: 500, maxPages: 1 });
  t.equal(fetched(r, 'alpha.test', '/page-1.html').length, 1, 'crawled once');
  const crawled = row(r, url)!;
  t.match(crawled, { state: 'done', priority: PRIORITY.recrawl });
  t.ok(crawled.next_at > Date.now() + 3600_000, 'its recrawl is far away');
  const before = Date.now();
  t.match(await r.lane.submit(ME, id, url), { outcome: 'ok', frontierId: crawled.id });
  const due = row(r, url)!;
  t.match(due, { state: 'queued', priority: FAST_LANE_PRIORITY, reason: FAST_LANE_REASON });
  t.ok(due.next_at <= Date.now() && due.next_at >= before, 'due now');
  await r.crawler.runUntilIdle({ timeoutMs: 20_000, idleHorizonMs: 500, maxPages: 1 });
  t.equal(fetched(r, 'alpha.test', '/page-1.html').length, 2, 'fetched again, through the same pipeline');
  t.match(row(r, url), { state: 'done', priority: PRIORITY.recrawl });
  // A same-day duplicate is not counted and does not make it due again.
  t.match(await r.lane.submit(ME, id, url), { outcome: 'duplicate' });
  t.match(row(r, url), { state: 'done' });
  t.ok(row(r, url)!.next_at > Date.now() + 3600_000, 'still waiting for its recrawl');
});
