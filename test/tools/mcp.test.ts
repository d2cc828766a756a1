import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { InMemoryTransport } from '@modelcontextprotocol/sdk/inMemory.js';
import t from 'tap';
import { z } from 'zod';
import { defineTool, type ToolContext } from '../../tools/define-tool.js';
import { listedTool } from '../../tools/json-schema.js';
import { buildMcpServer } from '../../tools/mcp.js';
import { allTools } from '../../tools/registry.js';
import { api, startTestService } from '../helpers/service.js';

t.test("the SDK's tools/list shows each tool exactly as listedTool writes it (the registerTool adapter)", async (t) => {
  const server = buildMcpServer({ tools: allTools, ctx: {} as ToolContext, version: 'test', countCall: async () => {} });
  const [a, b] = InMemoryTransport.createLinkedPair();
  await server.connect(a);
  const client = new Client({ name: 'list', version: '1' });
  await client.connect(b);
  t.teardown(() => client.close());
  for (let round = 0; round < 2; round++) {
    const { tools } = await client.listTools();
    t.same(
      tools.map((x) => x.name),
      allTools.map((x) => x.name),
    );
    for (const [i, listed] of tools.entries()) {
      // As sent on the wire; `execution` is the SDK's own default for tools registered with registerTool.
      const { execution: _sdkDefault, ...rest } = JSON.parse(JSON.stringify(listed)) as typeof listed;
      t.strictSame(rest, listedTool(allTools[i]!), `${listed.name}, listing ${round + 1}`);
    }
  }
});

let parses = 0;
const countingTool = defineTool({
  name: 'svc_count',
  title: 'Count',
  description: 'Counts how often its input is parsed.',
  runsOn: 'main',
  input: z.object({
    q: z.string().refine(() => ++parses > 0, 'never'),
    limit: z.number().int().min(1).max(5).default(3),
  }),
  output: z.object({ q: z.string(), limit: z.number() }),
  annotations: { readOnlyHint: true, openWorldHint: false },
  rest: [{ method: 'GET', path: '/count', source: 'query' }],
  run: async (input) => ({ q: input.q, limit: input.limit }),
});

t.test('a tools/call parses its arguments once, and the parsed value (defaults filled in) reaches the tool', async (t) => {
  const s = await startTestService({ tools: [countingTool] });
  t.teardown(s.close);
  const client = new Client({ name: 'count', version: '1' });
  await client.connect(
    new StreamableHTTPClientTransport(new URL(s.url + '/mcp'), { requestInit: { headers: { Authorization: `Bearer ${s.key}` } } }),
  );
  t.teardown(() => client.close());
  parses = 0;
  const out = await client.callTool({ name: 'svc_count', arguments: { q: 'x' } });
  t.same(out.structuredContent, { q: 'x', limit: 3 });
  t.equal(parses, 1, 'one zod parse of the arguments');
});

t.test('a refusal of the HTTP request itself wins over the answers of the tools/call screen', async (t) => {
  const s = await startTestService({ tools: [countingTool] });
  t.teardown(s.close);
  const call = { jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: 'svc_nope', arguments: {} } };
  const post = (headers: Record<string, string>, json: unknown = call) => api(s, '/mcp', { method: 'POST', json, headers });
  const accept = { accept: 'application/json, text/event-stream' };
  t.match(await post({ ...accept, 'mcp-protocol-version': '2025-06-18' }), { status: 200, body: { id: 1, error: { code: -32602 } } });
  t.match(await post({ ...accept, 'mcp-protocol-version': '1999-01-01' }), { status: 400 }, 'unsupported protocol version');
  t.match(await post({ accept: 'application/json', 'mcp-protocol-version': '2025-06-18' }), { status: 406 }, 'Accept without SSE');
  const batch = await post({ ...accept, 'mcp-protocol-version': '2025-03-26' }, [call, { jsonrpc: '2.0', id: 2, method: 'ping' }]);
  t.match(
    batch,
    {
      status: 200,
      body: [
        { id: 1, error: { code: -32602 } },
        { id: 2, result: {} },
      ],
    },
    'screened and SDK answers together',
  );
});
