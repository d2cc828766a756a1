import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import t from 'tap';
import { api, startTestService, type TestService } from '../helpers/service.js';

/**
 * The registry's tools over both adapters on an empty index: the eight enabled tools are listed with schemas,
 * every tool answers well-formed (empty) results, MCP structuredContent equals the REST JSON, and every bound of
 * spec §8 holds at its edge.
 */
async function mcpClient(s: TestService): Promise<Client> {
  const client = new Client({ name: 'contract', version: '1' });
  await client.connect(
    new StreamableHTTPClientTransport(new URL(s.url + '/mcp'), { requestInit: { headers: { Authorization: `Bearer ${s.key}` } } }),
  );
  return client;
}

const problemOf = (r: unknown) =>
  JSON.parse((r as { content: { text: string }[] }).content[0]!.text) as { code: string; status: number; errors: { path: unknown[] }[] };

t.test('tools/list shows exactly the eight enabled tools, with schemas and annotations', async (t) => {
  const s = await startTestService({ perMinute: 1000 });
  t.teardown(s.close);
  const client = await mcpClient(s);
  t.teardown(() => client.close());
  const { tools } = await client.listTools();
  t.same(
    tools.map((x) => x.name).sort(),
    ['svc_context', 'svc_entities', 'svc_fresh', 'svc_page', 'svc_request_status', 'svc_search', 'svc_site', 'svc_submit_url'].sort(),
  );
  for (const tool of tools) {
    t.equal(tool.inputSchema.type, 'object', `${tool.name} input schema`);
    t.equal(tool.outputSchema?.type, 'object', `${tool.name} output schema`);
    t.ok(tool.description && tool.description.length > 60, `${tool.name} has a description written for a model`);
    t.equal(tool.annotations?.readOnlyHint, tool.name !== 'svc_submit_url', `${tool.name} readOnlyHint`);
    t.equal(tool.annotations?.openWorldHint, true, `${tool.name} openWorldHint`);
    for (const [name, prop] of Object.entries(tool.inputSchema.properties ?? {})) {
      t.ok((prop as { description?: string }).description, `${tool.name}.${name} is described`);
    }
  }
  const images = await api(s, '/api/v1/images?q=bridge');
  t.equal(images.status, 404);
  t.match(images.body, { code: 'feature_disabled' });
  // An absent tool is a protocol error, as the MCP spec lists unknown tools (issue 12), not an isError result.
  await t.rejects(client.callTool({ name: 'svc_images', arguments: { q: 'bridge' } }), {
    code: -32602,
    message: /Unknown tool: svc_images/,
  });
});

t.test('with SVC_IMAGES=1 the images tool is listed and answers', async (t) => {
  const s = await startTestService({ config: { images: true } });
  t.teardown(s.close);
  const client = await mcpClient(s);
  t.teardown(() => client.close());
  t.equal((await client.listTools()).tools.length, 9);
  const rest = await api(s, '/api/v1/images?q=bridge&limit=5');
  t.equal(rest.status, 200);
  const mcp = await client.callTool({ name: 'svc_images', arguments: { q: 'bridge', limit: 5 } });
  t.same(mcp.structuredContent, rest.body);
  t.match(rest.body, { images: [], notice: /rights/i });
});

t.test('every tool on an empty index: REST JSON equals MCP structuredContent', async (t) => {
  const fixed = new Date('2026-11-21T12:00:00Z');
  const s = await startTestService({ perMinute: 1000, now: () => fixed });
  t.teardown(s.close);
  const client = await mcpClient(s);
  t.teardown(() => client.close());
  const cases: { tool: string; args: Record<string, unknown>; rest: () => Promise<{ status: number; body: unknown }>; status: number }[] = [
    {
      tool: 'svc_search',
      args: { q: 'public library hours', limit: 5 },
      rest: () => api(s, '/api/v1/search?q=public%20library%20hours&limit=5'),
      status: 200,
    },
    {
      tool: 'svc_context',
      args: { query: 'public library hours', max_tokens: 512 },
      rest: () => api(s, '/api/v1/context', { method: 'POST', json: { query: 'public library hours', max_tokens: 512 } }),
      status: 200,
    },
    { tool: 'svc_fresh', args: { window: '24h' }, rest: () => api(s, '/api/v1/fresh?window=24h'), status: 200 },
    {
      tool: 'svc_entities',
      args: { q: 'library', province: 'QC', limit: 5 },
      rest: () => api(s, '/api/v1/entities?q=library&province=QC&limit=5'),
      status: 200,
    },
    { tool: 'svc_page', args: { page_ref: 12345 }, rest: () => api(s, '/api/v1/passages?page_ref=12345'), status: 404 },
    { tool: 'svc_site', args: { host: 'never-seen.example' }, rest: () => api(s, '/api/v1/site/never-seen.example'), status: 404 },
    { tool: 'svc_request_status', args: { id: 'req_nothing' }, rest: () => api(s, '/api/v1/requests/req_nothing'), status: 404 },
  ];
  for (const c of cases) {
    const rest = await c.rest();
    const mcp = await client.callTool({ name: c.tool, arguments: c.args });
    t.equal(rest.status, c.status, `${c.tool} REST status`);
    if (c.status === 200) {
      t.notOk(mcp.isError, `${c.tool} MCP ok`);
      t.same(mcp.structuredContent, rest.body, `${c.tool}: MCP equals REST`);
    } else {
      t.equal(mcp.isError, true, `${c.tool} MCP error`);
      t.equal(problemOf(mcp).code, (rest.body as { code: string }).code, `${c.tool}: same error code`);
    }
  }
  const search = (await api(s, '/api/v1/search?q=anything')).body as { results: unknown[]; warnings: { code: string }[] };
  t.same(search.results, []);
  t.ok(
    search.warnings.some((w) => w.code === 'no_results'),
    'empty search says no_results',
  );
  const context = (await api(s, '/api/v1/context', { method: 'POST', json: { query: 'anything' } })).body as Record<string, unknown>;
  t.match(context, { context: [], coverage: { passages: 0, hosts: 0 }, tokens_estimated: 0, ranking: String });
  t.ok((context.warnings as { code: string }[]).some((w) => w.code === 'no_results'));

  // Submitting the same URL twice (REST then MCP) while open gives the same request.
  const sub = await api(s, '/api/v1/requests', { method: 'POST', json: { type: 'discovery', url: 'https://example.ca/new-page' } });
  t.equal(sub.status, 202);
  const again = await client.callTool({ name: 'svc_submit_url', arguments: { type: 'discovery', url: 'https://example.ca/new-page' } });
  t.same(
    (again.structuredContent as { request: unknown }).request,
    (sub.body as { request: unknown }).request,
    'idempotent submission: same record on both adapters',
  );
  t.match(again.structuredContent, { deduplicated: true });
  const id = (sub.body as { request: { id: string } }).request.id;
  const status = await api(s, `/api/v1/requests/${id}`);
  const mcpStatus = await client.callTool({ name: 'svc_request_status', arguments: { id } });
  t.equal(status.status, 200);
  t.same(mcpStatus.structuredContent, status.body);
});

t.test('every bound of spec §8 at its edge: inside 200, one past 422 naming the field', async (t) => {
  const s = await startTestService({ perMinute: 1000 });
  t.teardown(s.close);
  const get = async (path: string) => api(s, path);
  const post = async (json: unknown) => api(s, '/api/v1/context', { method: 'POST', json });
  const q300 = 'a'.repeat(300);
  const edges: [string, () => Promise<{ status: number; body: unknown }>, number, string?][] = [
    ['q 1 char', () => get('/api/v1/search?q=a'), 200],
    ['q 300 chars', () => get(`/api/v1/search?q=${q300}`), 200],
    ['q empty', () => get('/api/v1/search?q='), 422, 'q'],
    ['q 301 chars', () => get(`/api/v1/search?q=${q300}b`), 422, 'q'],
    ['limit 1', () => get('/api/v1/search?q=x&limit=1'), 200],
    ['limit 20', () => get('/api/v1/search?q=x&limit=20'), 200],
    ['limit 0', () => get('/api/v1/search?q=x&limit=0'), 422, 'limit'],
    ['limit 21', () => get('/api/v1/search?q=x&limit=21'), 422, 'limit'],
    ['offset 0', () => get('/api/v1/search?q=x&offset=0'), 200],
    ['offset 90', () => get('/api/v1/search?q=x&offset=90'), 200],
    ['offset 91', () => get('/api/v1/search?q=x&offset=91'), 422, 'offset'],
    ['offset -1', () => get('/api/v1/search?q=x&offset=-1'), 422, 'offset'],
    ['limit text', () => get('/api/v1/search?q=x&limit=ten'), 422, 'limit'],
    ['max_tokens 256', () => post({ query: 'x', max_tokens: 256 }), 200],
    ['max_tokens 8000', () => post({ query: 'x', max_tokens: 8000 }), 200],
    ['max_tokens 255', () => post({ query: 'x', max_tokens: 255 }), 422, 'max_tokens'],
    ['max_tokens 8001', () => post({ query: 'x', max_tokens: 8001 }), 422, 'max_tokens'],
    ['max_sources 1', () => post({ query: 'x', max_sources: 1 }), 200],
    ['max_sources 30', () => post({ query: 'x', max_sources: 30 }), 200],
    ['max_sources 0', () => post({ query: 'x', max_sources: 0 }), 422, 'max_sources'],
    ['max_sources 31', () => post({ query: 'x', max_sources: 31 }), 422, 'max_sources'],
    ['max_tokens as string', () => post({ query: 'x', max_tokens: '500' }), 422, 'max_tokens'],
    ['query missing', () => post({ max_tokens: 500 }), 422, 'query'],
    ['province NS', () => post({ query: 'x', province: 'NS' }), 200],
    ['province CA-QC', () => post({ query: 'x', province: 'CA-QC' }), 200],
    ['province zz', () => post({ query: 'x', province: 'zz' }), 422, 'province'],
    ['passages limit 40', () => get('/api/v1/passages?page_ref=1&limit=40'), 404],
    ['passages limit 41', () => get('/api/v1/passages?page_ref=1&limit=41'), 422, 'limit'],
    ['passages limit 0', () => get('/api/v1/passages?page_ref=1&limit=0'), 422, 'limit'],
    ['fresh limit 50', () => get('/api/v1/fresh?window=7d&limit=50'), 200],
    ['fresh limit 51', () => get('/api/v1/fresh?window=7d&limit=51'), 422, 'limit'],
    ['fresh window 2d', () => get('/api/v1/fresh?window=2d'), 422, 'window'],
    ['entities limit 20', () => get('/api/v1/entities?q=x&limit=20'), 200],
    ['entities limit 21', () => get('/api/v1/entities?q=x&limit=21'), 422, 'limit'],
  ];
  for (const [name, call, status, field] of edges) {
    const r = await call();
    t.equal(r.status, status, name);
    if (field) {
      const paths = ((r.body as { errors?: { path: unknown[] }[] }).errors ?? []).map((e) => e.path.join('.'));
      t.ok(paths.includes(field), `${name} names ${field} (got ${paths.join(',')})`);
    }
  }
});
