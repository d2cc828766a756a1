/** API keys on SQLite: the SHA-256 digest only, compared in constant time. */
import { timingSafeEqual } from 'node:crypto';
import { stmt, type StateDb } from '../../db.js';
import { digestKey, mintKey, parseKey } from '../../keys.js';
import { toKeyRecord, type KeyRow } from '../rows.js';
import { type KeysRepo } from '../types.js';

export class SqliteKeys implements KeysRepo {
  constructor(readonly db: StateDb) {}

  async create(opts: { name: string; perMinute: number; perDay: number; now?: Date }) {
    const { id, key } = mintKey();
    const createdAt = (opts.now ?? new Date()).toISOString();
    // Prepared per call: keys are created rarely.
    this.db
      .prepare('INSERT INTO api_keys (id, name, digest, per_minute, per_day, created_at) VALUES (?, ?, ?, ?, ?, ?)')
      .run(id, opts.name, digestKey(key), opts.perMinute, opts.perDay, createdAt);
    return { record: { id, name: opts.name, perMinute: opts.perMinute, perDay: opts.perDay, createdAt, revokedAt: null }, key };
  }

  async list() {
    return (stmt(this.db, 'SELECT * FROM api_keys ORDER BY created_at, id').all() as KeyRow[]).map(toKeyRecord);
  }

  async revoke(id: string, now: Date = new Date()) {
    return stmt(this.db, 'UPDATE api_keys SET revoked_at = ? WHERE id = ? AND revoked_at IS NULL').run(now.toISOString(), id).changes === 1;
  }

  async verify(key: string) {
    const parsed = parseKey(key);
    const digest = digestKey(key);
    const row = parsed ? (stmt(this.db, 'SELECT * FROM api_keys WHERE id = ?').get(parsed.id) as KeyRow | undefined) : undefined;
    // Compare against a dummy when there is no row so both paths do the same work.
    const same = timingSafeEqual(row?.digest ?? Buffer.alloc(32), digest);
    if (!row || !same || row.revoked_at !== null) return null;
    return { ...toKeyRecord(row), digest: digest.toString('hex') };
  }
}
