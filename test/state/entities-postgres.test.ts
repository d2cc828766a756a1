/**
 * The entities contract (entities-contract.ts) on PostgreSQL (a real server from the test harness), and the same
 * answers as the SQLite store for the same open data: ids, order (bm25 ranking, name order) and records.
 */
import t, { type Test } from 'tap';
import pg from 'pg';
import { join } from 'node:path';
import { entitiesCommand } from '../../cli/entities.js';
import { openStateDb } from '../../state/db.js';
import { EntityStore } from '../../state/entities.js';
import type { PgEntities } from '../../state/repos/postgres/entities.js';
import { openPostgresRepositories } from '../../state/repos/postgres.js';
import { postgresUnavailable, startPostgres, type PostgresServer } from '../helpers/postgres-server.js';
import { entitiesContract, gabrielleRoyPage, PARITY_QUERIES, quietIo } from './entities-contract.js';

const why = postgresUnavailable();
if (why) {
  // CI must not go green without having run these; a developer machine without PostgreSQL is told why.
  if (process.env.CI) t.fail(`issue 10: PostgreSQL tests cannot run: ${why}`);
  else t.test('PostgreSQL entities tests', { skip: why }, async () => undefined);
} else {
  let server: PostgresServer;
  let n = 0;
  t.before(async () => {
    server = await startPostgres();
  });
  t.teardown(() => server?.stop());

  const open = async (t: Test, name: string) => {
    const url = await server.createDatabase(`${name.replace(/\W/g, '_')}_${++n}`);
    const repos = await openPostgresRepositories(url);
    const repo = repos.entities as PgEntities;
    return { repo, url, cli: { dataDir: t.testdir(), env: { SVC_DATABASE_URL: url } }, close: () => repos.close() };
  };

  // The open-data store is compared with SQLite's for the same files: ids, order (bm25 ranking, name order), records.
  t.test('entities contract on PostgreSQL', async (t) =>
    entitiesContract(t, open, {
      invariants: async (t, store) => {
        const c = new pg.Client({ connectionString: (store as Awaited<ReturnType<typeof open>>).url });
        await c.connect();
        const r = (
          await c.query(
            `SELECT s.entities::int AS kept_entities, s.tokens::int AS kept_tokens, (SELECT count(*)::int FROM entities) AS entities,
               (SELECT coalesce(sum(cardinality(name_tokens)), 0)::int FROM entities) AS tokens FROM entity_name_stats s`,
          )
        ).rows[0];
        await c.end();
        t.same(
          { entities: r.kept_entities, tokens: r.kept_tokens },
          { entities: r.entities, tokens: r.tokens },
          "bm25's kept totals equal the table's",
        );
      },
      afterOpenData: async (t, pg, files) => {
        const dir = pg.cli.dataDir;
        t.equal(await entitiesCommand(['import', '--odcaf', files.odcaf, '--data-dir', dir], quietIo({})), 0, 'ODCAF into SQLite');
        t.equal(await entitiesCommand(['import', '--odhf', files.odhf, '--data-dir', dir], quietIo({})), 0, 'ODHF into SQLite');
        const db = openStateDb(join(dir, 'state.sqlite'));
        t.teardown(() => db.close());
        const lite = new EntityStore(db);
        const city = gabrielleRoyPage();
        lite.observePage(city.page, city.nodes, city.at);
        t.same(await pg.repo.counts(), lite.counts());
        for (const q of PARITY_QUERIES) {
          const a = await pg.repo.search(q);
          const b = lite.search(q);
          t.ok(b.length > 0, `${JSON.stringify(q)}: ${b.length} hits`);
          t.same(
            a.map((e) => e.id),
            b.map((e) => e.id),
            `${JSON.stringify(q)}: same ids in the same order`,
          );
          // Records apart from the import times (observed_at: two imports a moment apart).
          const strip = (r: (typeof a)[number]) => ({
            ...r,
            observations: r.observations.map((o) => ({ ...o, observed_at: '' })),
            sources: r.sources.map((x) => ({ ...x, observed_at: '' })),
          });
          t.same(a.map(strip), b.map(strip), `${JSON.stringify(q)}: same records`);
        }
      },
    }),
  );

  t.test('issue 10: two processes observing one establishment at once make one entity (entity writes are serialised)', async (t) => {
    const a = await open(t, 'race');
    t.teardown(() => a.close());
    const b = await openPostgresRepositories(a.url);
    t.teardown(() => b.close());
    const node = (street: string) => ({
      '@type': 'Bakery',
      name: 'Boulangerie Concurrente',
      address: { streetAddress: street, addressLocality: 'Montréal', addressRegion: 'QC', postalCode: 'H2X 1Y4', addressCountry: 'CA' },
    });
    // 20 pages of different sites, half through each pool, all at once: without serialisation two could both find
    // no candidate and both create.
    await Promise.all(
      Array.from({ length: 20 }, (_, i) =>
        (i % 2 ? a.repo : b.entities!).observePage(
          { pageRef: 100 + i, url: `https://site${i}.example.ca/`, host: `site${i}.example.ca`, lang: 'fr' },
          [node(`${i} rue X`)],
          '2026-01-01T00:00:00.000Z',
        ),
      ),
    );
    t.same(await a.repo.counts(), { entities: 1, sources: 20, pageSources: 20, datasetSources: 0 });
    const [e] = await b.entities!.search({ q: 'boulangerie concurrente' });
    t.equal(e?.sources.length, 20, 'one entity with every page as a source');
  });
}
