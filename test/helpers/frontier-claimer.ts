/**
 * A crawler-worker stand-in for the PostgreSQL concurrency tests, run as its own process:
 *   node --import tsx test/helpers/frontier-claimer.ts <database-url> drain <name> <fetchMs>
 *     claims until the frontier has nothing unfinished, "fetching" fetchMs per item, printing one JSON line per claim;
 *   node --import tsx test/helpers/frontier-claimer.ts <database-url> hold <name> <leaseMs>
 *     claims one item, prints it, then hangs (the test kills it with SIGKILL).
 */
import { openPostgresRepositories } from '../../state/repos/postgres.js';

const [url, mode, name, msArg] = process.argv.slice(2) as [string, string, string, string];
const ms = Number(msArg);
const repos = await openPostgresRepositories(url, { poolSize: 2 });
const sleep = (n: number) => new Promise((r) => setTimeout(r, n));

if (mode === 'hold') {
  const item = await repos.frontier.claim({ owner: name, leaseMs: ms });
  process.stdout.write(JSON.stringify(item) + '\n');
  setInterval(() => undefined, 60_000);
} else {
  for (;;) {
    const now = Date.now();
    const item = await repos.frontier.claim({ owner: name, leaseMs: 30_000, now });
    if (!item) {
      if ((await repos.frontier.unfinished()) === 0) break;
      await sleep(5);
      continue;
    }
    process.stdout.write(JSON.stringify({ worker: name, url: item.url, host: item.host, at: now }) + '\n');
    await sleep(ms);
    await repos.frontier.complete(item, { recrawlAt: Number.MAX_SAFE_INTEGER, status: 200 });
  }
  await repos.close();
}
