import { request as httpRequest } from 'node:http';
import t from 'tap';
import { refusedTargets } from '../../fixtures/loopback-only.js';
import { allTools } from '../../tools/registry.js';
import { api, startTestService, type TestService } from '../helpers/service.js';
import { probePostTool, probeTool } from '../helpers/probe-tool.js';

const mcpHeaders = { accept: 'application/json, text/event-stream' };
const initBody = {
  jsonrpc: '2.0',
  id: 1,
  method: 'initialize',
  params: { protocolVersion: '2025-11-25', capabilities: {}, clientInfo: { name: 'raw', version: '1' } },
};

/** A request with headers fetch() will not let us set (Host), over node:http on loopback. */
function raw(
  s: TestService,
  opts: { method: string; path: string; headers: Record<string, string | string[]>; body?: string },
): Promise<{ status: number; headers: Record<string, string | string[] | undefined>; body: unknown }> {
  const u = new URL(s.url);
  return new Promise((resolve, reject) => {
    const req = httpRequest({ host: u.hostname, port: u.port, method: opts.method, path: opts.path, headers: opts.headers }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () => {
        const text = Buffer.concat(chunks).toString('utf8');
        let body: unknown;
        try {
          body = JSON.parse(text);
        } catch {
          body = text;
        }
        resolve({ status: res.statusCode ?? 0, headers: res.headers, body });
      });
    });
    req.on('error', reject);
    req.end(opts.body);
  });
}

const rpc = (s: TestService, message: unknown, headers: Record<string, string> = {}) =>
  api(s, '/mcp', { method: 'POST', json: message, headers: { ...mcpHeaders, ...headers } });

t.test('issue 12 item 1: Host validated on every route, Origin compared by scheme, host and port', async (t) => {
  const s = await startTestService({ tools: [probeTool], config: { allowedHosts: ['svc.example.org', 'alt.example.org:9999'] } });
  t.teardown(s.close);
  const port = new URL(s.url).port;
  const auth = `Bearer ${s.key}`;
  const init = JSON.stringify(initBody);
  const post = (headers: Record<string, string>) =>
    raw(s, {
      method: 'POST',
      path: '/mcp',
      headers: { 'content-type': 'application/json', ...mcpHeaders, authorization: auth, ...headers },
      body: init,
    });

  // The probe's case: a rebinding page sends its own name as Host and as Origin.
  const rebound = await post({ host: `evil.example:${port}`, origin: `http://evil.example:${port}` });
  t.equal(rebound.status, 403);
  t.match(rebound.body, { code: 'forbidden_host', status: 403 });
  t.match(rebound.headers['content-type'], /^application\/problem\+json/);
  // The same Host without any Origin (a non-browser client behind a rebinding name) is refused as well.
  t.equal((await post({ host: `evil.example:${port}` })).status, 403);
  // Every route, not only /mcp.
  const search = await raw(s, { method: 'GET', path: '/api/v1/probe?q=x', headers: { host: `evil.example:${port}`, authorization: auth } });
  t.match(search, { status: 403, body: { code: 'forbidden_host' } });
  t.match(await raw(s, { method: 'GET', path: '/healthz', headers: { host: 'evil.example' } }), { status: 403 });

  // Scheme matters: https://127.0.0.1:port is not this http server's origin.
  const https = await post({ host: `127.0.0.1:${port}`, origin: `https://127.0.0.1:${port}` });
  t.match(https, { status: 403, body: { code: 'forbidden_origin' } });
  // Port matters too.
  t.equal((await post({ host: `127.0.0.1:${port}`, origin: 'http://127.0.0.1:1' })).status, 403);
  t.equal((await post({ host: `127.0.0.1:${port}`, origin: 'null' })).status, 403);

  // Accepted: loopback names with the same-origin Origin, and the configured names.
  for (const host of [`127.0.0.1:${port}`, `localhost:${port}`, `[::1]:${port}`]) {
    const ok = await post({ host, origin: `http://${host}` });
    t.equal(ok.status, 200, `Host ${host}`);
  }
  t.equal((await post({ host: 'svc.example.org' })).status, 200, 'configured name, any port');
  t.equal((await post({ host: 'SVC.example.org:8443' })).status, 200, 'names compare case-insensitively');
  t.equal((await post({ host: 'alt.example.org:9999' })).status, 200, 'configured name:port');
  t.equal((await post({ host: 'alt.example.org:9998' })).status, 403, 'another port of a name:port entry');
});

t.test('issue 12 item 2: JSON-RPC errors for malformed params and unknown tools; invalid arguments per protocol version', async (t) => {
  const s = await startTestService({ tools: [probeTool] });
  t.teardown(s.close);
  const call = (params: unknown, version = '2025-06-18') =>
    rpc(s, { jsonrpc: '2.0', id: 7, method: 'tools/call', params }, { 'mcp-protocol-version': version });

  const malformed = await call({ name: 5, arguments: 'x' });
  t.equal(malformed.status, 200);
  t.match(malformed.body, { jsonrpc: '2.0', id: 7, error: { code: -32602 } });
  const msg = (malformed.body as { error: { message: string } }).error.message;
  t.ok(msg.length < 120 && !msg.includes('"path"'), `short, readable: ${msg}`);

  const unknown = await call({ name: 'svc_nope', arguments: {} });
  t.match(unknown.body, { id: 7, error: { code: -32602, message: 'Unknown tool: svc_nope' } });
  t.notOk((unknown.body as { result?: unknown }).result, 'not an isError result');

  const old = await call({ name: 'svc_probe', arguments: { q: 'x', limit: 21 } });
  t.match(old.body, { id: 7, error: { code: -32602, data: { code: 'validation_failed', status: 422, errors: [{ path: ['limit'] }] } } });
  t.ok((old.body as { error: { message: string } }).error.message.length < 120);
  // Unknown fields are refused here as on REST, including names of prototype members.
  for (const name of ['limt', '__proto__', 'constructor', 'toString']) {
    const r = await rpc(
      s,
      JSON.parse(`{"jsonrpc":"2.0","id":8,"method":"tools/call","params":{"name":"svc_probe","arguments":{"q":"x","${name}":1}}}`),
      {
        'mcp-protocol-version': '2025-06-18',
      },
    );
    t.match(r.body, { error: { code: -32602, data: { errors: [{ path: [name], issue: 'unrecognized parameter' }] } } }, name);
  }
  // 2025-11-25 reports argument errors as tool execution errors (SEP-1303), still with our code.
  const current = await call({ name: 'svc_probe', arguments: { q: 'x', limit: 21 } }, '2025-11-25');
  const result = (current.body as { result: { isError: boolean; content: { text: string }[] } }).result;
  t.equal(result.isError, true);
  t.match(JSON.parse(result.content[0]!.text), { code: 'validation_failed', errors: [{ path: ['limit'] }] });
  // A valid call still works and equals REST.
  const ok = await call({ name: 'svc_probe', arguments: { q: 'hello' } });
  t.match(ok.body, { result: { structuredContent: { length: 5, limit: 10 } } });
  // Batches get one answer per id, screened the same way.
  const batch = await rpc(
    s,
    [
      { jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: 'svc_nope' } },
      { jsonrpc: '2.0', id: 2, method: 'tools/call', params: { name: 'svc_probe', arguments: { q: 'ab' } } },
    ],
    { 'mcp-protocol-version': '2025-03-26' },
  );
  const answers = new Map((batch.body as { id: number }[]).map((m) => [m.id, m]));
  t.match(answers.get(1), { error: { code: -32602 } });
  t.match(answers.get(2), { result: { structuredContent: { length: 2 } } });
});

t.test('issue 12 item 3: X-RateLimit-* on every MCP answer; a limited call keeps isError, code and Retry-After', async (t) => {
  const s = await startTestService({ tools: [probeTool], perMinute: 2, perDay: 100 });
  t.teardown(s.close);
  const names = ['x-ratelimit-limit-minute', 'x-ratelimit-remaining-minute', 'x-ratelimit-limit-day', 'x-ratelimit-remaining-day'];
  const init = await rpc(s, initBody);
  t.equal(init.status, 200);
  for (const h of names) t.ok(init.headers.get(h), `initialize carries ${h}`);
  t.equal(init.headers.get('x-ratelimit-remaining-minute'), '2', 'initialize does not count');
  const list = await rpc(s, { jsonrpc: '2.0', id: 2, method: 'tools/list', params: {} }, { 'mcp-protocol-version': '2025-11-25' });
  for (const h of names) t.ok(list.headers.get(h), `tools/list carries ${h}`);
  const call = () =>
    rpc(
      s,
      { jsonrpc: '2.0', id: 3, method: 'tools/call', params: { name: 'svc_probe', arguments: { q: 'x' } } },
      { 'mcp-protocol-version': '2025-11-25' },
    );
  t.equal((await call()).headers.get('x-ratelimit-remaining-minute'), '1');
  t.equal((await call()).headers.get('x-ratelimit-remaining-minute'), '0');
  const limited = await call();
  t.equal(limited.status, 200);
  const retry = Number(limited.headers.get('retry-after'));
  t.ok(retry >= 1 && retry <= 60, 'Retry-After header');
  const result = (limited.body as { result: { isError: boolean; content: { text: string }[] } }).result;
  t.equal(result.isError, true);
  t.match(JSON.parse(result.content[0]!.text), { code: 'rate_limited', status: 429, retry_after: retry });
  t.equal(limited.headers.get('x-ratelimit-remaining-minute'), '0');
});

t.test('issue 12 item 4: 405 with Allow, invalid UTF-8 refused, prototype-named fields refused, two Authorization headers', async (t) => {
  const s = await startTestService({ tools: [probeTool, probePostTool] });
  t.teardown(s.close);
  const del = await api(s, '/api/v1/probe?q=x', { method: 'DELETE' });
  t.equal(del.status, 405);
  t.equal(del.headers.get('allow'), 'HEAD, GET');
  t.match(del.body, { code: 'method_not_allowed' });
  t.match(del.headers.get('content-type'), /^application\/problem\+json/);

  const badQuery = await api(s, '/api/v1/probe?q=%C3%28');
  t.match(badQuery, { status: 400, body: { code: 'invalid_encoding' } });
  const badPath = await api(s, '/api/v1/probe/%FF', { method: 'POST', json: { text: 'x' } });
  t.match(badPath, { status: 400, body: { code: 'invalid_encoding' } });
  const badBody = await api(s, '/api/v1/probe/a', {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: Buffer.from([0x7b, 0x22, 0x74, 0x65, 0x78, 0x74, 0x22, 0x3a, 0x22, 0xff, 0x22, 0x7d]), // {"text":"\xff"}
  });
  t.match(badBody, { status: 400, body: { code: 'invalid_encoding' } });
  const badMcp = await api(s, '/mcp', {
    method: 'POST',
    headers: { ...mcpHeaders, 'content-type': 'application/json' },
    body: Buffer.from('{"a":"\xff"}', 'latin1'),
  });
  t.match(badMcp, { status: 400, body: { code: 'invalid_encoding' } });
  t.equal((await api(s, '/api/v1/probe?q=%C3%A9t%C3%A9')).status, 200, 'valid UTF-8 passes');

  for (const name of ['__proto__', 'constructor', 'toString', 'hasOwnProperty']) {
    const q = await api(s, `/api/v1/probe?q=x&${name}=1`);
    t.match(
      q,
      { status: 422, body: { code: 'validation_failed', errors: [{ path: [name], issue: 'unrecognized parameter' }] } },
      `query ${name}`,
    );
    const b = await api(s, '/api/v1/probe/a', {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: `{"text":"x","${name}":{}}`,
    });
    t.match(b, { status: 422, body: { code: 'validation_failed', errors: [{ path: [name] }] } }, `body ${name}`);
  }

  const two = await raw(s, {
    method: 'GET',
    path: '/api/v1/probe?q=x',
    headers: { host: new URL(s.url).host, authorization: [`Bearer ${s.key}`, 'Bearer svc_other'] },
  });
  t.match(two, { status: 400, body: { code: 'bad_request' } });
});

t.test('issue 12 item 5: page_ref above 2^31-1 is a 422 on REST and MCP; internal-error logs carry no caller input', async (t) => {
  const s = await startTestService();
  t.teardown(s.close);
  for (const ref of ['2147483648', '99999999999', '9007199254740993']) {
    const r = await api(s, `/api/v1/passages?page_ref=${ref}`);
    t.match(r, { status: 422, body: { code: 'validation_failed', errors: [{ path: ['page_ref'] }] } }, `REST page_ref=${ref}`);
  }
  t.equal((await api(s, '/api/v1/passages?page_ref=2147483647')).status, 404, 'the largest storable value is a normal lookup');
  const m = await rpc(
    s,
    { jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: 'svc_page', arguments: { page_ref: 2 ** 31 } } },
    { 'mcp-protocol-version': '2025-11-25' },
  );
  const result = (m.body as { result: { isError: boolean; content: { text: string }[] } }).result;
  t.match(JSON.parse(result.content[0]!.text), { code: 'validation_failed', status: 422 });
  t.notOk(
    s.logLines.some((l) => l.includes('"level":50')),
    'no internal error logged',
  );
  // Every integer input of every tool has a maximum the Int32 columns can hold.
  const { toolJsonSchemas } = await import('../../tools/json-schema.js');
  for (const tool of allTools) {
    for (const [name, prop] of Object.entries(toolJsonSchemas(tool).input.properties ?? {})) {
      const p = prop as { type?: string; maximum?: number };
      if (p.type === 'integer') t.ok(p.maximum !== undefined && p.maximum <= 2 ** 31 - 1, `${tool.name}.${name} has a storable maximum`);
    }
  }
});

t.test('issue 12 item 5: an internal error logs its class and frames, never its message or the input', async (t) => {
  const s = await startTestService({ tools: [probeTool] });
  t.teardown(s.close);
  const r = await api(s, '/api/v1/probe?q=caller-secret-value&fail=internal');
  t.equal(r.status, 500);
  const lines = s.logLines.filter((l) => l.includes('internal error'));
  t.equal(lines.length, 1);
  t.notMatch(lines[0], /caller-secret-value|secret internal detail/);
  t.match(JSON.parse(lines[0]!), { err: { name: 'Error', frames: Array } });
});

t.test('issue 12 item 6: a name resolving only to non-public addresses is refused at submission', async (t) => {
  // Names resolve through this table to loopback or reserved ranges only (none is ever contacted: submission only
  // classifies). That every address of a name is allowed is the classifier's, tested in test/crawler/address.test.ts.
  const table: Record<string, string[]> = {
    'localtest.me': ['127.0.0.1'],
    'mixed.example.ca': ['203.0.113.9', '10.1.2.3'],
    'allowed.example.ca': ['127.0.0.2'],
    'half-allowed.example.ca': ['127.0.0.2', '10.1.2.3'],
  };
  const lookup = async (host: string) => {
    const a = table[host];
    if (!a) throw Object.assign(new Error('nx'), { code: 'ENOTFOUND' });
    return a.map((address) => ({ address, family: address.includes(':') ? 6 : 4 }));
  };
  const s = await startTestService({ lookup });
  t.teardown(s.close);
  const submit = (svc: typeof s, url: string) => api(svc, '/api/v1/requests', { method: 'POST', json: { type: 'discovery', url } });
  const blocked = await submit(s, 'http://localtest.me/admin');
  t.match(blocked, { status: 400, body: { code: 'blocked_address', errors: [{ path: ['url'] }] } });
  t.match((blocked.body as { detail: string }).detail, /loopback/);
  t.match(
    await submit(s, 'https://mixed.example.ca/'),
    { status: 400, body: { code: 'blocked_address' } },
    'any private address: SvcBot would refuse the fetch',
  );
  // The accepted case: a name that resolves to nothing here (classified only, never contacted: crawling is off).
  const accepted = await submit(s, 'https://unknown-name.example.ca/');
  t.equal(accepted.status, 202, 'unresolvable names are accepted as before');
  t.match(
    await submit(s, 'https://allowed.example.ca/'),
    { status: 400, body: { code: 'blocked_address' } },
    'a name resolving to loopback is refused',
  );
  t.match(
    await submit(s, 'https://half-allowed.example.ca/'),
    { status: 400, body: { code: 'blocked_address' } },
    'one loopback address does not excuse a private one, nor the reverse',
  );
  const id = (accepted.body as { request: { id: string } }).request.id;
  t.match((await api(s, `/api/v1/requests/${id}`)).body, { request: { status: 'received' } }, 'accepted, never fetched here');
  t.same(refusedTargets, [], 'no connection to any non-loopback address was even attempted');
});

t.test('issue 12 item 6: a slow resolver does not hold a submission', async (t) => {
  const { refuseBlockedAddresses } = await import('../../tools/submit-url.js');
  const started = Date.now();
  await refuseBlockedAddresses('https://slow.example.ca/', {
    resolver: { resolve: () => new Promise<string[]>((r) => setTimeout(() => r(['127.0.0.1']), 5_000).unref()) },
    timeoutMs: 50,
  });
  t.ok(Date.now() - started < 2_000, 'accepted after the timeout');
  await t.rejects(refuseBlockedAddresses('https://pinned.example.ca:8443/', { resolver: { resolve: async () => ['::1'] } }), {
    code: 'blocked_address',
  });
  // Issue 46: loopback is refused to callers whatever --allow-loopback says (pinned URLs never come here).
  await t.rejects(refuseBlockedAddresses('https://pinned.example.ca/', { resolver: { resolve: async () => ['127.0.0.1'] } }), {
    code: 'blocked_address',
  });
});

t.test('issue 12 item 1: served names from the configuration (SVC_ALLOWED_HOSTS, wildcard binds)', async (t) => {
  const { loadConfig } = await import('../../config.js');
  const { servedHosts } = await import('../../rest/served-host.js');
  const cfg = loadConfig({ env: { SVC_ALLOWED_HOSTS: 'search.example.org, api.example.org:8443' } });
  t.same(cfg.allowedHosts, ['search.example.org', 'api.example.org:8443']);
  const served = servedHosts({ bindHost: '0.0.0.0', allowedHosts: cfg.allowedHosts, allowedOrigins: ['https://search.example.org'] });
  for (const ok of ['127.0.0.1', 'localhost:1', '[::1]:8787', 'search.example.org', 'search.example.org.:443', 'api.example.org:8443']) {
    t.ok(served.hostAllowed(ok), `${ok} served`);
  }
  for (const no of [
    '',
    'evil.example',
    'api.example.org',
    'api.example.org:443',
    'a b',
    '[zz]',
    'localhost.evil.example',
    '127.0.0.1.nip.io',
  ]) {
    t.notOk(served.hostAllowed(no), `${JSON.stringify(no)} refused`);
  }
  t.ok(served.originAllowed('https://search.example.org', 'search.example.org'), 'the TLS front end origin, listed');
  t.ok(served.originAllowed('http://search.example.org', 'search.example.org'), 'own origin through an allowed Host');
  t.notOk(served.originAllowed('https://evil.example', 'search.example.org'));
  t.notOk(served.originAllowed('http://evil.example', 'evil.example'), 'a rebinding name is never its own origin');
  const narrow = servedHosts({ bindHost: '127.0.0.1', allowedHosts: [], allowedOrigins: [] });
  t.notOk(narrow.hostAllowed('192.0.2.10'), 'an address the service is not bound to');
});
