/**
 * Issue 46 item 8: a validation failure (422, or MCP validation_failed) uses up no quota; a valid call does, on
 * REST and MCP alike (docs/errors.md). A key of 3 calls a minute sends 5 invalid calls, then gets its 3 calls and a 429.
 */
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import t from 'tap';
import { api, startTestService } from '../helpers/service.js';

t.test('issue 46: 422s are not counted against the per-minute and per-day quota', async (t) => {
  const s = await startTestService({ perMinute: 3, perDay: 10 });
  t.teardown(s.close);

  for (let i = 0; i < 5; i++) {
    const bad = await api(s, '/api/v1/search?q=cell&limit=0');
    t.equal(bad.status, 422);
    t.match(bad.body, { code: 'validation_failed' });
    t.equal(bad.headers.get('x-ratelimit-remaining-minute'), '3', 'the quota as it stands, untouched');
  }
  for (let i = 0; i < 3; i++) {
    const ok = await api(s, '/api/v1/search?q=cell');
    t.equal(ok.status, 200, `valid call ${i + 1} of 3`);
    t.equal(ok.headers.get('x-ratelimit-remaining-minute'), String(2 - i));
    t.equal(ok.headers.get('x-ratelimit-remaining-day'), String(9 - i), 'the day counts valid calls only');
  }
  const over = await api(s, '/api/v1/search?q=cell');
  t.equal(over.status, 429);
  t.match(over.body, { code: 'rate_limited' });

  // MCP, with a key of its own.
  const { key } = await s.services.keys.create({ name: 'mcp', perMinute: 3, perDay: 10 });
  const client = new Client({ name: 'svc-test', version: '1.0.0' });
  await client.connect(
    new StreamableHTTPClientTransport(new URL(s.url + '/mcp'), { requestInit: { headers: { Authorization: `Bearer ${key}` } } }),
  );
  t.teardown(() => client.close());
  const code = (r: unknown): string => JSON.parse((r as { content: { text: string }[] }).content[0]!.text).code;
  for (let i = 0; i < 5; i++) {
    const bad = await client.callTool({ name: 'svc_search', arguments: { q: 'cell', limit: 0 } }).catch((e: unknown) => e);
    // Before protocol 2025-11-25 the SDK raises -32602; from it on, an isError result: neither is counted.
    if (bad instanceof Error) t.match(bad.message, /Invalid params/);
    else t.equal(code(bad), 'validation_failed');
  }
  for (let i = 0; i < 3; i++) {
    const ok = await client.callTool({ name: 'svc_search', arguments: { q: 'cell' } });
    t.notOk(ok.isError, `valid MCP call ${i + 1} of 3`);
  }
  const overMcp = await client.callTool({ name: 'svc_search', arguments: { q: 'cell' } });
  t.ok(overMcp.isError);
  t.equal(code(overMcp), 'rate_limited');
});

t.test('an MCP tools/call the transport refuses (Accept, protocol version) uses no quota', async (t) => {
  const s = await startTestService({ perMinute: 2, perDay: 10 });
  t.teardown(s.close);
  const call = (headers: Record<string, string>) =>
    fetch(s.url + '/mcp', {
      method: 'POST',
      headers: { Authorization: `Bearer ${s.key}`, 'content-type': 'application/json', ...headers },
      body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: 'svc_search', arguments: { q: 'cell' } } }),
    });
  const both = 'application/json, text/event-stream';
  for (let i = 0; i < 3; i++) {
    t.equal((await call({ accept: 'application/json' })).status, 406, 'Accept without text/event-stream');
    t.equal((await call({ accept: both, 'mcp-protocol-version': '1999-01-01' })).status, 400, 'an unsupported protocol version');
  }
  for (let i = 0; i < 2; i++) {
    const ok = await call({ accept: both });
    t.equal(ok.status, 200);
    t.notOk(
      ((await ok.json()) as { result: { isError?: boolean } }).result.isError,
      `valid call ${i + 1} of 2: the refused ones took none`,
    );
  }
  const over = (await (await call({ accept: both })).json()) as { result: { isError?: boolean; content: { text: string }[] } };
  t.ok(over.result.isError);
  t.equal(JSON.parse(over.result.content[0]!.text).code, 'rate_limited');
});
