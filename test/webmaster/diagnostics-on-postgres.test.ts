/**
 * Issue 11 on the fleet's backend: diagnostics of a verified property, with every state repository on a real
 * PostgreSQL (the harness's, loopback, temp dir), equal what PostgreSQL and the index hold after a real crawl of the
 * fixture host alpha.test — the same crawl and checks as the SQLite test (diagnostics-checks.ts), the expected
 * values read with SQL from the database.
 */
import t from 'tap';
import { join } from 'node:path';
import pg from 'pg';
import { loadConfig } from '../../config.js';
import { startTestWeb } from '../../fixtures/test-web/index.js';
import { PassageIndex } from '../../index/engines/lance/store.js';
import { openPostgresRepositories } from '../../state/repos/postgres.js';
import { postgresUnavailable, startPostgres } from '../helpers/postgres-server.js';
import { crawlAndCheckDiagnostics } from './diagnostics-checks.js';

const why = postgresUnavailable();
if (why) t.plan(0, why);
else {
  t.test('issue 11: diagnostics on PostgreSQL equal what the database and the index hold for a crawled fixture host', async (t) => {
    const server = await startPostgres();
    t.teardown(() => server.stop());
    const url = await server.createDatabase('diagnostics');
    const web = await startTestWeb({ generatedHosts: 1, generatedPages: 2 });
    t.teardown(() => web.close());
    const dir = t.testdir();
    const config = loadConfig({ env: {}, flags: { dataDir: dir, resolve: web.pins, crawlAllowLoopback: true, crawlGapMs: 10 } });
    const repos = await openPostgresRepositories(url, { defaultGapMs: config.crawlGapMs });
    const index = await PassageIndex.open({ dir: join(dir, 'lance'), embedder: null, hostIds: repos.hostIds });
    const sql = new pg.Client({ connectionString: url });
    await sql.connect();
    t.teardown(async () => {
      await index.close();
      await repos.close();
      await sql.end();
    });
    await crawlAndCheckDiagnostics(t, { config, repos, index, web, rows: async (text) => (await sql.query(text)).rows });
  });
}
