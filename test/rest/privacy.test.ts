import { readFileSync, readdirSync, statSync } from 'node:fs';
import { join } from 'node:path';
import t from 'tap';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { api, startTestService } from '../helpers/service.js';
import { probePostTool, probeTool } from '../helpers/probe-tool.js';

function filesUnder(dir: string): string[] {
  return readdirSync(dir).flatMap((n) => {
    const p = join(dir, n);
    return statSync(p).isDirectory() ? filesUnder(p) : [p];
  });
}

t.test('no key, Authorization header, client IP, query text or body in logs or the data dir', async (t) => {
  const s = await startTestService({ tools: [probeTool, probePostTool] });
  const query = 'zebracorn-quasar-7781';
  const bodyText = 'platypus-nebula-3319';
  await api(s, `/api/v1/probe?q=${query}`);
  await api(s, `/api/v1/probe?q=${query}&limit=99`);
  await api(s, `/api/v1/probe?q=${query}&fail=internal`);
  await api(s, `/api/v1/probe/x`, { method: 'POST', json: { text: bodyText } });
  await api(s, `/api/v1/probe?q=${query}`, { auth: 'Bearer svc_wrong-key-mistyped' });
  const client = new Client({ name: 'privacy', version: '1' });
  await client.connect(
    new StreamableHTTPClientTransport(new URL(s.url + '/mcp'), { requestInit: { headers: { Authorization: `Bearer ${s.key}` } } }),
  );
  await client.callTool({ name: 'svc_probe', arguments: { q: query } });
  await client.close();
  const dataDir = s.dataDir;
  // Close first so the WAL is checkpointed into the main file too, then scan everything.
  await s.running.close();
  await s.services.close();
  const needles = [query, bodyText, s.key, s.key.slice(15), 'svc_wrong-key-mistyped', '127.0.0.1', '::ffff:127.0.0.1', 'Bearer'];
  t.ok(s.logLines.length >= 6, `logs were written (${s.logLines.length} lines)`);
  t.ok(
    s.logLines.some((l) => l.includes('"route":"/api/v1/probe"')),
    'log lines carry the route pattern',
  );
  for (const n of needles) {
    const hits = s.logLines.filter((l) => l.includes(n));
    t.same(hits, [], `no log line contains ${n}`);
  }
  for (const f of filesUnder(dataDir)) {
    const bytes = readFileSync(f);
    for (const n of needles) t.equal(bytes.indexOf(Buffer.from(n)), -1, `${f} does not contain ${n}`);
  }
  await s.close();
});
