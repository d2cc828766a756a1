import t from 'tap';
import { api, startTestService } from '../helpers/service.js';

/** Parses the text exposition format into `name{labels}` → value (labels in the order written). */
function parseMetrics(text: string): Map<string, number> {
  const out = new Map<string, number>();
  for (const line of text.split('\n')) {
    if (line === '' || line.startsWith('#')) continue;
    const m = /^([a-z_]+(?:\{[^}]*\})?) (\S+)$/.exec(line);
    if (!m) throw new Error(`not an exposition line: ${line}`);
    out.set(m[1]!, Number(m[2]));
  }
  return out;
}

t.test(
  'issue 10 item 5: /metrics reports requests, latency, error codes and quota rejections from REST and MCP, and nothing of the callers',
  async (t) => {
    const s = await startTestService({ perMinute: 2 });
    t.teardown(s.close);
    const secretQuery = 'zebraquokkametricsprobe';
    for (let i = 0; i < 3; i++) await api(s, `/api/v1/search?q=${secretQuery}`);
    // The quota is spent: an MCP tools/call is refused with an isError result (HTTP 200), and counted as well.
    const mcp = await api(s, '/mcp', {
      method: 'POST',
      headers: { accept: 'application/json, text/event-stream', 'mcp-protocol-version': '2025-11-25' },
      json: { jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: 'svc_search', arguments: { q: secretQuery } } },
    });
    t.equal(mcp.status, 200);
    t.match(mcp.text, /rate_limited/);
    t.equal((await api(s, '/api/v1/search', { auth: 'Bearer nope' })).status, 401);

    const res = await fetch(`${s.url}/metrics`);
    t.equal(res.status, 200);
    t.match(res.headers.get('content-type'), /^text\/plain; version=0\.0\.4/);
    const text = await res.text();
    const m = parseMetrics(text);
    t.equal(m.get('svc_http_requests_total{method="GET",route="/api/v1/search",status="200"}'), 2);
    t.equal(m.get('svc_http_requests_total{method="GET",route="/api/v1/search",status="429"}'), 1);
    t.equal(m.get('svc_http_requests_total{method="GET",route="/api/v1/search",status="401"}'), 1);
    t.equal(m.get('svc_quota_rejections_total'), 2, 'one REST 429 and one MCP rate_limited result');
    t.equal(m.get('svc_errors_total{code="rate_limited"}'), 2);
    t.equal(m.get('svc_errors_total{code="unauthorized"}'), 1);
    t.equal(m.get('svc_http_request_duration_seconds_count{method="GET",route="/api/v1/search"}'), 4);
    t.equal(m.get('svc_http_request_duration_seconds_bucket{method="GET",route="/api/v1/search",le="+Inf"}'), 4);
    t.equal(m.get('svc_info{role="all",version="' + s.services.version + '"}'), 1);
    t.equal(m.get('svc_state_up'), 1);
    t.equal(m.get('svc_index_passages'), 0);
    t.ok(Number.isInteger(m.get('svc_index_version')) && m.get('svc_index_version')! >= 1, 'the index version');
    t.equal(m.get('svc_text_postings_passages'), 0, 'issue 14: the in-process postings of an empty index');
    t.ok(m.has('svc_text_postings_version'), 'issue 14: their version is reported');
    t.equal(m.get('svc_row_cache_rows'), 0, 'issue 14: no result rows held for an empty index');
    t.equal(m.get('svc_flat_vectors_rows'), 0, 'issue 14: no vectors held in memory for an empty index');
    t.equal(m.get('svc_snippet_passages'), 0, 'issue 14: no snippet text held in memory for an empty index');
    t.equal(m.get('svc_snippet_bytes'), 0);
    t.equal(m.get('svc_row_cache_bytes'), 0);
    t.ok((m.get('svc_process_resident_memory_bytes') ?? 0) > 0);
    t.notOk(
      [...m.keys()].some((k) => k.startsWith('svc_frontier')),
      'a process that does not crawl reports no frontier',
    );
    // Aggregates only: neither the query, nor the key, nor its digest, nor a client address.
    for (const secret of [secretQuery, s.key, s.keyId, '127.0.0.1'])
      t.notOk(text.includes(secret), `no ${secret.slice(0, 8)}… in /metrics`);
  },
);

t.test('issue 10 item 5: a crawling process reports the frontier on /metrics and /readyz', async (t) => {
  const s = await startTestService({ config: { crawl: true } });
  t.teardown(s.close);
  const m = parseMetrics(await (await fetch(`${s.url}/metrics`)).text());
  for (const state of ['queued', 'leased', 'retrying', 'done', 'dead']) t.equal(m.get(`svc_frontier_items{state="${state}"}`), 0, state);
  t.equal(m.get('svc_frontier_leases'), 0);
  t.equal(m.get('svc_crawl_items_total{outcome="fetched"}'), 0);
  const ready = await fetch(`${s.url}/readyz`);
  t.equal(ready.status, 200);
  t.match(await ready.json(), { checks: { frontier: '0 queued, 0 leased, 0 retrying, 0 dead', role: 'all' } });
});
