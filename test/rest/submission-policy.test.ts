/**
 * Issue 46 item 4: --allow-loopback is the operator's switch for the crawler, never the caller's. With it on, URL
 * submissions over REST (the route the "Manage a URL" form posts to) and MCP reach only names the operator pinned
 * with --resolve; loopback or private literals and names DNS resolves there are refused with or without it, before
 * anything is fetched (crawling is off in these services).
 */
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import t from 'tap';
import type { LookupFn } from '../../crawler/resolver.js';
import { refusedTargets } from '../../fixtures/loopback-only.js';
import { api, startTestService, type TestService } from '../helpers/service.js';

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

async function mcpClient(s: TestService): Promise<Client> {
  const client = new Client({ name: 'svc-test', version: '1.0.0' });
  await client.connect(
    new StreamableHTTPClientTransport(new URL(`${s.url}/mcp`), { requestInit: { headers: { Authorization: `Bearer ${s.key}` } } }),
  );
  return client;
}

/** Submits `url` over REST and over MCP; returns both answers' status and code. */
async function submitBoth(s: TestService, client: Client, url: string) {
  const rest = await api(s, '/api/v1/requests', { method: 'POST', json: { type: 'discovery', url } });
  const mcp = await client.callTool({ name: 'svc_submit_url', arguments: { type: 'recrawl', url } });
  const text = (mcp.content as { type: string; text: string }[])[0]?.text ?? '{}';
  return { rest, mcp: { isError: mcp.isError === true, body: JSON.parse(text) as { code?: string; status?: number } } };
}

const pinnedPort = 18_080;
const pins = [`fixture.test:${pinnedPort}:127.0.0.1`, 'any-port.test:*:127.0.0.1'];

t.test('issue 46 item 4: with --allow-loopback, submissions reach only operator-pinned names (REST and MCP)', async (t) => {
  const s = await startTestService({ lookup, config: { crawlAllowLoopback: true, resolve: pins } });
  t.teardown(s.close);
  const port = new URL(s.url).port;
  const client = await mcpClient(s);
  t.teardown(() => client.close());

  const refused = [
    `http://127.0.0.1:${port}/`,
    'http://127.0.0.1:8787/',
    'http://[::1]/',
    'http://[::ffff:127.0.0.1]/',
    'http://2130706433/',
    'http://10.1.2.3/',
    `http://localhost:${port}/`,
    `http://fixture.test:${pinnedPort + 1}/`,
    'http://unpinned.test/',
    // Names DNS points at loopback or private space, and any other name: it could point there by fetch time.
    'http://rebound.example.ca/',
    'https://v6.example.ca/',
    'http://intranet.example.ca/',
    'http://metadata.example.ca/latest/',
    'https://www.example.ca/',
  ];
  for (const url of refused) {
    const { rest, mcp } = await submitBoth(s, client, url);
    t.equal(rest.status, 400, `REST ${url}: 400`);
    t.match(rest.headers.get('content-type'), /^application\/problem\+json/, `REST ${url}: problem+json`);
    t.match(rest.body, { code: 'invalid_host', errors: [{ path: ['url'] }] }, `REST ${url}: invalid_host`);
    t.equal(mcp.isError, true, `MCP ${url}: isError`);
    t.match(mcp.body, { code: 'invalid_host', status: 400 }, `MCP ${url}: invalid_host`);
  }

  // The operator's pinned fixture names stay submittable (for their pinned port, or any port with a * pin).
  for (const url of [`http://fixture.test:${pinnedPort}/a.html`, 'http://any-port.test:9/']) {
    const { rest, mcp } = await submitBoth(s, client, url);
    t.equal(rest.status, 202, `REST ${url}: accepted`);
    t.equal(mcp.isError, false, `MCP ${url}: accepted`);
  }
  t.same(refusedTargets, [], 'no connection to anything but loopback was attempted');
});

t.test('issue 46 item 4: without the switch, the same literals and names are refused; public names pass', async (t) => {
  const s = await startTestService({ lookup, config: { resolve: pins } });
  t.teardown(s.close);
  const client = await mcpClient(s);
  t.teardown(() => client.close());
  const refused: [string, string][] = [
    ['http://127.0.0.1:8787/', 'invalid_host'],
    ['http://[::1]/', 'invalid_host'],
    ['http://10.1.2.3/', 'invalid_host'],
    ['http://rebound.example.ca/', 'blocked_address'],
    ['https://v6.example.ca/', 'blocked_address'],
    ['http://intranet.example.ca/', 'blocked_address'],
    ['http://metadata.example.ca/latest/', 'blocked_address'],
  ];
  for (const [url, code] of refused) {
    const { rest, mcp } = await submitBoth(s, client, url);
    t.match(rest, { status: 400, body: { code } }, `REST ${url}: ${code}`);
    t.match(mcp, { isError: true, body: { code, status: 400 } }, `MCP ${url}: ${code}`);
  }
  for (const url of ['https://www.example.ca/', `http://fixture.test:${pinnedPort}/a.html`]) {
    const { rest, mcp } = await submitBoth(s, client, url);
    t.equal(rest.status, 202, `REST ${url}: accepted`);
    t.equal(mcp.isError, false, `MCP ${url}: accepted`);
  }
  t.same(refusedTargets, [], 'no connection to anything but loopback was attempted');
});
