/**
 * Issue 46 item 8: the fresh feed lists crawled web pages only. A corpus ingested with `svc ingest` just now is
 * searchable but not "new on the Web": REST /api/v1/fresh and MCP svc_fresh leave it out.
 */
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { PassThrough } from 'node:stream';
import t from 'tap';
import { ingestCommand } from '../../cli/ingest.js';
import { startTestWeb } from '../../fixtures/test-web/index.js';
import { api, startTestService } from '../helpers/service.js';

t.test('issue 46: svc_fresh and /api/v1/fresh list crawled pages, not ingested corpus records', async (t) => {
  // Not t.testdir(): the service's index may still be compacting when tap removes it; removed after the service stops.
  const dataDir = mkdtempSync(join(tmpdir(), 'svc-fresh-'));
  const corpus = join(dataDir, 'corpus.jsonl');
  writeFileSync(
    corpus,
    Array.from({ length: 30 }, (_, i) => JSON.stringify({ _id: `d${i}`, title: `Study ${i}`, text: `Vitamin D study ${i}.` })).join('\n'),
  );
  const sink = new PassThrough().resume();
  t.equal(
    await ingestCommand(['--jsonl', corpus, '--data-dir', dataDir, '--embedder', 'none'], { stdout: sink, stderr: sink, env: {} }),
    0,
  );

  const web = await startTestWeb({ generatedHosts: 0 });
  t.teardown(() => web.close());
  const s = await startTestService({
    config: { dataDir, crawl: true, crawlAllowLoopback: true, resolve: web.pins, crawlGapMs: 0 },
    perMinute: 1000,
  });
  t.teardown(async () => {
    await s.close();
    rmSync(dataDir, { recursive: true, force: true });
  });
  const page = web.url('shop-montreal.test', '/');
  await s.services.crawler!.enqueue(page, { priority: 'submitted', reason: 'test' });
  await s.services.crawler!.runUntilIdle({ timeoutMs: 30_000, maxPages: 5 });

  const search = await api(s, '/api/v1/search?q=vitamin%20study&limit=5');
  t.equal(search.status, 200);
  t.ok((search.body as { results: unknown[] }).results.length > 0, 'the corpus is searchable');

  const rest = await api(s, '/api/v1/fresh?window=1h&limit=50');
  t.equal(rest.status, 200);
  const urls = (rest.body as { pages: { url: string }[] }).pages.map((p) => p.url);
  t.ok(urls.includes(page), 'the crawled page is fresh');
  t.same(
    urls.filter((u) => !/^https?:\/\//.test(u)),
    [],
    'no corpus record is listed',
  );

  const client = new Client({ name: 'svc-test', version: '1.0.0' });
  await client.connect(
    new StreamableHTTPClientTransport(new URL(s.url + '/mcp'), { requestInit: { headers: { Authorization: `Bearer ${s.key}` } } }),
  );
  t.teardown(() => client.close());
  const mcp = await client.callTool({ name: 'svc_fresh', arguments: { window: '1h', limit: 50 } });
  t.same(
    (mcp.structuredContent as { pages: { url: string }[] }).pages.map((p) => p.url),
    urls,
    'MCP lists the same pages',
  );
});
