import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import t from 'tap';
import { inlineExecutor, type ToolExecutor } from '../../tools/executor.js';
import { allTools } from '../../tools/registry.js';
import { POOLED_TOOLS } from '../../tools/search-worker.js';
import { api, startTestService } from '../helpers/service.js';

/**
 * Issue 42 item 3: a tool says where it runs (`runsOn`), and `callTool` hands every call to the services' executor
 * (tools/executor.ts) instead of main.ts swapping the tool's `run`: REST and MCP reach the handler by the same path.
 */
t.test('issue 42: every tool declares where it runs; the search threads run exactly the search-thread ones', async (t) => {
  t.same(
    allTools.map((x) => [x.name, x.runsOn]),
    [
      ['svc_search', 'search-thread'],
      ['svc_context', 'search-thread'],
      ['svc_fresh', 'main'],
      ['svc_page', 'main'],
      ['svc_entities', 'main'],
      ['svc_site', 'main'],
      ['svc_submit_url', 'main'],
      ['svc_request_status', 'main'],
      ['svc_images', 'main'],
    ],
  );
  t.same(
    [...POOLED_TOOLS.values()],
    allTools.filter((x) => x.runsOn === 'search-thread'),
    'the threads hold the very definitions the registry lists',
  );
});

t.test('issue 42: REST and MCP calls both go through the executor, with the parsed input; its answer is checked', async (t) => {
  const s = await startTestService({ perMinute: 1000 });
  t.teardown(s.close);
  t.equal(s.services.deps.executor, inlineExecutor, 'no search threads: every tool runs on the calling thread');
  const seen: { tool: string; runsOn: string; input: unknown }[] = [];
  let answer: 'run' | 'bad' = 'run';
  const recording: ToolExecutor = {
    run: (tool, input, ctx) => {
      seen.push({ tool: tool.name, runsOn: tool.runsOn, input });
      return answer === 'run' ? tool.run(input, ctx) : Promise.resolve({ nonsense: true } as never);
    },
  };
  // The REST app and the MCP route read the executor from the services' deps on each call.
  (s.services.deps as { executor?: ToolExecutor }).executor = recording;
  const rest = await api(s, '/api/v1/search?q=passport');
  t.equal(rest.status, 200);
  const client = new Client({ name: 'executor', version: '1' });
  await client.connect(
    new StreamableHTTPClientTransport(new URL(s.url + '/mcp'), { requestInit: { headers: { Authorization: `Bearer ${s.key}` } } }),
  );
  t.teardown(() => client.close());
  const mcp = await client.callTool({ name: 'svc_search', arguments: { q: 'passport' } });
  t.same(mcp.structuredContent, rest.body, 'the same answer both ways');
  const fresh = await api(s, '/api/v1/fresh');
  t.equal(fresh.status, 200);
  t.same(
    seen.map((x) => [x.tool, x.runsOn]),
    [
      ['svc_search', 'search-thread'],
      ['svc_search', 'search-thread'],
      ['svc_fresh', 'main'],
    ],
    'REST, MCP and a main-thread tool: each call handed to the executor once',
  );
  t.same(seen[0]!.input, seen[1]!.input, 'the same parsed input from REST and MCP');
  t.equal((seen[0]!.input as { limit: number }).limit, 10, 'parsed: defaults applied before the executor');
  answer = 'bad';
  const bad = await api(s, '/api/v1/search?q=passport');
  t.equal(bad.status, 500, "an executor's answer is checked against the output schema like a handler's");
  t.equal((bad.body as { code: string }).code, 'internal');
});
