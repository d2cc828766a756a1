/**
 * The PostgreSQL backend of the repositories (SVC_DATABASE_URL=postgres://…), assembled over one pool (postgres/db.ts).
 * Everything a fleet relies on is decided inside the database (FOR UPDATE SKIP LOCKED claims, locked quota rows,
 * identity ids, unique-index idempotency), so any number of processes can share it.
 */
import { createPool, Db, migratePostgres, translate, type PgTimeouts } from './postgres/db.js';
import { PgDocuments } from './postgres/documents.js';
import { PgEntities } from './postgres/entities.js';
import { PgFrontier } from './postgres/frontier.js';
import { PgHostFacts } from './postgres/host-facts.js';
import { PgHostIds } from './postgres/host-ids.js';
import { PgKeys } from './postgres/keys.js';
import { PgOutbox } from './postgres/outbox.js';
import { PgPoliteness } from './postgres/politeness.js';
import { PgShardWriters } from './postgres/shard-writers.js';
import { PgRobots } from './postgres/robots.js';
import { PgSearchers } from './postgres/searchers.js';
import { PgRequests } from './postgres/requests.js';
import { PgUsage } from './postgres/usage.js';
import { PgWebmaster } from './postgres/webmaster.js';
import { pgPropertyState } from './property-state.js';
import type { Repositories } from './types.js';

export { isPostgresUrl, STATE_RETRY_AFTER_S } from './postgres/db.js';

export interface PgRepoOptions extends PgTimeouts {
  /** Gap between two fetch starts on a host not yet given its own (ms). @default 1000 */
  readonly defaultGapMs?: number;
  /** Connections this process may hold. @default 10 */
  readonly poolSize?: number;
}

/** Connects to PostgreSQL, applies pending migrations and returns the repositories (close() ends the pool). */
export async function openPostgresRepositories(url: string, opts: PgRepoOptions = {}): Promise<Repositories> {
  const pool = createPool(url, opts.poolSize ?? 10, opts);
  try {
    const applied = await migratePostgres(pool).catch(translate);
    const gap = opts.defaultGapMs ?? 1000;
    const db = new Db(pool);
    return {
      backend: 'postgres',
      keys: new PgKeys(db),
      usage: new PgUsage(db),
      frontier: new PgFrontier(db, gap),
      politeness: new PgPoliteness(db, gap),
      robots: new PgRobots(db),
      hostIds: new PgHostIds(db),
      documents: new PgDocuments(db),
      requests: new PgRequests(db),
      hosts: new PgHostFacts(db),
      entities: new PgEntities(db),
      webmaster: new PgWebmaster(db),
      propertyState: pgPropertyState(db),
      outbox: new PgOutbox(db),
      shardWriters: new PgShardWriters(db),
      searchers: new PgSearchers(db),
      applied,
      ping: async () => {
        await db.query('SELECT 1');
      },
      close: () => pool.end(),
    };
  } catch (err) {
    await pool.end().catch(() => undefined);
    throw err;
  }
}
