/**
 * Issue 11: the webmaster foundation and the attribution marker are NOT exposed. On a whole running service (every
 * registered tool, the web pages, an index filled by a real crawl of the fixture web):
 * - every /api/v1 operation of the served OpenAPI document is called with valid arguments, and every answer, the
 *   OpenAPI document, /mcp tools/list and every web page and asset is scanned for a webmaster or attribution surface;
 * - webmaster-looking paths under /api/v1 (and beside it) answer 404;
 * - no stored URL and no file of the data dir (SQLite, LanceDB) contains svc_source or svc_medium;
 * - in the source, the two parameter names are written only in webmaster/attribution.ts, and nothing outside
 *   webmaster/ and cli/webmaster.ts imports webmaster/.
 */
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import t, { type Test } from 'tap';
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join, relative } from 'node:path';
import { openStateDb } from '../../state/db.js';
import { ATTRIBUTION_ACTIVE, ATTRIBUTION_MARKER, ATTRIBUTION_PARAMETERS } from '../../webmaster/attribution.js';
import { DNS_TXT_LABEL, META_NAME, WELL_KNOWN_PATH } from '../../webmaster/checkers.js';
import { FAST_LANE_REASON } from '../../webmaster/fast-lane.js';
import { CHALLENGE_PREFIX } from '../../webmaster/ownership.js';
import { startWebService, type WebService } from '../web/web-service.js';

const root = join(import.meta.dirname, '..', '..');

/** Strings that only the webmaster foundation or the attribution marker would put into an answer or a page. */
const MARKERS = [
  ...ATTRIBUTION_PARAMETERS,
  META_NAME,
  DNS_TXT_LABEL,
  WELL_KNOWN_PATH,
  CHALLENGE_PREFIX,
  FAST_LANE_REASON,
  'fast lane',
  'fast-lane',
  'webmaster_',
  'ownership proof',
  'verify ownership',
  'verified owner',
  'conversion',
  'tracking pixel',
];

function scan(t: Test, where: string, text: string): void {
  const lower = text.toLowerCase();
  const hits = MARKERS.filter((m) => lower.includes(m.toLowerCase()));
  t.same(hits, [], `${where}: no webmaster or attribution surface`);
}

function files(dir: string, skip: (p: string) => boolean = () => false): string[] {
  return readdirSync(dir).flatMap((f) => {
    const p = join(dir, f);
    if (skip(p)) return [];
    return statSync(p).isDirectory() ? files(p, skip) : [p];
  });
}

t.test('issue 11: the attribution marker is defined once, fixed and inactive', async (t) => {
  t.same(ATTRIBUTION_MARKER, { svc_source: 'svc', svc_medium: 'search' });
  t.same([...ATTRIBUTION_PARAMETERS], ['svc_source', 'svc_medium']);
  t.equal(ATTRIBUTION_ACTIVE, false);
  t.ok(Object.isFrozen(ATTRIBUTION_MARKER));
  const sources = files(root, (p) => /\/(node_modules|dist|\.git|\.tap|test|docs|data)$/.test(p) || /\/\.scratch/.test(p)).filter((f) =>
    /\.(ts|js|mjs|html|css)$/.test(f),
  );
  t.ok(sources.length > 50, `source files scanned (${sources.length})`);
  const naming = sources.filter((f) => /svc_(source|medium)/.test(readFileSync(f, 'utf8'))).map((f) => relative(root, f));
  t.same(naming, ['webmaster/attribution.ts'], 'the parameter names are written in one place only');
  const importers = sources
    .filter((f) => !relative(root, f).startsWith('webmaster/') && relative(root, f) !== 'cli/webmaster.ts')
    .filter((f) => /from ['"][./]*\/?webmaster\//.test(readFileSync(f, 'utf8')))
    .map((f) => relative(root, f));
  t.same(importers, [], 'nothing but cli/webmaster.ts imports webmaster/ (no route, tool or page can reach it)');
});

t.test('issue 11: no /api/v1 route, MCP tool, OpenAPI entry or web page reaches the webmaster foundation or the marker', async (t) => {
  const s: WebService = await startWebService();
  t.teardown(() => s.close());
  const auth = { authorization: `Bearer ${s.key}` };
  const get = async (path: string, headers: Record<string, string> = auth) => {
    const res = await fetch(s.url + path, { headers });
    return { status: res.status, text: await res.text() };
  };
  const post = async (path: string, json: unknown) => {
    const res = await fetch(s.url + path, {
      method: 'POST',
      headers: { ...auth, 'content-type': 'application/json' },
      body: JSON.stringify(json),
    });
    return { status: res.status, text: await res.text() };
  };

  // The OpenAPI document as served.
  const openapi = await get('/api/v1/openapi.json');
  t.equal(openapi.status, 200);
  scan(t, 'OpenAPI document', openapi.text);
  const doc = JSON.parse(openapi.text) as { paths: Record<string, Record<string, unknown>> };
  const operations = Object.entries(doc.paths).flatMap(([p, ops]) => Object.keys(ops).map((m) => `${m.toUpperCase()} ${p}`));
  for (const op of operations)
    t.notMatch(op, /webmaster|propert|ownership|verif|fast.?lane|attribution/i, `${op} is not a webmaster route`);

  // Every operation, called with valid arguments (the table must cover every served operation).
  const host = 'gen-0.test';
  const pageUrl = s.web.url(host, '/p/1.html');
  const created = await post('/api/v1/requests', { type: 'recrawl', url: pageUrl });
  const requestId = (JSON.parse(created.text) as { id?: string }).id ?? 'none';
  const entities = await get('/api/v1/entities?q=bibliotheque');
  const entityId = ((JSON.parse(entities.text) as { entities?: { id: string }[] }).entities ?? [])[0]?.id ?? 'ent_none';
  const calls: Record<string, () => Promise<{ status: number; text: string }>> = {
    'GET /api/v1/search': () => get(`/api/v1/search?q=${encodeURIComponent('library hours')}`),
    'POST /api/v1/context': () => post('/api/v1/context', { query: 'school opening hours', max_tokens: 800 }),
    'GET /api/v1/fresh': () => get('/api/v1/fresh'),
    'GET /api/v1/passages': () => get('/api/v1/passages?page_ref=1'),
    'GET /api/v1/entities': async () => entities,
    'GET /api/v1/entities/{id}': () => get(`/api/v1/entities/${encodeURIComponent(entityId)}`),
    'GET /api/v1/site/{host}': () => get(`/api/v1/site/${host}`),
    'POST /api/v1/requests': async () => created,
    'GET /api/v1/requests/{id}': () => get(`/api/v1/requests/${requestId}`),
    'GET /api/v1/images': () => get('/api/v1/images?q=bakery'),
  };
  t.same(operations.sort(), Object.keys(calls).sort(), 'every served operation is scanned');
  for (const [op, call] of Object.entries(calls)) {
    const res = await call();
    t.ok(res.status < 500, `${op} answered ${res.status}`);
    scan(t, op, res.text);
  }
  const site = JSON.parse((await get(`/api/v1/site/${host}`)).text) as { scope?: { indexed?: number } };
  t.ok((site.scope?.indexed ?? 0) > 0, 'the index has pages (the scans saw real results)');

  // Paths a webmaster surface would use: nothing there.
  for (const p of [
    '/api/v1/webmaster',
    '/api/v1/webmasters',
    '/api/v1/webmaster/properties',
    '/api/v1/properties',
    '/api/v1/properties/x/verify',
    '/api/v1/verification',
    '/api/v1/fast-lane',
    '/api/v1/submit',
    '/api/v1/attribution',
    '/webmaster',
    '/console',
    '/webmaster/console',
    '/properties',
  ]) {
    t.equal((await get(p)).status, 404, `GET ${p} → 404`);
    t.equal((await post(p, { name: 'example.ca' })).status, 404, `POST ${p} → 404`);
  }

  // MCP tools/list through the SDK client.
  const client = new Client({ name: 'absence-test', version: '1.0.0' });
  await client.connect(new StreamableHTTPClientTransport(new URL(s.url + '/mcp'), { requestInit: { headers: auth } }));
  t.teardown(() => client.close());
  const tools = await client.listTools();
  t.ok(tools.tools.length >= 8, `${tools.tools.length} tools listed`);
  for (const tool of tools.tools) t.notMatch(tool.name, /webmaster|propert|ownership|verif|fast.?lane|attribution/i, `tool ${tool.name}`);
  scan(t, 'MCP tools/list', JSON.stringify(tools));

  // The web pages and their assets. /webmasters is the public page about how SvcBot crawls (it says the console is
  // planned and not open): no console, no proof, no submission to it.
  for (const page of ['/', '/manage-url', '/webmasters']) {
    const res = await get(page, {});
    t.equal(res.status, 200, page);
    scan(t, `page ${page}`, res.text);
    for (const m of res.text.matchAll(/(?:src|href)="(\/assets\/[^"]+)"/g)) scan(t, `asset ${m[1]}`, (await get(m[1]!, {})).text);
  }

  // Stored data: no URL the service stored carries a marker parameter; no file of the data dir contains one.
  const db = openStateDb(join(s.config.dataDir, 'state.sqlite'));
  const urls = [
    ...(db.prepare('SELECT url FROM documents').all() as { url: string }[]),
    ...(db.prepare('SELECT url FROM frontier').all() as { url: string }[]),
    ...(db.prepare('SELECT url FROM url_requests').all() as { url: string }[]),
  ].map((r) => r.url);
  db.close();
  t.ok(urls.length > 10, `${urls.length} stored URLs`);
  t.same(
    urls.filter((u) => /svc_(source|medium)/.test(u)),
    [],
  );
  const stored = files(s.config.dataDir);
  t.ok(stored.some((f) => f.includes('lance')) && stored.some((f) => f.endsWith('state.sqlite')), 'index and database files scanned');
  for (const f of stored) {
    const bytes = readFileSync(f);
    for (const p of ATTRIBUTION_PARAMETERS) t.equal(bytes.indexOf(p), -1, `${relative(s.config.dataDir, f)} has no ${p}`);
  }
});
