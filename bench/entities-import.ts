/**
 * `svc entities import` of the real ODCAF + ODHF files (../shared/data/ca-open-data) into the SQLite file and into
 * PostgreSQL (a throwaway server from the test harness, on loopback), then a few name searches on each: rows per
 * second and search latency, and whether both backends give the same records for the same queries (the contract
 * test compares them on the Québec rows only). Run: node --import tsx bench/entities-import.ts
 */
// First: only loopback may ever be contacted, and no DNS query leaves the process (fixtures/loopback-only.ts).
import '../fixtures/loopback-only.js';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Writable } from 'node:stream';
import { entitiesCommand } from '../cli/entities.js';
import { SHARED_DATA_DIR } from '../fixtures/test-web/index.js';
import { openRepositories } from '../state/repos/open.js';
import { startPostgres } from '../test/helpers/postgres-server.js';

const FILES = [
  ['--odcaf', join(SHARED_DATA_DIR, 'ca-open-data', 'odcaf', 'ODCAF_v1.0.utf8.csv.gz')],
  ['--odhf', join(SHARED_DATA_DIR, 'ca-open-data', 'odhf', 'odhf_v1.1.utf8.csv.gz')],
] as const;
const QUERIES = [
  { q: 'library', province: 'QC', locality: 'Gatineau', kind: 'Library', limit: 5 },
  { q: 'hospital hull', limit: 5 },
  { q: 'saint', limit: 10 },
  { kind: 'Hospital', province: 'ON', limit: 20 },
];
const quiet = (env: NodeJS.ProcessEnv) => ({ stdout: new Writable({ write: (_c, _e, cb) => cb() }), stderr: process.stderr, env });

const pgServer = await startPostgres();
const rows: string[] = [];
/** Each backend's answers (ids in order) and counts: the two must agree. */
const answers: string[] = [];
try {
  for (const backend of ['sqlite', 'postgres'] as const) {
    const dir = mkdtempSync(join(tmpdir(), 'svc-bench-ent-'));
    const env = backend === 'postgres' ? { SVC_DATABASE_URL: await pgServer.createDatabase('bench') } : {};
    const t0 = performance.now();
    for (const [flag, file] of FILES)
      if ((await entitiesCommand(['import', flag, file, '--data-dir', dir], quiet(env))) !== 0) throw new Error('import failed');
    const importMs = performance.now() - t0;
    const repos = await openRepositories({ dataDir: dir, databaseUrl: env.SVC_DATABASE_URL });
    const n = await repos.entities!.counts();
    const seen = [JSON.stringify(n)];
    for (const q of [
      ...QUERIES,
      { q: 'bibliothèque gabrielle roy', limit: 10 },
      { q: 'general', limit: 20 },
      { q: 'centre hosp', limit: 20 },
      { kind: 'Library', locality: 'Gatineau', limit: 20 },
    ])
      seen.push(JSON.stringify(await repos.entities!.search(q), (k, v: unknown) => (k === 'observed_at' ? undefined : v)));
    answers.push(seen.join('\n'));
    const lat: number[] = [];
    for (let i = 0; i < 5; i++)
      for (const q of QUERIES) {
        const s = performance.now();
        await repos.entities!.search(q);
        lat.push(performance.now() - s);
      }
    lat.sort((a, b) => a - b);
    await repos.close();
    rmSync(dir, { recursive: true, force: true });
    rows.push(
      `| ${backend} | ${n.datasetSources} | ${(importMs / 1000).toFixed(1)} | ${Math.round((n.datasetSources / importMs) * 1000)} | ${lat[Math.floor(lat.length / 2)]!.toFixed(1)} | ${lat[lat.length - 1]!.toFixed(1)} |`,
    );
  }
} finally {
  await pgServer.stop();
}
console.log('| backend | rows | import s | rows/s | search p50 ms | search max ms |\n|---|---|---|---|---|---|');
console.log(rows.join('\n'));
console.log(`same counts and answers (records apart from import times) on both backends: ${answers[0] === answers[1] ? 'yes' : 'NO'}`);
