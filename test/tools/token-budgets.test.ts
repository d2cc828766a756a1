/**
 * Issue 13, item 1: agents pay for every token. Counted with gpt-tokenizer (o200k_base) on what an MCP client
 * receives through the official SDK client, over a real index (real article pages from ../shared/data/web, through
 * our extractor) and the real Statistics Canada cultural facilities data:
 * - tools/list ≤ 3,500 tokens, every tool still described, no nullable `type: [x, "null"]` arrays (the MCP
 *   Inspector's schema lint warns on each; anyOf is the form it suggests);
 * - a search result ≤ 120 tokens on average by default, the provenance one parameter away (detail "full"), REST
 *   and MCP identical; context passages without the dates bulk by default; an entity ≤ 150 tokens by default with
 *   observations on request;
 * - the listed (compact) output schemas still validate structuredContent: the SDK client checks every call, and Ajv
 *   refuses a structuredContent of the wrong shape against them.
 */
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { Ajv } from 'ajv'; // draft-07, as the SDK client's validator
import { countTokens } from 'gpt-tokenizer/encoding/o200k_base';
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { Writable } from 'node:stream';
import { gunzipSync } from 'node:zlib';
import t from 'tap';
import { entitiesCommand } from '../../cli/entities.js';
import { SHARED_DATA_DIR } from '../../fixtures/test-web/index.js';
import type { PageInput } from '../../page-model.js';
import { extractedPage } from '../helpers/page-input.js';
import { api, startTestService, type TestService } from '../helpers/service.js';

const TOOLS_LIST_MAX = 3500;
const SEARCH_RESULT_MAX = 120;
const ENTITY_MAX = 150;

const WEB = join(SHARED_DATA_DIR, 'web', 'article-extraction-benchmark');
const ODCAF = join(SHARED_DATA_DIR, 'ca-open-data', 'odcaf', 'ODCAF_v1.0.utf8.csv.gz');

/** The first `n` pages of the article-extraction benchmark, extracted as the crawler would. */
function realPages(n: number): PageInput[] {
  const truth = JSON.parse(readFileSync(join(WEB, 'ground-truth.json'), 'utf8')) as Record<string, { url: string }>;
  const out: PageInput[] = [];
  for (const f of readdirSync(join(WEB, 'html')).sort()) {
    if (out.length >= n) break;
    const url = truth[f.replace('.html.gz', '')]?.url;
    if (!url) continue;
    const page = extractedPage(gunzipSync(readFileSync(join(WEB, 'html', f))).toString('utf8'), out.length + 1, url);
    if (page.passages.length > 0) out.push(page);
  }
  return out;
}

/** Every `type` keyword in a schema that is an array (the nullable form the Inspector warns about). */
function typeArrays(schema: unknown, path = '#'): string[] {
  if (Array.isArray(schema)) return schema.flatMap((x, i) => typeArrays(x, `${path}/${i}`));
  if (schema === null || typeof schema !== 'object') return [];
  const out: string[] = [];
  for (const [k, v] of Object.entries(schema)) {
    if (k === 'type' && Array.isArray(v)) out.push(path);
    else out.push(...typeArrays(v, `${path}/${k}`));
  }
  return out;
}

const tokens = (v: unknown): number => countTokens(JSON.stringify(v));

let s: TestService;
let client: Client;
let pages: PageInput[];

t.before(async () => {
  s = await startTestService({ perMinute: 10_000 });
  pages = realPages(60);
  await s.services.deps.index.upsertPages(pages);
  await s.services.deps.index.optimize();
  const quiet = new Writable({ write: (_c, _e, cb) => cb() });
  t.equal(await entitiesCommand(['import', '--odcaf', ODCAF, '--data-dir', s.dataDir], { stdout: quiet, stderr: quiet, env: {} }), 0);
  client = new Client({ name: 'token-budget', version: '1' });
  await client.connect(
    new StreamableHTTPClientTransport(new URL(s.url + '/mcp'), { requestInit: { headers: { Authorization: `Bearer ${s.key}` } } }),
  );
});
t.teardown(async () => {
  await client?.close();
  await s?.close();
});

t.test(`issue 13: tools/list costs at most ${TOOLS_LIST_MAX} o200k tokens, with no nullable type arrays`, async (t) => {
  const list = await client.listTools();
  const cost = tokens(list);
  t.ok(cost <= TOOLS_LIST_MAX, `tools/list = ${cost} tokens`);
  t.equal(list.tools.length, 8);
  for (const tool of list.tools) {
    t.ok((tool.description ?? '').length >= 120, `${tool.name} says what it does and when to use it`);
    for (const [name, prop] of Object.entries(tool.inputSchema.properties ?? {}))
      t.ok((prop as { description?: string }).description, `${tool.name}.${name} described`);
    t.same(typeArrays(tool.inputSchema), [], `${tool.name} input: nullable written as anyOf`);
    t.same(typeArrays(tool.outputSchema), [], `${tool.name} output: nullable written as anyOf`);
  }
  // The compact output schemas still validate: a record with a wrong type is refused.
  const ajv = new Ajv({ strict: false });
  const search = list.tools.find((x) => x.name === 'svc_search')!;
  const check = ajv.compile(search.outputSchema!);
  t.notOk(
    check({ results: [{ url: 42 }], ranking: 'bm25', limit: 10, offset: 0, collapsed_per_host: {}, duplicates_collapsed: 0, warnings: [] }),
  );
  t.notOk(check({ results: 'none' }));
  t.ok(check({ results: [], ranking: 'bm25', limit: 10, offset: 0, collapsed_per_host: {}, duplicates_collapsed: 0, warnings: [] }));
});

t.test(`issue 13: a search result costs at most ${SEARCH_RESULT_MAX} tokens on average; "full" adds provenance; REST = MCP`, async (t) => {
  // Queries from the pages' own titles (two longest words), so every one finds something.
  const queries = pages.slice(0, 12).map((p) =>
    p.title
      .split(/[^\p{L}\p{N}]+/u)
      .filter((w) => w.length > 4)
      .sort((a, b) => b.length - a.length)
      .slice(0, 2)
      .join(' '),
  );
  let n = 0;
  let sum = 0;
  let fullSum = 0;
  for (const q of queries.filter((x) => x !== '')) {
    const res = await client.callTool({ name: 'svc_search', arguments: { q, limit: 10 } });
    t.notOk(res.isError, q);
    const out = res.structuredContent as { results: Record<string, unknown>[] };
    for (const r of out.results) {
      sum += tokens(r);
      n++;
      t.same(Object.keys(r).sort(), ['content_trust', 'date', 'excerpt', 'match', 'page_ref', 'title', 'url'], 'default fields');
    }
    const rest = await api(s, `/api/v1/search?q=${encodeURIComponent(q)}&limit=10`);
    t.same(rest.body, out, 'REST JSON equals MCP structuredContent');
    const full = await client.callTool({ name: 'svc_search', arguments: { q, limit: 10, detail: 'full' } });
    const fr = (full.structuredContent as { results: Record<string, unknown>[] }).results;
    t.equal(fr.length, out.results.length);
    for (const r of fr) {
      fullSum += tokens(r);
      t.match(r, {
        host: String,
        filetype: 'html',
        dates: { fetched: '2026-11-20T12:00:00Z' },
        score: Number,
        provenance: { date_source: String, snippet: String },
      });
    }
  }
  t.ok(n >= 30, `${n} results measured`);
  const avg = sum / n;
  t.ok(avg <= SEARCH_RESULT_MAX, `default: ${avg.toFixed(1)} tokens per result (full: ${(fullSum / n).toFixed(1)})`);
  t.ok(fullSum > sum, 'full carries more');
});

t.test('issue 13: context passages carry source, cite and trust by default; dates and filetype with detail "full"', async (t) => {
  const q = pages[0]!.title;
  const brief = await client.callTool({ name: 'svc_context', arguments: { query: q, max_tokens: 2000 } });
  const items = (brief.structuredContent as { context: Record<string, unknown>[] }).context;
  t.ok(items.length > 0);
  for (const c of items) t.same(Object.keys(c).sort(), ['cite', 'content_trust', 'page_ref', 'passage', 'source']);
  const full = await client.callTool({ name: 'svc_context', arguments: { query: q, max_tokens: 2000, detail: 'full' } });
  for (const c of (full.structuredContent as { context: Record<string, unknown>[] }).context)
    t.match(c, { filetype: 'html', dates: { fetched: String } });
});

t.test(`issue 13: an entity costs at most ${ENTITY_MAX} tokens by default; observations on request`, async (t) => {
  for (const args of [
    { q: 'bibliothèque', province: 'QC' },
    { kind: 'Museum', province: 'ON' },
    { q: 'library', locality: 'Toronto' },
  ]) {
    const res = await client.callTool({ name: 'svc_entities', arguments: { ...args, limit: 20 } });
    t.notOk(res.isError);
    const list = (res.structuredContent as { entities: Record<string, unknown>[] }).entities;
    t.ok(list.length >= 5, `${JSON.stringify(args)}: ${list.length} records`);
    const avg = list.reduce((a, e) => a + tokens(e), 0) / list.length;
    t.ok(avg <= ENTITY_MAX, `${JSON.stringify(args)}: ${avg.toFixed(1)} tokens per entity`);
    for (const e of list) {
      t.equal(e.observations, undefined);
      t.match(e, { id: /^ent_/, source_ids: [/^odcaf:/], last_verified_at: String });
    }
    const full = await client.callTool({ name: 'svc_entities', arguments: { ...args, limit: 20, detail: 'full' } });
    const fl = (full.structuredContent as { entities: Record<string, unknown>[] }).entities;
    t.match(fl[0], {
      observations: [{ field: 'name', source_id: /^odcaf:/ }],
      sources: [{ licence: { name: 'Open Government Licence – Canada' } }],
    });
    const one = await api(s, `/api/v1/entities/${String(list[0]!.id)}?detail=default`);
    t.same(one.body, list[0], 'GET /entities/{id}?detail=default gives the same brief record (issue 46: full by default)');
  }
});
