/** API keys on PostgreSQL: the SHA-256 digest only, compared in constant time. */
import { timingSafeEqual } from 'node:crypto';
import { digestKey, mintKey, parseKey } from '../../keys.js';
import { toKeyRecord, type KeyRow } from '../rows.js';
import { type KeysRepo } from '../types.js';
import type { Db } from './db.js';

export class PgKeys implements KeysRepo {
  constructor(readonly pool: Db) {}

  async create(opts: { name: string; perMinute: number; perDay: number; now?: Date }) {
    const { id, key } = mintKey();
    const createdAt = (opts.now ?? new Date()).toISOString();
    await this.pool.query('INSERT INTO api_keys (id, name, digest, per_minute, per_day, created_at) VALUES ($1, $2, $3, $4, $5, $6)', [
      id,
      opts.name,
      digestKey(key),
      opts.perMinute,
      opts.perDay,
      createdAt,
    ]);
    return { record: { id, name: opts.name, perMinute: opts.perMinute, perDay: opts.perDay, createdAt, revokedAt: null }, key };
  }

  async list() {
    return (await this.pool.query<KeyRow>('SELECT * FROM api_keys ORDER BY created_at, id')).rows.map(toKeyRecord);
  }

  async revoke(id: string, now: Date = new Date()) {
    const r = await this.pool.query('UPDATE api_keys SET revoked_at = $1 WHERE id = $2 AND revoked_at IS NULL', [now.toISOString(), id]);
    return r.rowCount === 1;
  }

  async verify(key: string) {
    const parsed = parseKey(key);
    const digest = digestKey(key);
    const row = parsed ? (await this.pool.query<KeyRow>('SELECT * FROM api_keys WHERE id = $1', [parsed.id])).rows[0] : undefined;
    const same = timingSafeEqual(row?.digest ?? Buffer.alloc(32), digest);
    if (!row || !same || row.revoked_at !== null) return null;
    return { ...toKeyRecord(row), digest: digest.toString('hex') };
  }
}
