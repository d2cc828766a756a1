import { createHash, randomBytes, timingSafeEqual } from 'node:crypto';
import type { StateDb } from './db.js';

/**
 * API keys look like `svc_<id>_<secret><check>`: a public 10-char base62 id, a 192-bit secret, and a CRC-32 check
 * so scanners can tell a real key from a typo without a lookup. Only the key's SHA-256 is stored; shown once.
 */
export interface KeyRecord {
  readonly id: string;
  readonly name: string;
  readonly perMinute: number;
  readonly perDay: number;
  readonly createdAt: string;
  readonly revokedAt: string | null;
}

export interface VerifiedKey extends KeyRecord {
  /** SHA-256 of the key, hex: what counters and records may keep about the caller. */
  readonly digest: string;
}

const ALPHABET = '0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz';

function base62(bytes: Buffer, length: number): string {
  let n = BigInt('0x' + (bytes.toString('hex') || '0'));
  let out = '';
  while (out.length < length) {
    out = ALPHABET[Number(n % 62n)] + out;
    n /= 62n;
  }
  return out;
}

const CRC_TABLE = (() => {
  const t = new Uint32Array(256);
  for (let i = 0; i < 256; i++) {
    let c = i;
    for (let k = 0; k < 8; k++) c = c & 1 ? 0xedb88320 ^ (c >>> 1) : c >>> 1;
    t[i] = c >>> 0;
  }
  return t;
})();

function crc32(s: string): number {
  let c = 0xffffffff;
  for (const b of Buffer.from(s, 'utf8')) c = (CRC_TABLE[(c ^ b) & 0xff] as number) ^ (c >>> 8);
  return (c ^ 0xffffffff) >>> 0;
}

const checksum = (body: string): string => {
  const b = Buffer.alloc(4);
  b.writeUInt32BE(crc32(body));
  return base62(b, 6);
};

const KEY_RE = /^svc_([0-9A-Za-z]{10})_([0-9A-Za-z]{33})([0-9A-Za-z]{6})$/;

/** Parses a key's shape and checksum; null when it cannot be one of ours. */
export function parseKey(key: string): { id: string } | null {
  const m = KEY_RE.exec(key);
  if (!m) return null;
  const [, id, secret, check] = m as unknown as [string, string, string, string];
  return checksum(`svc_${id}_${secret}`) === check ? { id } : null;
}

/** A fresh key and its public id (the repositories store only its digest). */
export function mintKey(): { id: string; key: string } {
  const id = base62(randomBytes(8), 10);
  const secret = base62(randomBytes(24), 33);
  const body = `svc_${id}_${secret}`;
  return { id, key: body + checksum(body) };
}

export const digestKey = (key: string): Buffer => createHash('sha256').update(key, 'utf8').digest();

/** A `keys` row (the same columns in SQLite and PostgreSQL). */
export interface KeyRow {
  id: string;
  name: string;
  digest: Buffer;
  per_minute: number;
  per_day: number;
  created_at: string;
  revoked_at: string | null;
}

/** A `keys` row as a KeyRecord. */
export const toKeyRecord = (r: KeyRow): KeyRecord => ({
  id: r.id,
  name: r.name,
  perMinute: r.per_minute,
  perDay: r.per_day,
  createdAt: r.created_at,
  revokedAt: r.revoked_at,
});

export class KeyStore {
  readonly #db: StateDb;
  readonly #byId;

  constructor(db: StateDb) {
    this.#db = db;
    this.#byId = db.prepare<[string], KeyRow>('SELECT * FROM api_keys WHERE id = ?');
  }

  /** Creates a key; the returned `key` is the only time the plaintext exists outside the caller. */
  create(opts: { name: string; perMinute: number; perDay: number; now?: Date }): { record: KeyRecord; key: string } {
    const { id, key } = mintKey();
    const createdAt = (opts.now ?? new Date()).toISOString();
    this.#db
      .prepare('INSERT INTO api_keys (id, name, digest, per_minute, per_day, created_at) VALUES (?, ?, ?, ?, ?, ?)')
      .run(id, opts.name, digestKey(key), opts.perMinute, opts.perDay, createdAt);
    return { record: { id, name: opts.name, perMinute: opts.perMinute, perDay: opts.perDay, createdAt, revokedAt: null }, key };
  }

  list(): KeyRecord[] {
    return (this.#db.prepare('SELECT * FROM api_keys ORDER BY created_at, id').all() as KeyRow[]).map(toKeyRecord);
  }

  /** Revokes a key by id; false when there is no such active key. */
  revoke(id: string, now: Date = new Date()): boolean {
    return (
      this.#db.prepare('UPDATE api_keys SET revoked_at = ? WHERE id = ? AND revoked_at IS NULL').run(now.toISOString(), id).changes === 1
    );
  }

  /**
   * The active key matching `key`, or null. The lookup is by the public id; the secret part is checked by
   * comparing SHA-256 digests in constant time. Unknown, malformed and revoked keys are indistinguishable to callers.
   */
  verify(key: string): VerifiedKey | null {
    const parsed = parseKey(key);
    const digest = digestKey(key);
    const row = parsed ? this.#byId.get(parsed.id) : undefined;
    // Compare against a dummy when there is no row so both paths do the same work.
    const stored = row?.digest ?? Buffer.alloc(32);
    const same = timingSafeEqual(stored, digest);
    if (!row || !same || row.revoked_at !== null) return null;
    return { ...toKeyRecord(row), digest: digest.toString('hex') };
  }
}
