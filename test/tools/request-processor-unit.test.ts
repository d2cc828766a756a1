/**
 * Request processor paths that the loopback test web cannot trigger on demand: postponed and failing removal
 * verifications, an interrupted removal, and one bad request not blocking the others. The crawler handle is the real
 * frontier (CrawlFrontier on the SQLite repositories) with a scripted processNow (unit test only; the end-to-end
 * test uses the real crawler).
 */
import t, { type Test } from 'tap';
import { join } from 'node:path';
import { openStateDb } from '../../state/db.js';
import { Documents } from '../../state/documents.js';
import { RequestStore } from '../../state/requests.js';
import { sqliteRepositories } from '../../state/repos/sqlite.js';
import { CrawlFrontier } from '../../crawler/crawl-frontier.js';
import { RequestProcessor, MAX_REMOVAL_ATTEMPTS, outcomeFromCrawl, type ProcessNowResult } from '../../tools/request-processor.js';

function setup(t: Test, script: (url: string) => ProcessNowResult | Promise<ProcessNowResult>) {
  const db = openStateDb(join(t.testdir(), 'state.sqlite'));
  t.teardown(() => db.close());
  let clock = Date.parse('2026-07-01T00:00:00.000Z');
  const now = () => clock;
  const requests = new RequestStore(db, { perDay: 100, now: () => new Date(clock) });
  const documents = new Documents(db);
  const repos = sqliteRepositories(db);
  const frontier = new CrawlFrontier(repos.frontier, { now });
  const calls: string[] = [];
  const crawler = {
    frontier,
    processNow: async (url: string) => {
      calls.push(url);
      return script(url);
    },
  };
  const processor = new RequestProcessor({ requests: repos.requests, documents, crawler, now, staleMs: 60_000 });
  return { requests, processor, frontier, calls, advance: (ms: number) => (clock += ms) };
}

const removal = (url: string) => ({ type: 'removal', url, host: new URL(url).hostname });

t.test('a host asking to wait postpones the removal; after the attempts it fails with the reason', async (t) => {
  const s = setup(t, () => ({ status: 429, outcome: 'retry:http_429', noindex: false }));
  const { request } = s.requests.submit('k', removal('https://www.example.ca/x'));
  for (let i = 0; i < MAX_REMOVAL_ATTEMPTS + 2; i++) await s.processor.tick();
  const r = s.requests.get(request.id)!;
  t.equal(s.calls.length, MAX_REMOVAL_ATTEMPTS, 'one verification fetch per attempt');
  t.equal(r.status, 'failed');
  t.match(r.reason, /retry:http_429/);
  t.same(
    r.history.map((h) => h.status),
    ['received', 'in_progress', 'queued', 'in_progress', 'queued', 'in_progress', 'failed'],
  );
});

t.test('noindex and 404 remove; robots refusal and other statuses reject; a thrown fetch fails', async (t) => {
  const results: Record<string, ProcessNowResult | Error> = {
    'https://www.example.ca/noindex': { status: 200, outcome: 'excluded:noindex', noindex: true },
    'https://www.example.ca/404': { status: 404, outcome: 'gone', noindex: false },
    'https://www.example.ca/robots': { status: null, outcome: 'excluded:robots', noindex: false },
    'https://www.example.ca/403': { status: 403, outcome: 'excluded:http_403', noindex: false },
    'https://www.example.ca/boom': new Error('socket hang up'),
  };
  const s = setup(t, (url) => {
    const r = results[url]!;
    if (r instanceof Error) throw r;
    return r;
  });
  const ids = Object.keys(results).map((u) => [u, s.requests.submit('k', removal(u)).request.id] as const);
  await s.processor.tick();
  const got = Object.fromEntries(ids.map(([u, id]) => [u, [s.requests.get(id)!.status, s.requests.get(id)!.outcome]]));
  t.same(got, {
    'https://www.example.ca/noindex': ['completed', 'removed'],
    'https://www.example.ca/404': ['completed', 'removed'],
    'https://www.example.ca/robots': ['completed', 'rejected'],
    'https://www.example.ca/403': ['completed', 'rejected'],
    'https://www.example.ca/boom': ['failed', null],
  });
});

t.test('an interrupted removal (stuck in_progress) is queued again after staleMs and verified', async (t) => {
  const s = setup(t, () => ({ status: 410, outcome: 'gone', noindex: false }));
  const { request } = s.requests.submit('k', removal('https://www.example.ca/gone'));
  s.requests.transition(request.id, 'in_progress'); // as if the process died during the fetch
  await s.processor.tick();
  t.equal(s.requests.get(request.id)?.status, 'in_progress', 'not stale yet');
  s.advance(61_000);
  await s.processor.tick();
  t.equal(s.requests.get(request.id)?.status, 'queued');
  await s.processor.tick();
  t.equal(s.requests.get(request.id)?.outcome, 'removed');
});

t.test('one request that cannot move does not block the others', async (t) => {
  let other: (() => void) | null = null;
  const s = setup(t, () => {
    other?.(); // another process finishes request y while we verify x
    other = null;
    return { status: 410, outcome: 'gone', noindex: false };
  });
  const x = s.requests.submit('k', removal('https://www.example.ca/x')).request.id;
  const y = s.requests.submit('k', removal('https://www.example.ca/y')).request.id;
  const z = s.requests.submit('k', removal('https://www.example.ca/z')).request.id;
  other = () => s.requests.transition(y, 'completed', { outcome: 'rejected', reason: 'handled elsewhere' });
  await s.processor.tick(); // y was listed as received, but its transition to in_progress is now refused
  t.equal(s.requests.get(x)?.outcome, 'removed');
  t.equal(s.requests.get(y)?.reason, 'handled elsewhere', 'left as the other process set it');
  t.equal(s.requests.get(z)?.outcome, 'removed', 'the next request was still processed');
});

t.test('a crawl attempt that backs off sends the request back to queued; a dead letter fails it', async (t) => {
  const s = setup(t, () => ({ status: 200, outcome: 'indexed', noindex: false }));
  const url = 'https://www.example.ca/flaky';
  const { request } = s.requests.submit('k', { type: 'recrawl', url, host: 'www.example.ca' });
  await s.processor.tick();
  t.equal(s.requests.get(request.id)?.status, 'queued');
  const item = (await s.frontier.claimUrl(url))!;
  await s.processor.tick();
  t.equal(s.requests.get(request.id)?.status, 'in_progress', 'leased by a worker');
  await s.frontier.fail(item, { error: 'connect', retryable: true });
  await s.processor.tick();
  t.equal(s.requests.get(request.id)?.status, 'queued', 'backing off');
  s.advance(24 * 3600_000);
  const again = (await s.frontier.claimUrl(url))!;
  await s.frontier.fail(again, { error: 'blocked_address', retryable: false });
  await s.processor.tick();
  const r = s.requests.get(request.id)!;
  t.equal(r.status, 'failed');
  t.match(r.reason, /gave up/);
});

t.test('outcome mapping from the frontier and the registry', async (t) => {
  const q = '2026-07-01T00:00:00.000Z';
  t.same(outcomeFromCrawl({ lastOutcome: 'excluded:robots', lastStatus: null }, undefined, q).outcome, 'excluded_by_robots');
  t.same(outcomeFromCrawl({ lastOutcome: 'excluded:unavailable_after', lastStatus: 200 }, undefined, q).outcome, 'excluded_by_noindex');
  t.same(outcomeFromCrawl({ lastOutcome: 'gone', lastStatus: 410 }, undefined, q).outcome, 'not_found');
  t.same(outcomeFromCrawl({ lastOutcome: 'redirected', lastStatus: 301 }, undefined, q).outcome, 'rejected');
  const doc = {
    pageRef: 1,
    url: 'u',
    host: 'h',
    title: '',
    contentHash: 'x',
    firstSeen: '2026-06-01T00:00:00.000Z',
    lastChanged: '2026-07-01T00:00:05.000Z',
    lastFetched: '2026-07-01T00:00:05.000Z',
    status: 'indexed' as const,
    reason: null,
  };
  t.same(outcomeFromCrawl({ lastOutcome: 'indexed', lastStatus: 200 }, doc, q).outcome, 'updated');
  t.same(
    outcomeFromCrawl({ lastOutcome: 'indexed', lastStatus: 200 }, { ...doc, firstSeen: '2026-07-01T00:00:05.000Z' }, q).outcome,
    'indexed',
  );
  t.same(
    outcomeFromCrawl({ lastOutcome: 'unchanged', lastStatus: 304 }, { ...doc, lastChanged: '2026-06-01T00:00:00.000Z' }, q).outcome,
    'unchanged',
  );
});
