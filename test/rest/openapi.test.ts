import { readFileSync } from 'node:fs';
import t from 'tap';
import { VERSION } from '../../main.js';
import { buildOpenApi } from '../../rest/openapi.js';
import { allTools } from '../../tools/registry.js';
import { api, startTestService } from '../helpers/service.js';

t.test('the committed docs/openapi.json matches the registry (regenerate: npx tsx cli/run.ts openapi > docs/openapi.json)', async (t) => {
  const golden = JSON.parse(readFileSync(new URL('../../docs/openapi.json', import.meta.url), 'utf8'));
  t.same(buildOpenApi(allTools, VERSION), golden, 'OpenAPI drifted from docs/openapi.json');
});

t.test('GET /api/v1/openapi.json is public and covers every REST route', async (t) => {
  const s = await startTestService();
  t.teardown(s.close);
  const r = await api(s, '/api/v1/openapi.json', { auth: null });
  t.equal(r.status, 200);
  const doc = r.body as { openapi: string; paths: Record<string, Record<string, { operationId: string }>> };
  t.equal(doc.openapi, '3.1.0');
  for (const tool of allTools) {
    for (const b of tool.rest) {
      const path = '/api/v1' + b.path.replace(/:([A-Za-z_]\w*)/g, '{$1}');
      t.ok(doc.paths[path]?.[b.method.toLowerCase()], `${b.method} ${path} documented`);
    }
  }
});
