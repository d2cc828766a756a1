/**
 * Issue 46 item 3: integer query parameters are plain decimal digits (docs/api.md), and the schema's stated bounds
 * are the ones enforced: a province the schema does not admit is refused, one it admits is accepted.
 */
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import t from 'tap';
import { api, startTestService } from '../helpers/service.js';

t.test('issue 46 item 3: integers in a query string are plain decimal digits; anything else is 422', async (t) => {
  const s = await startTestService({ perMinute: 10_000 });
  t.teardown(s.close);
  const refused: [string, string][] = [
    ['limit', '5.0'],
    ['limit', '+5'],
    ['limit', '%205'],
    ['limit', '5%20'],
    ['limit', '%095'],
    ['limit', '05'],
    ['limit', '5e0'],
    ['limit', '0x5'],
    ['limit', '5.'],
    ['limit', '.5e1'],
    ['limit', ''],
    ['offset', '-0'],
    ['offset', '00'],
    ['offset', '+0'],
  ];
  for (const [name, raw] of refused) {
    const r = await api(s, `/api/v1/search?q=cell&${name}=${raw}`);
    t.equal(r.status, 422, `${name}=${raw}: 422`);
    t.match(r.body, { code: 'validation_failed', errors: [{ path: [name] }] }, `${name}=${raw}: names the field`);
  }
  // Strictness is about the spelling, not the value: these are plain digits.
  for (const q of ['limit=5&offset=0', 'limit=20&offset=90', 'limit=1'])
    t.equal((await api(s, `/api/v1/search?q=cell&${q}`)).status, 200, q);
  // A plain negative number is an integer out of bounds (still 422, for the bound).
  t.match(await api(s, '/api/v1/search?q=cell&offset=-1'), { status: 422, body: { errors: [{ path: ['offset'] }] } });
  t.match(await api(s, '/api/v1/passages?page_ref=007'), { status: 422, body: { errors: [{ path: ['page_ref'] }] } });
});

t.test('issue 46 item 3: over MCP a number is a JSON number; a string or a fraction is 422', async (t) => {
  const s = await startTestService({ perMinute: 10_000 });
  t.teardown(s.close);
  const client = new Client({ name: 'svc-test', version: '1.0.0' });
  await client.connect(
    new StreamableHTTPClientTransport(new URL(`${s.url}/mcp`), { requestInit: { headers: { Authorization: `Bearer ${s.key}` } } }),
  );
  t.teardown(() => client.close());
  for (const limit of ['5', '05', 5.5]) {
    const r = await client.callTool({ name: 'svc_search', arguments: { q: 'cell', limit } });
    t.equal(r.isError, true, `limit ${JSON.stringify(limit)} refused`);
    const p = JSON.parse((r.content as { text: string }[])[0]!.text) as { code: string; errors: { path: string[] }[] };
    t.equal(p.code, 'validation_failed');
    t.same(p.errors[0]?.path, ['limit']);
  }
  t.notOk((await client.callTool({ name: 'svc_search', arguments: { q: 'cell', limit: 5 } })).isError, 'limit 5 accepted');
});

t.test('issue 46 item 3: the province filters accept exactly what the schema states', async (t) => {
  const s = await startTestService({ perMinute: 10_000 });
  t.teardown(s.close);
  const openapi = (await api(s, '/api/v1/openapi.json')).body as {
    paths: Record<string, Record<string, { parameters?: { name: string; schema: Record<string, unknown> }[] }>>;
  };
  const province = openapi.paths['/api/v1/entities']!.get!.parameters!.find((p) => p.name === 'province')!.schema as {
    anyOf: { pattern?: string; enum?: string[] }[];
  };
  const pattern = new RegExp(province.anyOf.find((b) => b.pattern)!.pattern!);
  const names = province.anyOf.find((b) => b.enum)!.enum!;
  t.notOk(pattern.test('00'), 'the schema describes 00 as invalid');
  t.match(await api(s, '/api/v1/entities?province=00'), { status: 422, body: { errors: [{ path: ['province'] }] } });
  for (const v of ['QC', 'ca-on', 'Ca-Yt', ...names]) {
    t.ok(pattern.test(v) || names.includes(v), `${v}: schema-valid`);
    t.equal((await api(s, `/api/v1/entities?province=${encodeURIComponent(v)}`)).status, 200, `${v}: accepted`);
  }
  // Names are matched ignoring case and accents (a superset of the schema's spelling).
  t.equal((await api(s, '/api/v1/entities?province=quebec')).status, 200);
  // An unknown kind or a q without a word matches nothing: an empty list, not a 422 for a schema-valid string.
  t.match(await api(s, '/api/v1/entities?kind=Spaceship'), { status: 200, body: { entities: [] } });
  t.match(await api(s, '/api/v1/entities?q=%21%21%21'), { status: 200, body: { entities: [] } });
  // svc_context: the code pattern (case-folded) is the closed set.
  for (const p of ['qc', 'QC', 'CA-qc'])
    t.equal((await api(s, '/api/v1/context', { method: 'POST', json: { query: 'x', province: p } })).status, 200, p);
  for (const p of ['zz', 'CA-ZZ', 'Quebec'])
    t.match(await api(s, '/api/v1/context', { method: 'POST', json: { query: 'x', province: p } }), {
      status: 422,
      body: { errors: [{ path: ['province'] }] },
    });
});
