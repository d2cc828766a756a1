import t from 'tap';
import { join } from 'node:path';
import { openSqliteRepositories } from '../../state/repos/sqlite.js';
import { webmasterContract } from './webmaster-contract.js';

t.test('webmaster repository contract on SQLite', async (t) => {
  const dir = t.testdir();
  webmasterContract(t, async (name) => openSqliteRepositories(join(dir, `${name}.sqlite`)));
});
