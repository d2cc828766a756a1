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
}
