/**
 * What one internal shard call costs a searcher, by the handler that answers it: the plain handler the server runs
 * before the app's middleware (`shardPlainRoute`), or the app's own route (Koa: request log, error funnel, security
 * headers, Host check, router), which answers the same call when its path carries a query string. One searcher
 * process (bench/shards.ts `--serve searcher`) over a shard of a bench/shards.ts index; `--calls` sequential `lookup`
 * calls of a 3-word query (a query's cheapest call: its work is a few map reads, the rest is the call's fixed cost)
 * per block, the two handlers' blocks alternating `--rounds` times in the same minutes; the searcher's CPU time (all
 * threads, /proc) per call, the median block of each handler.
 *
 *   npx tsc -p . && nice -n 5 node dist/bench/shard-route-cost.js --data-dir /tmp/bench-shards-1m/n4 [--shard 0]
 *       [--calls 1000] [--rounds 5]
 */
import '../fixtures/loopback-only.js';
import { spawn } from 'node:child_process';
import { loadavg } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { Pool } from 'undici';
import { processCpuMs } from './proc.js';

const { values } = parseArgs({
  options: {
    'data-dir': { type: 'string', default: '/tmp/bench-shards-1m/n4' },
    shard: { type: 'string', default: '0' },
    calls: { type: 'string', default: '1000' },
    rounds: { type: 'string', default: '5' },
  },
});
// The secret bench/shards.ts starts its processes with.
const SECRET = 'bench-shards-fleet-secret-0123456789';
const calls = Math.max(100, Number(values.calls) || 1000);
const rounds = Math.max(1, Math.min(20, Number(values.rounds) || 5));
const shardsJs = join(fileURLToPath(new URL('.', import.meta.url)), `shards.${import.meta.url.endsWith('.ts') ? 'ts' : 'js'}`);
const args = [
  ...(shardsJs.endsWith('.ts') ? ['--import', 'tsx'] : []),
  shardsJs,
  '--serve',
  'searcher',
  '--serve-dir',
  values['data-dir'],
  '--serve-shard',
  values.shard,
];
const child = spawn(process.execPath, args, { stdio: ['pipe', 'inherit', 'pipe'] });
const url = await new Promise<string>((res, rej) => {
  child.once('exit', (code) => rej(new Error(`the searcher exited (${code})`)));
  createInterface({ input: child.stderr! }).on('line', (line) => {
    if (line.startsWith('{"tag":"svc-bench-ready"')) res((JSON.parse(line) as { url: string }).url);
  });
});

const pool = new Pool(url, { connections: 1, pipelining: 1 });
const body = JSON.stringify({
  domains: [],
  lang: null,
  titleTerms: ['cell', 'protein', 'express'],
  terms: ['cell', 'protein', 'express'],
});
const path = `/internal/v1/shard/${values.shard}/lookup`;
async function block(via: 'plain' | 'app'): Promise<number> {
  const cpu0 = processCpuMs(child.pid!);
  for (let i = 0; i < calls; i++) {
    const r = await pool.request({
      path: via === 'app' ? `${path}?via=app` : path,
      method: 'POST',
      headers: { authorization: `Bearer ${SECRET}`, 'content-type': 'application/json' },
      body,
    });
    await r.body.text();
    if (r.statusCode !== 200) throw new Error(`${via}: HTTP ${r.statusCode}`);
  }
  return (processCpuMs(child.pid!) - cpu0) / calls;
}

await block('plain'); // warm-up: both handlers' code compiled before the first measured block
await block('app');
const per: Record<'plain' | 'app', number[]> = { plain: [], app: [] };
for (let r = 0; r < rounds; r++)
  for (const via of r % 2 === 0 ? (['plain', 'app'] as const) : (['app', 'plain'] as const)) per[via].push(await block(via));
const median = (xs: number[]): number => [...xs].sort((a, b) => a - b)[xs.length >> 1]!;
console.log(
  `searcher CPU per lookup call (ms, median of ${rounds} blocks of ${calls}): plain handler ${median(per.plain).toFixed(3)}, ` +
    `app route ${median(per.app).toFixed(3)} (blocks: plain ${per.plain.map((x) => x.toFixed(3)).join(' ')}; app ${per.app
      .map((x) => x.toFixed(3))
      .join(' ')}); load ${loadavg()
      .map((l) => l.toFixed(1))
      .join(' ')}`,
);
await pool.close();
child.stdin!.write('stop\n');
await new Promise((r) => child.once('close', r));
process.exit(0);
