/**
 * What auth + rate limits + validation cost: autocannon on loopback against
 *   1. a bare Koa hello-world,
 *   2. svc's /healthz (Koa stack: request log, error funnel, security headers, router),
 *   3. svc's GET /api/v1/search on an empty index (Bearer check, SQLite quota counter, query coercion, zod input
 *      and output validation, the tool itself),
 * all in the same run, on the same machine. Prints req/s, p50 and p99 latency and the ratio to bare Koa.
 *
 *   node --import tsx bench/http-shell.ts [--seconds 8] [--connections 16]
 */
// First: only loopback may ever be contacted, and no DNS query leaves the process (fixtures/loopback-only.ts).
import '../fixtures/loopback-only.js';
import autocannon from 'autocannon';
import Koa from 'koa';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { loadConfig } from '../config.js';
import { createLogger } from '../logger.js';
import { createServices, startServer } from '../main.js';
import { setLanceCpuThreads } from '../index/engines/lance/lance-threads.js';

setLanceCpuThreads(); // as svc's own entry does (cli/main.ts)

const { values } = parseArgs({ options: { seconds: { type: 'string', default: '8' }, connections: { type: 'string', default: '16' } } });
const duration = Math.min(60, Number(values.seconds));
const connections = Math.min(64, Number(values.connections));

async function measure(title: string, url: string, headers: Record<string, string> = {}) {
  const r = await autocannon({ url, connections, duration, headers, pipelining: 1 });
  return { title, rps: r.requests.average, p50: r.latency.p50, p99: r.latency.p99, non2xx: r.non2xx, errors: r.errors };
}

const bare = new Koa();
bare.use((ctx) => {
  ctx.body = { status: 'ok' };
});
const bareServer = createServer(bare.callback());
await new Promise<void>((r) => bareServer.listen(0, '127.0.0.1', r));
const bareUrl = `http://127.0.0.1:${(bareServer.address() as AddressInfo).port}/`;

const dataDir = mkdtempSync(join(tmpdir(), 'svc-bench-'));
const config = loadConfig({ env: {}, flags: { dataDir, port: 0, crawl: false } });
const services = await createServices(config, { log: createLogger({ level: 'silent' }) });
const { key } = await services.keys.create({ name: 'bench', perMinute: 1_000_000, perDay: 100_000_000 });
const running = await startServer(services);

const rows = [];
rows.push(await measure('bare Koa hello-world', bareUrl));
rows.push(await measure('svc /healthz', `${running.url}/healthz`));
rows.push(
  await measure('svc GET /api/v1/fresh (auth + quota + validation + one SQLite read)', `${running.url}/api/v1/fresh?window=1h`, {
    authorization: `Bearer ${key}`,
  }),
);
rows.push(
  await measure('svc GET /api/v1/search (empty index)', `${running.url}/api/v1/search?q=public+library&limit=10`, {
    authorization: `Bearer ${key}`,
  }),
);

const base = rows[0]!.rps;
console.log(`\nconnections=${connections} duration=${duration}s node=${process.version} cores=2\n`);
console.log('| target | req/s | p50 ms | p99 ms | vs bare Koa | non-2xx | errors |');
console.log('|---|---:|---:|---:|---:|---:|---:|');
for (const r of rows) {
  console.log(
    `| ${r.title} | ${r.rps.toFixed(0)} | ${r.p50} | ${r.p99} | ${((r.rps / base) * 100).toFixed(1)}% | ${r.non2xx} | ${r.errors} |`,
  );
}
await running.close();
await services.close();
bareServer.close();
rmSync(dataDir, { recursive: true, force: true });
