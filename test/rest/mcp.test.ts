import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import t from 'tap';
import { api, startTestService, type TestService } from '../helpers/service.js';
import { probeTool } from '../helpers/probe-tool.js';

async function connect(s: TestService, key = s.key): Promise<Client> {
  const client = new Client({ name: 'svc-test', version: '1.0.0' });
  const transport = new StreamableHTTPClientTransport(new URL(s.url + '/mcp'), {
    requestInit: { headers: { Authorization: `Bearer ${key}` } },
  });
  await client.connect(transport);
  return client;
}

const initBody = {
  jsonrpc: '2.0',
  id: 1,
  method: 'initialize',
  params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'raw', version: '1' } },
};
const mcpHeaders = { accept: 'application/json, text/event-stream' };

t.test('/mcp with the SDK client: tools, errors with codes, limits', async (t) => {
  const s = await startTestService({ tools: [probeTool], perMinute: 3, perDay: 100 });
  t.teardown(s.close);
  const client = await connect(s);
  t.teardown(() => client.close());
  const list = await client.listTools();
  t.same(
    list.tools.map((x) => x.name),
    ['svc_probe'],
  );
  t.match(list.tools[0], {
    inputSchema: { type: 'object', properties: { q: { type: 'string', maxLength: 300 } } },
    outputSchema: { type: 'object' },
  });

  const ok = await client.callTool({ name: 'svc_probe', arguments: { q: 'hello', limit: 3 } });
  t.notOk(ok.isError);
  t.same(ok.structuredContent, { length: 5, limit: 3, offset: 0, flag: null, known_pages: 0 });
  const rest = await api(s, '/api/v1/probe?q=hello&limit=3');
  t.same(ok.structuredContent, rest.body, 'MCP structuredContent equals the REST JSON');

  const bad = await client.callTool({ name: 'svc_probe', arguments: { q: 'x', limit: 21 } });
  t.equal(bad.isError, true);
  const problem = JSON.parse((bad.content as { text: string }[])[0]!.text);
  t.match(problem, { code: 'validation_failed', status: 422, errors: [{ path: ['limit'] }] });

  // perMinute 3: one call above, one 422 above (counted: every call is a call), the next is the third, then limited.
  await client.callTool({ name: 'svc_probe', arguments: { q: 'x' } });
  const limited = await client.callTool({ name: 'svc_probe', arguments: { q: 'x' } });
  t.equal(limited.isError, true);
  const lp = JSON.parse((limited.content as { text: string }[])[0]!.text);
  t.match(lp, { code: 'rate_limited', status: 429 });
  t.ok(lp.retry_after >= 1 && lp.retry_after <= 60, 'says when to retry');
  // Listing does not consume quota.
  t.equal((await client.listTools()).tools.length, 1);
});

t.test('/mcp refuses bad keys, foreign origins, GET, bad versions and big bodies', async (t) => {
  const s = await startTestService({ tools: [probeTool], config: { allowedOrigins: ['http://allowed.example'] } });
  t.teardown(s.close);
  const noKey = await api(s, '/mcp', { method: 'POST', auth: null, json: initBody, headers: mcpHeaders });
  t.equal(noKey.status, 401);
  t.match(noKey.body, { code: 'unauthorized' });
  await t.rejects(connect(s, 'svc_nope'), 'the SDK client fails without a valid key');

  const foreign = await api(s, '/mcp', { method: 'POST', json: initBody, headers: { ...mcpHeaders, origin: 'http://evil.example' } });
  t.equal(foreign.status, 403);
  t.match(foreign.body, { code: 'forbidden_origin' });
  const allowed = await api(s, '/mcp', { method: 'POST', json: initBody, headers: { ...mcpHeaders, origin: 'http://allowed.example' } });
  t.equal(allowed.status, 200);
  const get = await api(s, '/mcp', { method: 'GET', headers: mcpHeaders });
  t.equal(get.status, 405);
  const badVersion = await api(s, '/mcp', {
    method: 'POST',
    json: { jsonrpc: '2.0', id: 2, method: 'tools/list', params: {} },
    headers: { ...mcpHeaders, 'mcp-protocol-version': '1999-01-01' },
  });
  t.equal(badVersion.status, 400);
  const big = await api(s, '/mcp', { method: 'POST', json: { ...initBody, pad: 'x'.repeat(70_000) }, headers: mcpHeaders });
  t.equal(big.status, 413);
  t.match(big.body, { code: 'payload_too_large' });
  const parse = await api(s, '/mcp', { method: 'POST', body: '{nope', headers: { ...mcpHeaders, 'content-type': 'application/json' } });
  t.equal(parse.status, 400);
  t.match(parse.body, { error: { code: -32700 } });
});
