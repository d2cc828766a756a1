/**
 * The PostgreSQL backend of the repositories (npm `pg`), selected by SVC_DATABASE_URL=postgres://…: this file
 * assembles them over one pool (postgres/db.ts, the driver); each repository is its own file in postgres/.
 * Everything that must hold for a fleet is decided inside the database: frontier claims take the URL row and its
 * host's politeness row with FOR UPDATE SKIP LOCKED in one transaction; quota checks lock their counter rows and
 * increment only when both have room; ids come from identity columns and gen_random_uuid(); idempotency is a
 * unique index.
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
      hostIds: new PgHostIds(db),
      documents: new PgDocuments(db),
      requests: new PgRequests(db),
      hosts: new PgHostFacts(db),
      entities: new PgEntities(db),
      webmaster: new PgWebmaster(db),
      propertyState: pgPropertyState(db),
      outbox: new PgOutbox(db),
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
