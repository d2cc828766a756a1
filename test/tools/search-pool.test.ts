import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import t from 'tap';
import { join } from 'node:path';
import { createHashingEmbedder, type Embedder } from '../../index/serving/embedder.js';
import { PassageIndex } from '../../index/engines/lance/store.js';
import { defaultSearchThreads } from '../../main.js';
import { SEARCH_THREAD_ROOM } from '../../tools/search-pool.js';
import { callTool } from '../../tools/call-tool.js';
import { inlineExecutor } from '../../tools/executor.js';
import { searchTool } from '../../tools/search.js';
import { makePage } from '../helpers/page-input.js';
import { NOW, poolService as service, restSearch, TOPICS } from '../helpers/search-pool-service.js';
import { api, startTestService } from '../helpers/service.js';

/**
 * Search threads (tools/search-pool.ts, issue 14 item 3): svc_search and svc_context run on worker threads with their
 * own readers of the index. What a caller receives must not depend on which thread answered, and a page written just
 * before a request is in its answer.
 */

const caller = { keyId: 'test', digest: '0'.repeat(64) };

t.test('the pool answers as the HTTP thread would, over REST and MCP, from every thread', async (t) => {
  const s = await service(t, 2);
  const pool = s.services.searchPool!;
  t.equal(pool.size, 2);
  t.equal(pool.ready, 2);
  await pool.textEngineReady(s.services.deps.index);
  // Inline: svc_search's own handler on this thread, over a reader of the same index with its own postings (the
  // HTTP thread's index keeps none when threads answer): what one thread serving everything would answer.
  const reader = await PassageIndex.open({ dir: join(s.dataDir, 'lance'), embedder: s.services.deps.index.embedder, writes: false });
  t.teardown(() => reader.close());
  await reader.textEngineReady();
  const here = (q: string) =>
    callTool(searchTool, { q, detail: 'full' }, { deps: { ...s.services.deps, index: reader, executor: inlineExecutor }, caller });
  const client = new Client({ name: 'pool', version: '1' });
  await client.connect(
    new StreamableHTTPClientTransport(new URL(s.url + '/mcp'), { requestInit: { headers: { Authorization: `Bearer ${s.key}` } } }),
  );
  t.teardown(() => client.close());
  for (const q of ['passport fees', 'bibliothèque Gabrielle-Roy', 'wildfire evacuation', 'renew licence OR card']) {
    const expected = await here(q);
    t.ok(expected.results.length > 0, `${q}: found on the HTTP thread`);
    // Ten at once: both threads answer some of them (ties go to each in turn).
    const answers = await Promise.all(Array.from({ length: 10 }, () => restSearch(s, q)));
    for (const a of answers) {
      t.equal(a.status, 200);
      t.same(a.body, JSON.parse(JSON.stringify(expected)), `${q}: REST through the pool equals the handler on the HTTP thread`);
    }
    const m = await client.callTool({ name: 'svc_search', arguments: { q, detail: 'full' } });
    t.same(m.structuredContent, answers[0]!.body, `${q}: MCP through the pool equals REST`);
  }
  const ctx = await api(s, '/api/v1/context', { method: 'POST', json: { query: 'passport fees', max_tokens: 500 } });
  t.equal(ctx.status, 200);
  const body = ctx.body as { context: { source: string; content_trust: string }[]; tokens_estimated: number };
  t.equal(body.context[0]?.source, 'https://www.canada.ca/page-1', 'svc_context runs on the pool too');
  t.ok(body.context.every((c) => c.content_trust === 'untrusted_web_content'));
  t.ok(body.tokens_estimated <= 500);

  const bad = await api(s, '/api/v1/search?q=&limit=99');
  t.equal(bad.status, 422, 'input is still checked on the HTTP thread');
  t.equal((bad.body as { code: string }).code, 'validation_failed');

  const threadLines = s.logLines
    .map((l) => JSON.parse(l) as { part?: string; msg?: string; thread?: number })
    .filter((l) => l.part === 'search-thread');
  t.ok(
    threadLines.some((l) => l.msg === 'text postings loaded from an engine image' && typeof l.thread === 'number'),
    "a thread's log lines reach the service's logger",
  );
  const metrics = await (await fetch(s.url + '/metrics')).text();
  t.match(metrics, /^svc_search_threads 2$/m, '/metrics: threads ready');
  t.match(metrics, /^svc_text_postings_passages\{thread="0"\} 5$/m, "/metrics: each thread's postings");
  t.match(metrics, /^svc_text_postings_passages\{thread="1"\} 5$/m);
  t.match(metrics, /^svc_search_thread_snippet_passages\{thread="0"\} 5$/m, "/metrics: each thread's snippet store");
  t.match(metrics, /^svc_search_thread_snippet_passages\{thread="1"\} 5$/m);
  t.match(metrics, /^svc_search_thread_snippet_bytes\{thread="0"\} [1-9]\d*$/m);
  for (const slot of ['0', '1']) {
    const heap = Number(new RegExp(`^svc_search_thread_heap_bytes\\{thread="${slot}"\\} (\\d+)$`, 'm').exec(metrics)?.[1]);
    t.ok(heap > 1e6 && heap < 2 ** 31, `/metrics: thread ${slot}'s own JS heap (${heap} bytes)`);
  }
  t.match(metrics, /^svc_search_thread_heap_after_major_gc_bytes\{thread="0"\} \d+$/m);
  // One build in the process, shared: the owner scanned the table once, each thread loaded its image (no scan of its
  // own) and reads it from shared memory (the owner's newest after a compaction; test/tools/search-pool-shared-engine.test.ts
  // checks the very bytes on an index nothing writes to).
  const sample = (name: string, thread: string) => Number(new RegExp(`^${name}\\{thread="${thread}"\\} (\\d+)$`, 'm').exec(metrics)?.[1]);
  t.equal(sample('svc_text_engine_builds', 'owner'), 1, '/metrics: the owner built the postings once');
  for (const slot of ['0', '1']) {
    t.equal(sample('svc_text_engine_builds', slot), 0, `/metrics: thread ${slot} built none`);
    t.ok(sample('svc_text_engine_loads', slot) >= 1, `/metrics: thread ${slot} loaded the owner's image`);
    t.ok(sample('svc_text_engine_shared_bytes', slot) > 0, `/metrics: thread ${slot} reads a shared image`);
  }
  t.ok(sample('svc_text_engine_shared_bytes', 'owner') > 0, '/metrics: the shared image has bytes');
});

t.test('a thread holds a few requests at most; the others wait for the first thread with room, in arrival order', async (t) => {
  const s = await service(t, 2);
  const pool = s.services.searchPool!;
  await pool.textEngineReady(s.services.deps.index);
  // The services' own call path: callTool hands svc_search to their executor, the pool.
  t.equal(s.services.deps.executor, pool);
  const ctx = { deps: s.services.deps, caller };
  const order: number[] = [];
  let done = false;
  const calls = Array.from({ length: 30 }, (_, i) =>
    callTool(searchTool, { q: TOPICS[i % TOPICS.length]![1] }, ctx).then((out) => {
      order.push(i);
      return out;
    }),
  );
  const all = Promise.all(calls).finally(() => (done = true));
  // Watched between turns of the loop while the requests are answered.
  let mostQueued = 0;
  let mostOnAThread = 0;
  while (!done) {
    mostQueued = Math.max(mostQueued, pool.queued);
    mostOnAThread = Math.max(mostOnAThread, ...pool.inFlight);
    await new Promise((r) => setImmediate(r));
  }
  const outs = await all;
  t.ok(
    outs.every((o) => (o as { results: unknown[] }).results.length > 0),
    'every request answered, with results',
  );
  t.equal(mostOnAThread, SEARCH_THREAD_ROOM, `at most ${SEARCH_THREAD_ROOM} on a thread at once`);
  t.ok(mostQueued >= 30 - 2 * SEARCH_THREAD_ROOM - 2, `the others waited for room (${mostQueued} at once)`);
  // First come, first served: when request i leaves the line every earlier one has, and at most 2 × room − 1 of those
  // are still unanswered, so it is never answered more than that many places ahead of its arrival (handed out
  // last-come-first, request 29 would be among the first answered).
  t.ok(
    order.every((i, at) => at >= i - (2 * SEARCH_THREAD_ROOM - 1)),
    `the waiting requests were handed out in arrival order (answered in the order ${order.join(' ')})`,
  );
  t.same([pool.queued, ...pool.inFlight], [0, 0, 0], 'nothing left waiting or in flight');
});

t.test('a page written just before a request is in its answer, on every thread; site: knows its new host', async (t) => {
  const s = await service(t, 2);
  const index = s.services.deps.index;
  for (let i = 0; i < 4; i++) {
    const host = `new-${i}.example.ca`;
    const word = `zorblax${'q'.repeat(i + 1)}`;
    await index.upsertPage(makePage(100 + i, host, [`The ${word} festival opens this weekend.`], { title: `${word} festival` }));
    // Several at once, so that both threads are asked right after the write.
    const answers = await Promise.all([
      restSearch(s, word),
      restSearch(s, word),
      restSearch(s, `festival site:${host}`),
      restSearch(s, `festival site:${host}`),
    ]);
    for (const a of answers) {
      t.equal(a.status, 200);
      t.same(
        a.body.results.map((r) => r.host),
        [host],
        `write ${i}: the new page answers at once (${a.body.results.length} result(s))`,
      );
    }
  }
  // And a removal: gone from every thread's answers at once.
  await index.removePage(100);
  const gone = await Promise.all([restSearch(s, 'zorblaxq'), restSearch(s, 'zorblaxq')]);
  for (const a of gone) t.same(a.body.results, [], 'a removed page is gone at once');
});

t.test('an embedder other than the hashing stand-in is asked through the HTTP thread', async (t) => {
  const hashing = createHashingEmbedder(64);
  let calls = 0;
  // A copy: the same vectors, but not the stand-in itself, so the threads cannot rebuild it.
  const proxied: Embedder = {
    ...hashing,
    embed: (texts, o) => {
      calls++;
      return hashing.embed(texts, o);
    },
  };
  const s = await service(t, 2, proxied);
  const before = calls;
  const r = await restSearch(s, 'wildfire air quality');
  t.equal(r.status, 200);
  t.equal(r.body.ranking, 'hybrid-rrf-hashing', 'vectors used');
  t.equal(r.body.results[0]?.host, 'www.gov.bc.ca');
  t.ok(calls > before, 'the query was embedded by the process embedder');
});

t.test('no threads: searches run on the HTTP thread; the default follows the cores', async (t) => {
  const s = await service(t, 0);
  t.equal(s.services.searchPool, null);
  const r = await restSearch(s, 'passport fees');
  t.equal(r.body.results[0]?.host, 'www.canada.ca');
  t.equal(defaultSearchThreads(1), 0, 'one core: none');
  t.equal(defaultSearchThreads(2), 2);
  t.equal(defaultSearchThreads(16), 4, 'at most 4');
});

t.test('threads opened on an empty index score titles once pages arrive (their title statistics follow the writer)', async (t) => {
  const s = await startTestService({ perMinute: 10_000, now: () => NOW, config: { searchThreads: 2 } });
  t.teardown(() => s.close());
  t.ok(await s.services.searchPool!.whenReady(60_000), 'threads open on the empty index');
  let ref = 1;
  for (const [host, title, text] of TOPICS) {
    await s.services.deps.index.upsertPage(
      makePage(ref++, host, [text], { title, publishedAt: '2026-10-01T00:00:00Z', dateSource: 'schema.org' }),
    );
  }
  const reader = await PassageIndex.open({ dir: join(s.dataDir, 'lance'), embedder: s.services.deps.index.embedder, writes: false });
  t.teardown(() => reader.close());
  await reader.textEngineReady();
  await s.services.searchPool!.textEngineReady(s.services.deps.index);
  for (const q of ['passport fees', 'wildfire status']) {
    const expected = await callTool(
      searchTool,
      { q, detail: 'full' },
      { deps: { ...s.services.deps, index: reader, executor: inlineExecutor }, caller },
    );
    const answers = await Promise.all([restSearch(s, q), restSearch(s, q)]);
    for (const a of answers) t.same(a.body, JSON.parse(JSON.stringify(expected)), `${q}: the same scores, title boost included`);
  }
});
