import t from 'tap';
import { openPostgresRepositories } from '../../state/repos/postgres.js';
import { postgresUnavailable, startPostgres, type PostgresServer } from '../helpers/postgres-server.js';
import { webmasterContract } from './webmaster-contract.js';

const why = postgresUnavailable();
if (why) {
  // CI must not go green without having run these; a developer machine without PostgreSQL is told why.
  if (process.env.CI) t.fail(`issue 11: PostgreSQL tests cannot run: ${why}`);
  else t.test('webmaster repository on PostgreSQL', { skip: why }, async () => undefined);
} else {
  let server: PostgresServer;
  let n = 0;
  t.before(async () => {
    server = await startPostgres();
  });
  t.teardown(() => server?.stop());
  t.test('webmaster repository contract on PostgreSQL', async (t) =>
    webmasterContract(t, async (name) => openPostgresRepositories(await server.createDatabase(`${name}_${++n}`))),
  );
  // Runs last: it halts the server for a moment.
  t.test(
    "issue 11: a PostgreSQL outage is the service's `unavailable` error for the webmaster repository too, and it recovers",
    async (t) => {
      const repos = await openPostgresRepositories(await server.createDatabase('outage'));
      t.teardown(() => repos.close());
      const at = new Date().toISOString();
      const { property } = await repos.webmaster.createProperty({ account: 'acct_o', kind: 'host', name: 'outage.example', at });
      await server.halt();
      const unavailable = { name: 'SvcError', code: 'unavailable', status: 503, retryAfter: 5 };
      await t.rejects(repos.webmaster.getProperty(property.id), unavailable, 'a read');
      await t.rejects(
        repos.webmaster.submitFastLane({
          propertyId: property.id,
          url: 'https://outage.example/a',
          idempotencyDigest: null,
          day: 1,
          perDay: 5,
          at,
        }),
        unavailable,
        'a fast-lane decision (a transaction)',
      );
      await server.resume();
      t.match(await repos.webmaster.getProperty(property.id), { id: property.id }, 'back by itself');
    },
  );
}
