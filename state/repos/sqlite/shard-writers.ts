/** The writer of each index shard on SQLite (indexers of one machine sharing the data dir): the PostgreSQL rule. */
import { stmt, type StateDb } from '../../db.js';
import type { ShardClaim, ShardWriter, ShardWritersRepo } from '../types.js';

interface Row {
  shard: number;
  owner: string;
  token: number;
  lease_until: number;
}

const toWriter = (r: Row): ShardWriter => ({ shard: r.shard, owner: r.owner, token: r.token, leaseUntil: r.lease_until });

/** Shard numbers are checked integers: written into the text as a list. */
const inList = (shards: readonly number[]): string => [...new Set(shards)].map((s) => Math.floor(s)).join(', ');

export class SqliteShardWriters implements ShardWritersRepo {
  constructor(readonly db: StateDb) {}

  async acquire(opts: { owner: string; shards: readonly number[]; leaseMs: number; now?: number }): Promise<ShardClaim> {
    const now = opts.now ?? Date.now();
    const list = inList(opts.shards);
    // IMMEDIATE: the write lock before the read, so two indexers' claims are one after the other.
    return this.db
      .transaction((): ShardClaim => {
        const rows = this.db.prepare(`SELECT shard, owner, token, lease_until FROM shard_writers WHERE shard IN (${list})`).all() as Row[];
        const heldBy = rows.filter((r) => r.lease_until > now).map(toWriter);
        if (heldBy.length > 0) return { ok: false, heldBy: heldBy.sort((a, b) => a.shard - b.shard) };
        const token = (stmt(this.db, 'SELECT coalesce(max(token), 0) + 1 AS t FROM shard_writers').get() as { t: number }).t;
        const leaseUntil = now + opts.leaseMs;
        const put = stmt(
          this.db,
          `INSERT INTO shard_writers (shard, owner, token, lease_until) VALUES (?, ?, ?, ?)
           ON CONFLICT (shard) DO UPDATE SET owner = excluded.owner, token = excluded.token, lease_until = excluded.lease_until`,
        );
        for (const s of new Set(opts.shards)) put.run(s, opts.owner, token, leaseUntil);
        return { ok: true, token, leaseUntil };
      })
      .immediate();
  }

  async renew(opts: { token: number; shards: readonly number[]; leaseMs: number; now?: number }): Promise<boolean> {
    const now = opts.now ?? Date.now();
    const list = inList(opts.shards);
    const n = new Set(opts.shards).size;
    return this.db
      .transaction(() => {
        const live = (
          this.db
            .prepare(`SELECT count(*) AS n FROM shard_writers WHERE shard IN (${list}) AND token = ? AND lease_until > ?`)
            .get(opts.token, now) as { n: number }
        ).n;
        if (live !== n) return false;
        this.db
          .prepare(`UPDATE shard_writers SET lease_until = ? WHERE shard IN (${list}) AND token = ?`)
          .run(now + opts.leaseMs, opts.token);
        return true;
      })
      .immediate();
  }

  async check(opts: { token: number; shards: readonly number[]; now?: number }): Promise<boolean> {
    const live = (
      this.db
        .prepare(`SELECT count(*) AS n FROM shard_writers WHERE shard IN (${inList(opts.shards)}) AND token = ? AND lease_until > ?`)
        .get(opts.token, opts.now ?? Date.now()) as { n: number }
    ).n;
    return live === new Set(opts.shards).size;
  }

  async release(opts: { token: number; shards: readonly number[] }): Promise<void> {
    this.db.prepare(`UPDATE shard_writers SET lease_until = 0 WHERE shard IN (${inList(opts.shards)}) AND token = ?`).run(opts.token);
  }

  async list(): Promise<ShardWriter[]> {
    return (stmt(this.db, 'SELECT shard, owner, token, lease_until FROM shard_writers ORDER BY shard').all() as Row[]).map(toWriter);
  }
}
