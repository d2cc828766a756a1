/**
 * The PostgreSQL frontier claim on a large frontier: `FrontierRepo.claim` (state/repos/postgres/frontier.ts) takes
 * the best due URL whose host is free, `ORDER BY priority DESC, next_at, id … FOR UPDATE SKIP LOCKED`. Measured on
 * a frontier of `--rows` URLs over `--hosts` hosts (most due, a share done and waiting for their recrawl, a few
 * dead), with and without the index made for that order (migration `crawler-pg-002-frontier-claim-order`), plus the
 * plan PostgreSQL picks. PostgreSQL is a real server on loopback in a temp dir (the tests' helper), stopped at the end.
 *
 *   node --import tsx bench/frontier-claim-pg.ts [--rows 200000] [--hosts 2000] [--claims 300]
 */
import '../fixtures/loopback-only.js';
import { parseArgs } from 'node:util';
import pg from 'pg';
import { openPostgresRepositories } from '../state/repos/postgres.js';
import { startPostgres } from '../test/helpers/postgres-server.js';

const { values } = parseArgs({
  options: {
    rows: { type: 'string', default: '200000' },
    hosts: { type: 'string', default: '2000' },
    claims: { type: 'string', default: '300' },
  },
});
const ROWS = Math.max(1000, Math.min(2_000_000, Number(values.rows)));
const HOSTS = Math.max(10, Math.min(100_000, Number(values.hosts)));
const CLAIMS = Math.max(10, Math.min(10_000, Number(values.claims)));

const pct = (xs: number[], p: number) => [...xs].sort((a, b) => a - b)[Math.min(xs.length - 1, Math.floor((p / 100) * xs.length))] ?? 0;

const server = await startPostgres();
try {
  const url = await server.createDatabase('frontier_claim');
  const repos = await openPostgresRepositories(url, {});
  const db = new pg.Pool({ connectionString: url, max: 2 });
  const now = Date.now();
  const t0 = performance.now();
  // Priorities 0–3 (most 0), 80 % due now, 15 % done with a recrawl an hour ahead, 5 % dead.
  await db.query(
    `INSERT INTO frontier (url, host, priority, reason, state, next_at, created_at, updated_at)
     SELECT 'http://h' || (i % $2) || '.test/p' || i, 'h' || (i % $2) || '.test',
            CASE WHEN i % 50 = 0 THEN 3 WHEN i % 10 = 0 THEN 1 ELSE 0 END, 'seed',
            CASE WHEN i % 20 = 0 THEN 'dead' WHEN i % 20 < 4 THEN 'done' ELSE 'queued' END,
            CASE WHEN i % 20 < 4 AND i % 20 > 0 THEN $3::bigint + 3600000 ELSE $3::bigint - (i % 1000) END, $3::bigint, $3::bigint
     FROM generate_series(1, $1) AS i`,
    [ROWS, HOSTS, String(now)],
  );
  await db.query(
    `INSERT INTO host_politeness (host, gap_ms, next_fetch_at) SELECT 'h' || i || '.test', 1000, 0 FROM generate_series(0, $1 - 1) AS i`,
    [HOSTS],
  );
  await db.query('ANALYZE frontier; ANALYZE host_politeness');
  process.stderr.write(`frontier: ${ROWS} rows over ${HOSTS} hosts in ${((performance.now() - t0) / 1000).toFixed(1)} s\n`);

  const claimSql = `EXPLAIN (ANALYZE, FORMAT JSON)
    SELECT f.id FROM frontier f JOIN host_politeness h ON h.host = f.host
    WHERE f.state <> 'dead' AND f.next_at <= $1 AND h.next_fetch_at <= $1
    ORDER BY f.priority DESC, f.next_at, f.id LIMIT 1 FOR UPDATE OF f, h SKIP LOCKED`;
  const rows: string[] = [];
  const run = async (label: string) => {
    const plan = (await db.query<{ 'QUERY PLAN': [{ Plan: { 'Node Type': string }; 'Execution Time': number }] }>(claimSql, [Date.now()]))
      .rows[0]!['QUERY PLAN'][0];
    const lat: number[] = [];
    // Each claim takes one URL and makes its host wait its gap: later claims must skip the busy hosts, as in a crawl.
    for (let i = 0; i < CLAIMS; i++) {
      const s = performance.now();
      const c = await repos.frontier.claim({ owner: 'bench', leaseMs: 60_000 });
      lat.push(performance.now() - s);
      if (!c) break;
    }
    rows.push(
      `| ${label} | ${ROWS.toLocaleString('en-US')} | ${lat.length} | ${pct(lat, 50).toFixed(2)} | ${pct(lat, 95).toFixed(2)} | ${pct(lat, 99).toFixed(2)} | ${plan['Execution Time'].toFixed(2)} |`,
    );
  };
  await db.query('DROP INDEX IF EXISTS frontier_claim_order');
  await db.query('ANALYZE frontier');
  await run('without the claim-order index');
  // The claims above leased URLs and made hosts busy: put them back for the second run.
  await db.query(
    `UPDATE frontier SET state = 'queued', next_at = $1::bigint - 1, lease_owner = NULL, lease_until = NULL WHERE state = 'leased'`,
    [String(now)],
  );
  await db.query('UPDATE host_politeness SET next_fetch_at = 0');
  await db.query(`CREATE INDEX frontier_claim_order ON frontier (priority DESC, next_at, id) WHERE state <> 'dead'`);
  await db.query('ANALYZE frontier');
  await run('with frontier_claim_order (migration crawler-pg-002)');
  console.log(`| claim query | frontier rows | claims | p50 ms | p95 ms | p99 ms | EXPLAIN ANALYZE of one claim, ms |`);
  console.log(`|---|---:|---:|---:|---:|---:|---:|`);
  for (const r of rows) console.log(r);
  await db.end();
  await repos.close();
} finally {
  await server.stop();
}
