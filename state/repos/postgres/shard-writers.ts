/** The writer of each index shard on PostgreSQL: a lease per shard, taken all or none under a fencing token. */
import type { ShardClaim, ShardWriter, ShardWritersRepo } from '../types.js';
import type { Db, Queryable } from './db.js';

interface Row {
  shard: number;
  owner: string;
  token: string;
  lease_until: string;
}

const toWriter = (r: Row): ShardWriter => ({ shard: r.shard, owner: r.owner, token: Number(r.token), leaseUntil: Number(r.lease_until) });

/** The database's clock in ms: every indexer of the fleet reads leases against one clock, whatever its own says. */
const DB_NOW = `(extract(epoch from clock_timestamp()) * 1000)::bigint`;

export class PgShardWriters implements ShardWritersRepo {
  constructor(readonly db: Db) {}

  async acquire(opts: { owner: string; shards: readonly number[]; leaseMs: number; now?: number }): Promise<ShardClaim> {
    const shards = [...new Set(opts.shards)].sort((a, b) => a - b);
    return this.db.transaction(async (c) => {
      await c.query(
        `INSERT INTO shard_writers (shard, owner, token, lease_until) SELECT s, '', 0, 0 FROM unnest($1::int[]) s ON CONFLICT (shard) DO NOTHING`,
        [shards],
      );
      // Locked in shard order: two indexers claiming overlapping sets wait for each other, never deadlock.
      const rows = (
        await c.query<Row & { now: string }>(
          `SELECT shard, owner, token, lease_until, ${opts.now ?? DB_NOW}::bigint AS now FROM shard_writers WHERE shard = ANY($1::int[]) ORDER BY shard FOR UPDATE`,
          [shards],
        )
      ).rows;
      const now = Number(rows[0]?.now ?? opts.now ?? Date.now());
      const heldBy = rows.filter((r) => Number(r.lease_until) > now).map(toWriter);
      if (heldBy.length > 0) return { ok: false, heldBy };
      return this.#take(c, opts.owner, shards, now + opts.leaseMs);
    });
  }

  async #take(c: Queryable, owner: string, shards: number[], leaseUntil: number): Promise<ShardClaim> {
    const token = Number((await c.query<{ t: string }>(`SELECT nextval('shard_writer_tokens') AS t`)).rows[0]!.t);
    await c.query('UPDATE shard_writers SET owner = $1, token = $2, lease_until = $3 WHERE shard = ANY($4::int[])', [
      owner,
      token,
      leaseUntil,
      shards,
    ]);
    return { ok: true, token, leaseUntil };
  }

  async renew(opts: { token: number; shards: readonly number[]; leaseMs: number; now?: number }): Promise<boolean> {
    const shards = [...new Set(opts.shards)];
    const now = opts.now ?? DB_NOW;
    // One statement: either every shard is still held (and extended) or none is touched.
    const r = await this.db.query(
      `WITH live AS (SELECT count(*) AS n FROM shard_writers WHERE shard = ANY($1::int[]) AND token = $2 AND lease_until > ${now})
       UPDATE shard_writers SET lease_until = ${now} + $3 FROM live
       WHERE live.n = $4 AND shard = ANY($1::int[]) AND token = $2`,
      [shards, opts.token, opts.leaseMs, shards.length],
    );
    return (r.rowCount ?? 0) === shards.length;
  }

  async check(opts: { token: number; shards: readonly number[]; now?: number }): Promise<boolean> {
    const shards = [...new Set(opts.shards)];
    const r = await this.db.query<{ n: number }>(
      `SELECT count(*)::int AS n FROM shard_writers WHERE shard = ANY($1::int[]) AND token = $2 AND lease_until > ${opts.now ?? DB_NOW}`,
      [shards, opts.token],
    );
    return r.rows[0]!.n === shards.length;
  }

  async release(opts: { token: number; shards: readonly number[] }): Promise<void> {
    await this.db.query('UPDATE shard_writers SET lease_until = 0 WHERE shard = ANY($1::int[]) AND token = $2', [
      [...opts.shards],
      opts.token,
    ]);
  }

  async list(): Promise<ShardWriter[]> {
    return (await this.db.query<Row>('SELECT shard, owner, token, lease_until FROM shard_writers WHERE token > 0 ORDER BY shard')).rows.map(
      toWriter,
    );
  }
}
