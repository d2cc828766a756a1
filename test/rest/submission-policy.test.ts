/**
 * Issue 46 item 4: --allow-loopback is the operator's switch for the crawler, never the caller's. With it on, URL
 * submissions over REST (the route the "Manage a URL" form posts to) and MCP reach only names the operator pinned
 * with --resolve; loopback or private literals and names DNS resolves there are refused before anything is fetched.
 */
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import t from 'tap';
import type { LookupFn } from '../../crawler/resolver.js';
import { refusedTargets } from '../../fixtures/loopback-only.js';
import { api, startTestService } from '../helpers/service.js';

/** DNS as a table: these names resolve where an attacker would point them; nothing is ever connected to. */
const dns: Record<string, string> = {
  'rebound.example.ca': '127.0.0.1',
  'v6.example.ca': '::1',
  'intranet.example.ca': '10.0.0.5',
  'metadata.example.ca': '169.254.169.254',
};
const lookup: LookupFn = async (host) => {
  const address = dns[host];
  if (address === undefined) throw Object.assign(new Error(`no test DNS for ${host}`), { code: 'ENOTFOUND' });
  return [{ address, family: address.includes(':') ? 6 : 4 }];
};

t.test('issue 46 item 4: with --allow-loopback, submissions reach only operator-pinned names (REST and MCP)', async (t) => {
  const pinnedPort = 18_080;
  const s = await startTestService({
    lookup,
    config: { crawlAllowLoopback: true, resolve: [`fixture.test:${pinnedPort}:127.0.0.1`, 'any-port.test:*:127.0.0.1'] },
  });
  t.teardown(s.close);
  const port = new URL(s.url).port;
  const client = new Client({ name: 'svc-test', version: '1.0.0' });
  await client.connect(
    new StreamableHTTPClientTransport(new URL(`${s.url}/mcp`), { requestInit: { headers: { Authorization: `Bearer ${s.key}` } } }),
  );
  t.teardown(() => client.close());

  const refused: [string, string][] = [
    [`http://127.0.0.1:${port}/`, 'invalid_host'],
    ['http://127.0.0.1:8787/', 'invalid_host'],
    ['http://[::1]/', 'invalid_host'],
    ['http://[::ffff:127.0.0.1]/', 'invalid_host'],
    ['http://2130706433/', 'invalid_host'],
    ['http://10.1.2.3/', 'invalid_host'],
    [`http://localhost:${port}/`, 'invalid_host'],
    [`http://fixture.test:${pinnedPort + 1}/`, 'invalid_host'],
    ['http://unpinned.test/', 'invalid_host'],
    ['http://rebound.example.ca/', 'blocked_address'],
    ['https://v6.example.ca/', 'blocked_address'],
    ['http://intranet.example.ca/', 'blocked_address'],
    ['http://metadata.example.ca/latest/', 'blocked_address'],
  ];
  for (const [url, code] of refused) {
    const rest = await api(s, '/api/v1/requests', { method: 'POST', json: { type: 'discovery', url } });
    t.equal(rest.status, 400, `REST ${url}: 400`);
    t.match(rest.headers.get('content-type'), /^application\/problem\+json/, `REST ${url}: problem+json`);
    t.match(rest.body, { code, errors: [{ path: ['url'] }] }, `REST ${url}: ${code}`);

    const mcp = await client.callTool({ name: 'svc_submit_url', arguments: { type: 'recrawl', url } });
    t.equal(mcp.isError, true, `MCP ${url}: isError`);
    const text = (mcp.content as { type: string; text: string }[])[0]?.text ?? '{}';
    t.match(JSON.parse(text), { code, status: 400 }, `MCP ${url}: ${code}`);
  }

  // The operator's pinned fixture names stay submittable (for their pinned port, or any port with a * pin).
  for (const url of [`http://fixture.test:${pinnedPort}/a.html`, 'http://any-port.test:9/']) {
    const rest = await api(s, '/api/v1/requests', { method: 'POST', json: { type: 'discovery', url } });
    t.equal(rest.status, 202, `REST ${url}: accepted`);
    const mcp = await client.callTool({ name: 'svc_submit_url', arguments: { type: 'recrawl', url } });
    t.notOk(mcp.isError, `MCP ${url}: accepted`);
  }
  t.same(refusedTargets, [], 'no connection to anything but loopback was attempted');
});
