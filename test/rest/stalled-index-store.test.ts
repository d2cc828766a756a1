/**
 * Issue 46 item 1, the index on object storage: with the S3-compatible store stalled (SeaweedFS stopped with SIGSTOP:
 * connections stay open, nothing answers), every request that reads the index — svc_search, svc_context, svc_page
 * on REST and svc_search on MCP — answers 503 `unavailable` with Retry-After at the index read deadline instead of
 * waiting for the store, /readyz says not ready and /metrics says svc_state_up 0 by then; after SIGCONT the same
 * process answers 200 again, search threads included.
 */
import t from 'tap';
import { makePage } from '../helpers/page-input.js';
import { seaweedfsUnavailable, startSeaweedfs, type SeaweedfsServer } from '../helpers/seaweedfs-server.js';
import { api, startTestService, type TestService } from '../helpers/service.js';
import { waitFor } from '../helpers/wait-for.js';

/** A short deadline so the test is quick; the default (tools/index-deadline.ts) is what an operator gets. */
const DEADLINE_MS = 1000;
/** Far above the deadline and below the store client's own timeouts and retries: an answer later than this is a hang. */
const HANG_MS = 20_000;

const mcpHeaders = { accept: 'application/json, text/event-stream' };
const searchCall = (id: number, q: string) => ({
  jsonrpc: '2.0',
  id,
  method: 'tools/call',
  params: { name: 'svc_search', arguments: { q } },
});
type McpAnswer = { result?: { isError?: boolean; content: { text: string }[]; structuredContent?: { results: unknown[] } } };

const skip = seaweedfsUnavailable();
if (skip) t.plan(0, skip);
else {
  const s3: SeaweedfsServer = await startSeaweedfs();
  t.teardown(() => s3.stop());
  let frozen = false;
  const freeze = () => {
    process.kill(s3.pid, 'SIGSTOP');
    frozen = true;
  };
  const thaw = () => {
    if (frozen) process.kill(s3.pid, 'SIGCONT');
    frozen = false;
  };
  // A failed assertion must not leave the store stopped for the next test or the teardown.
  t.afterEach(thaw);

  const start = async (prefix: string, searchThreads: number, indexReadConsistencyS: number): Promise<TestService> => {
    const s = await startTestService({
      config: {
        indexUri: `s3://${s3.bucket}/${prefix}`,
        s3Endpoint: s3.endpoint,
        s3AccessKeyId: s3.accessKeyId,
        s3SecretAccessKey: s3.secretAccessKey,
        indexReadConsistencyS,
        indexReadTimeoutMs: DEADLINE_MS,
        searchThreads,
        // Nothing served from memory that the store would otherwise be asked for: result rows come from the bucket.
        rowCacheMb: 0,
        snippetMb: 0,
      },
    });
    await s.services.deps.index.upsertPages([
      makePage(1, 'www.canada.ca', ['Passport renewal by mail for adults']),
      makePage(2, 'www.ontario.ca', ['Driver licence renewal in Ontario']),
    ]);
    if (searchThreads > 0) t.ok(await s.services.searchPool?.whenReady(60_000), 'the search threads opened the index');
    return s;
  };

  const routes: { name: string; path: string; init?: { method: string; json: unknown } }[] = [
    { name: 'GET /search', path: '/api/v1/search?q=renewal' },
    { name: 'POST /context', path: '/api/v1/context', init: { method: 'POST', json: { query: 'renewal' } } },
    { name: 'GET /passages', path: '/api/v1/passages?page_ref=1' },
  ];
  const call = (s: TestService, r: (typeof routes)[number]) => api(s, r.path, { ...r.init, signal: AbortSignal.timeout(HANG_MS) });
  const mcp = (s: TestService, id: number, q: string) =>
    api(s, '/mcp', { method: 'POST', headers: mcpHeaders, json: searchCall(id, q), signal: AbortSignal.timeout(HANG_MS) });

  t.test(
    'issue 46: the index store stalled → search, context, passages, MCP svc_search and /readyz answer 503; 200 after SIGCONT',
    async (t) => {
      // Every read looks at the store (no version served from a cache), so the stall is met at once.
      const s = await start('inline', 0, 0);
      t.teardown(s.close);
      for (const r of routes) t.equal((await call(s, r)).status, 200, `${r.name} answers before the stall`);

      freeze();
      for (const r of routes) {
        const res = await call(s, r);
        t.equal(res.status, 503, `${r.name}: 503 while the store is stalled`);
        t.equal(res.headers.get('retry-after'), '5', `${r.name}: Retry-After`);
        t.equal(res.headers.get('content-type'), 'application/problem+json');
        t.match(res.body, { code: 'unavailable', status: 503, retry_after: 5 });
      }
      const stalled = await mcp(s, 1, 'renewal');
      t.equal(stalled.status, 200, 'MCP answers the call (the key is checked in the state database, which is up)');
      const result = (stalled.body as McpAnswer).result;
      t.equal(result?.isError, true, 'MCP svc_search: an isError result');
      t.match(JSON.parse(result?.content[0]?.text ?? '{}'), { code: 'unavailable', status: 503, retry_after: 5 });
      const ready = await api(s, '/readyz', { auth: null, signal: AbortSignal.timeout(HANG_MS) });
      t.equal(ready.status, 503, '/readyz: not ready while the store is stalled');
      t.match(ready.body, { checks: { index: 'unavailable' } });
      const metrics = await api(s, '/metrics', { auth: null, signal: AbortSignal.timeout(HANG_MS) });
      t.equal(metrics.status, 200, '/metrics still answers');
      t.match(metrics.text, /^svc_state_up 0$/m, '/metrics: the index could not be read');
      t.equal((await api(s, '/healthz', { auth: null, signal: AbortSignal.timeout(HANG_MS) })).status, 200, 'the process is alive');

      thaw();
      for (const r of routes) t.equal((await call(s, r)).status, 200, `${r.name} answers again`);
      const back = await mcp(s, 2, 'passport');
      t.notOk((back.body as McpAnswer).result?.isError, 'MCP svc_search answers again');
      t.equal((back.body as McpAnswer).result?.structuredContent?.results.length, 1);
      t.equal((await api(s, '/readyz', { auth: null })).status, 200, 'ready again');
      t.match((await api(s, '/metrics', { auth: null })).text, /^svc_state_up 1$/m, '/metrics reads the index again');
    },
  );

  t.test('issue 46: with search threads, more requests than the threads hold all get 503 during a stall; the pool recovers', async (t) => {
    // The HTTP thread may serve the version it read last for a moment (an interval above 0): requests sent right after
    // an answer then pass it to a search thread, whose read of the rows meets the stall there.
    const s = await start('threads', 2, 60);
    t.teardown(s.close);
    const pool = s.services.searchPool!;
    t.equal((await call(s, routes[0]!)).status, 200, 'a search thread answers before the stall');

    freeze();
    // More than every thread's room (SEARCH_THREAD_ROOM each): some wait in line for a thread, and give up there too.
    const burst = await Promise.all(
      Array.from({ length: 12 }, (_, i) => (i % 2 === 0 ? call(s, routes[i % 4 === 0 ? 0 : 1]!) : mcp(s, 10 + i, 'renewal'))),
    );
    burst.forEach((res, i) => {
      if (i % 2 === 0) {
        t.equal(res.status, 503, `REST request ${i}: 503`);
        t.equal(res.headers.get('retry-after'), '5');
        t.match(res.body, { code: 'unavailable' });
      } else {
        const result = (res.body as McpAnswer).result;
        t.equal(result?.isError, true, `MCP request ${i}: isError`);
        t.match(JSON.parse(result?.content[0]?.text ?? '{}'), { code: 'unavailable' });
      }
    });
    t.equal(pool.queued, 0, 'no request given up on is left waiting for a thread');
    t.comment(`requests still held by the search threads: ${pool.inFlight.join(', ')}`);

    thaw();
    // Reads left waiting on the store finish once it answers: every thread's room is free again, nothing restarted.
    await waitFor('the search threads to finish the reads given up on', () => pool.inFlight.every((n) => n === 0), HANG_MS);
    t.equal(pool.ready, 2, 'both threads still in service');
    for (const r of routes) t.equal((await call(s, r)).status, 200, `${r.name} answers again`);
    const back = await mcp(s, 99, 'passport');
    t.equal((back.body as McpAnswer).result?.structuredContent?.results.length, 1, 'MCP svc_search answers again');
  });
}
