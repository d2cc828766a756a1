/**
 * An `api` replica over searcher processes, through the real services on loopback (issue 43, items 3 and 5): one
 * writer (role all) holds a 3-shard index; two searchers (role searcher) serve shards {0,1} and {1,2} of it on their
 * internal route; an api replica (SVC_SHARD_SOURCE=searchers) asks them. Its svc_search and svc_context answer as the
 * writer does; svc_page and svc_site read through them; the fleet secret opens only the internal route and an API key
 * never does; a searcher gone gives `partial_results` with coverage 2/3 (never a 5xx), /readyz and /metrics show the
 * coverage, and once it is back the answers are whole again.
 */
import t, { type Test } from 'tap';
import { makePage } from '../helpers/page-input.js';
import { api, startTestService, type TestService } from '../helpers/service.js';
import type { ServiceOptions } from '../../main.js';
import type { ConfigInput } from '../../config.js';

const NOW = new Date('2026-11-21T00:00:00Z');
const SECRET = 'fleet-secret-for-tests-0123456789';
const TEXTS = [
  'Adult passport fees and payment options for a ten-year passport.',
  'Renew a driver licence online, by mail or at a ServiceOntario centre.',
  'Current wildfire status, evacuation orders and air quality advisories.',
  'Passport photos: size, background and who may sign the guarantor declaration.',
];
const HOSTS = ['www.canada.ca', 'www.ontario.ca', 'www.gov.bc.ca'];

/** A REST body without what differs by design: timings, request ids, and the shard coverage only a replica over searchers reports. */
const answer = (body: unknown) =>
  JSON.stringify(body, (k, v: unknown) => {
    if (k === 'took_ms' || k === 'request_id') return undefined;
    if (k === 'coverage' && v && typeof v === 'object') {
      const { shards: _shards, ...rest } = v as Record<string, unknown>;
      return Object.keys(rest).length > 0 ? rest : undefined;
    }
    return v;
  });

async function start(t: Test, config: Partial<ConfigInput>, opts: Omit<ServiceOptions, 'log'> = {}): Promise<TestService> {
  const s = await startTestService({ perMinute: 10_000, now: () => NOW, embedder: null, config, ...opts });
  t.teardown(() => s.close());
  return s;
}

t.test('an api replica over two searchers answers as the writer; partial without one of them; whole once it is back', async (t) => {
  const indexUri = t.testdir();
  const writer = await start(t, { indexShards: 3, indexUri });
  const pages = [];
  for (let i = 0; i < 18; i++) {
    const host = HOSTS[i % HOSTS.length]!;
    const url = `https://${host}/page-${i}`;
    const ref = await writer.services.deps.repos.documents.allocate(url, host);
    pages.push(
      makePage(ref, host, [TEXTS[i % TEXTS.length]!, `${TEXTS[(i + 1) % TEXTS.length]} Section ${i}.`], {
        url,
        title: `Page ${i}`,
        ...(i === 3 || i === 6 ? { contentHash: 'hash-copy' } : {}),
      }),
    );
  }
  await writer.services.deps.index.upsertPages(pages);

  const searcherConfig = { indexUri, fleetSecret: SECRET, indexReadConsistencyS: 0 };
  const a = await start(t, searcherConfig, { role: 'searcher', shards: [0, 1] });
  let b = await start(t, searcherConfig, { role: 'searcher', shards: [1, 2] });
  const replica = await start(
    t,
    { indexUri, fleetSecret: SECRET, shardSource: 'searchers', searcherHeartbeatMs: 100, shardDeadlineMs: 5000 },
    { role: 'api' },
  );
  // The searchers' heartbeats, as `svc serve` sends them (these services were not started by it: the test beats).
  const registry = replica.services.deps.repos.searchers;
  const beat = (id: string, s: TestService, shards: number[]) =>
    registry.heartbeat({ id, url: s.url, shards, shardCount: 3, index: indexUri });
  await beat('a', a, [0, 1]);
  await beat('b', b, [1, 2]);
  const readyShards = async () => ((await api(replica, '/readyz')).body as { checks: Record<string, string> }).checks.shards;
  for (let i = 0; i < 100 && !(await readyShards())?.startsWith('3/3'); i++) await new Promise((r) => setTimeout(r, 50));
  t.match(await readyShards(), /^3\/3 shards have a live searcher \(per shard: 1,2,1\)/);

  // Whole: the writer's own answers.
  const q = '/api/v1/search?q=passport%20photos&limit=10';
  const want = await api(writer, q);
  t.equal(want.status, 200);
  const got = await api(replica, q);
  t.equal(got.status, 200);
  t.equal(answer(got.body), answer(want.body), 'svc_search: the same results and scores as the writer');
  t.notOk((want.body as { coverage?: unknown }).coverage, 'shards in one process report no coverage');
  t.match(got.body, { coverage: { shards: { answered: 3, total: 3 } } });
  t.ok((got.body as { results: unknown[] }).results.length > 0);
  // A query of more than 31 probe terms: each candidate's term presence crosses the wire as bytes, not a bit mask.
  const fillers = Array.from(
    { length: 36 },
    (_, i) => `fq${String.fromCharCode(97 + (i % 26))}${String.fromCharCode(97 + Math.floor(i / 26))}x`,
  );
  const long = `/api/v1/search?q=${encodeURIComponent(['passport', 'photos', 'guarantor', ...fillers].join(' '))}&limit=10`;
  const longWant = await api(writer, long);
  t.equal(longWant.status, 200);
  t.ok((longWant.body as { results: unknown[] }).results.length > 0, 'the long query finds the passport pages');
  const longGot = await api(replica, long);
  t.equal(longGot.status, 200, 'a long query over searchers is answered (never a 500)');
  t.equal(answer(longGot.body), answer(longWant.body), 'a long query: the same results and scores as the writer');
  const ctxBody = { query: 'passport fees', max_tokens: 800 };
  const ctxWant = await api(writer, '/api/v1/context', { method: 'POST', json: ctxBody });
  const ctxGot = await api(replica, '/api/v1/context', { method: 'POST', json: ctxBody });
  t.equal(answer(ctxGot.body), answer(ctxWant.body), 'svc_context: the same passages');
  const page = await api(replica, `/api/v1/passages?page_ref=${pages[5]!.pageRef}`);
  t.equal(page.status, 200, 'svc_page reads the page from the shard that holds it');
  t.equal((page.body as { url?: string; page?: { url: string } }).page?.url ?? (page.body as { url?: string }).url, pages[5]!.url);

  t.equal(await writer.services.deps.index.nearCopyCount('www.canada.ca'), 1, 'pages 3 and 6: one near-copy');
  for (const host of HOSTS)
    t.equal(
      await replica.services.deps.index.nearCopyCount(host),
      await writer.services.deps.index.nearCopyCount(host),
      `svc_site's near-copy count of ${host} over the searchers`,
    );

  // The internal route: the secret opens it, an API key never; the secret is no API key.
  const internal = (s: TestService, auth: string) =>
    fetch(`${s.url}/internal/v1/shard/0/status`, {
      method: 'POST',
      headers: { authorization: auth, 'content-type': 'application/json' },
      body: '{}',
    });
  t.equal((await internal(a, `Bearer ${SECRET}`)).status, 200, 'a searcher answers the fleet secret');
  t.equal((await internal(a, `Bearer ${a.key}`)).status, 401, "an API key (the searcher's own) is refused there");
  t.equal((await internal(replica, `Bearer ${SECRET}`)).status, 404, 'an api replica has no internal route');
  t.equal((await api(replica, q, { auth: `Bearer ${SECRET}` })).status, 401, 'the secret is not an API key');
  t.equal((await api(a, q)).status, 404, 'a searcher serves no tool');

  // Searcher b stops (its entry still fresh): shard 2 has no searcher that answers.
  await b.close();
  const partial = await api(replica, q);
  t.equal(partial.status, 200, 'never a 5xx');
  t.match(partial.body, { coverage: { shards: { answered: 2, total: 3 } }, warnings: [{ code: 'partial_results' }] });
  const ctxPartial = await api(replica, '/api/v1/context', { method: 'POST', json: ctxBody });
  t.equal(ctxPartial.status, 200);
  t.match(ctxPartial.body, { coverage: { shards: { answered: 2, total: 3 } }, warnings: [{ code: 'partial_results' }] });
  let errors = 0;
  for (let i = 0; i < 10; i++) if ((await api(replica, `/api/v1/search?q=passport%20${i}`)).status !== 200) errors++;
  t.equal(errors, 0, 'a burst of queries: no errors');
  // Its entry expires: /readyz and /metrics say so, and the replica stays ready (partial answers are answers).
  await registry.remove('b');
  for (let i = 0; i < 100 && !(await readyShards())?.startsWith('2/3'); i++) await new Promise((r) => setTimeout(r, 50));
  const ready = await api(replica, '/readyz');
  t.equal(ready.status, 200);
  t.match((ready.body as { checks: Record<string, string> }).checks.shards, /^2\/3 shards have a live searcher \(per shard: 1,1,0\)/);
  const metrics = (await api(replica, '/metrics')).text;
  t.match(metrics, /^svc_shards_covered 2$/m);
  t.match(metrics, /^svc_shard_live_searchers\{shard="2"\} 0$/m);

  // Back (a new process, a new address): whole again.
  b = await start(t, searcherConfig, { role: 'searcher', shards: [1, 2] });
  await beat('b', b, [1, 2]);
  for (let i = 0; i < 100 && !(await readyShards())?.startsWith('3/3'); i++) await new Promise((r) => setTimeout(r, 50));
  const back = await api(replica, q);
  t.equal(answer(back.body), answer(want.body), 'whole answers again');
});

t.test('without SVC_FLEET_SECRET a searcher has no internal route at all', async (t) => {
  const indexUri = t.testdir();
  const writer = await start(t, { indexShards: 2, indexUri });
  await writer.services.deps.index.upsertPages([makePage(1, 'www.canada.ca', ['passport fees'])]);
  const s = await start(t, { indexUri, indexReadConsistencyS: 0 }, { role: 'searcher' });
  const res = await fetch(`${s.url}/internal/v1/shard/0/status`, {
    method: 'POST',
    headers: { authorization: 'Bearer anything-at-all-here', 'content-type': 'application/json' },
    body: '{}',
  });
  t.equal(res.status, 404);
  t.match(await api(s, '/readyz'), { status: 200, body: { checks: { shards_served: '0,1 of 2', role: 'searcher' } } });
});

t.test('a searcher refuses --shards outside the index', async (t) => {
  const indexUri = t.testdir();
  const writer = await start(t, { indexShards: 2, indexUri });
  await writer.services.deps.index.upsertPages([makePage(1, 'www.canada.ca', ['passport fees'])]);
  await t.rejects(startTestService({ embedder: null, config: { indexUri }, role: 'searcher', shards: [1, 2] }), {
    name: 'ShardListError',
    message: /--shards 2: the index has 2 shards \(0-1\)/,
  });
});
