/** The entities contract (entities-contract.ts) on the embedded SQLite backend. */
import t from 'tap';
import { join } from 'node:path';
import { openStateDb } from '../../state/db.js';
import { EntityStore } from '../../state/entities.js';
import { sqliteRepositories } from '../../state/repos/sqlite.js';
import { entitiesContract } from './entities-contract.js';

entitiesContract(t, async (t) => {
  const dir = t.testdir();
  const db = openStateDb(join(dir, 'state.sqlite'));
  const repos = sqliteRepositories(db);
  const store = new EntityStore(db);
  if (!repos.entities) throw new Error('SQLite holds entities');
  return {
    repo: Object.assign(Object.create(null) as object, repos.entities, {
      observePageDetailed: async (...a: Parameters<EntityStore['observePageDetailed']>) => store.observePageDetailed(...a),
    }),
    cli: { dataDir: dir, env: {} },
    close: async () => {
      await repos.close();
      db.close();
    },
  };
});
