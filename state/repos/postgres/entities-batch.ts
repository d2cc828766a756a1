/**
 * A batch of dataset rows into PostgreSQL in a handful of statements: one read of everything the join decisions can
 * ask, decisions run in order against that in-memory snapshot (as SQLite's row-by-row transaction would), one write
 * per table; row by row cost round trips per row. The caller holds the entity write lock.
 */
import { entityIdFor, type DatasetRowInput, type UpsertOutcome } from '../../entity-types.js';
import {
  datasetStatement,
  joinDecision,
  mergeSources,
  nameKeyOf,
  nameSortKey,
  nameTokens,
  runJoinAsync,
  type MergedEntity,
  type PlaceCandidate,
  type SourceRow,
} from '../../entity-merge.js';
import type { Queryable } from './db.js';

/** Changes to the name-token totals bm25 reads (entity_name_stats), applied once per write transaction. */
export interface NameTotals {
  entities: number;
  tokens: number;
}

interface KeyRow {
  key: string;
  source_key: string;
  entity_seq: number;
}

interface EntityPlace {
  id: string;
  /** Name tokens stored before this batch (0 for a new entity). */
  tokens: number;
  postal_code: string | null;
  lat: number | null;
  lon: number | null;
  street: string | null;
  locality: string | null;
}

/** Records `rows` of `dataset` (inside the caller's transaction and lock); outcomes in row order. */
export async function importBatch(
  c: Queryable,
  dataset: string,
  rows: readonly DatasetRowInput[],
  observedAt: string,
  verifiedAt: string | null,
  /** Receives the change to the name-token totals (entity_name_stats). */
  totals: NameTotals,
): Promise<UpsertOutcome[]> {
  if (rows.length === 0) return [];
  const statements = rows.map((r) => ({ row: r, ...datasetStatement(dataset, r.rowId, r.facts), nameKey: nameKeyOf(r.facts) }));
  const sourceKeys = statements.map((s) => s.sourceKey);
  const allKeys = [...new Set(statements.flatMap((s) => (s.nameKey !== null ? [...s.keys, s.nameKey] : s.keys)))];

  // The snapshot: sources of these rows, key rows under these keys, the entities they name and all their sources.
  const keyRows = new Map<string, KeyRow[]>();
  const srcEntity = new Map<string, number>();
  for (const r of (
    await c.query<{ source_key: string; entity_seq: number }>(
      'SELECT source_key, entity_seq FROM entity_sources WHERE source_key = ANY($1::text[])',
      [sourceKeys],
    )
  ).rows)
    srcEntity.set(r.source_key, r.entity_seq);
  // Which of those keys each source holds (to replace a re-imported source's keys in the snapshot).
  const keysOfSource = new Map<string, Set<string>>();
  for (const r of (await c.query<KeyRow>('SELECT key, source_key, entity_seq FROM entity_keys WHERE key = ANY($1::text[])', [allKeys]))
    .rows) {
    keyRows.set(r.key, [...(keyRows.get(r.key) ?? []), r]);
    keysOfSource.set(r.source_key, (keysOfSource.get(r.source_key) ?? new Set<string>()).add(r.key));
  }
  const seqs = [...new Set([...srcEntity.values(), ...[...keyRows.values()].flat().map((k) => k.entity_seq)])];
  const entities = new Map<number, EntityPlace>();
  const entSources = new Map<number, Map<string, SourceRow>>();
  if (seqs.length > 0) {
    for (const e of (
      await c.query<EntityPlace & { seq: number }>(
        'SELECT seq, id, cardinality(name_tokens) AS tokens, postal_code, lat, lon, street, locality FROM entities WHERE seq = ANY($1::bigint[])',
        [seqs],
      )
    ).rows)
      entities.set(e.seq, e);
    for (const s of (await c.query<SourceRow>('SELECT * FROM entity_sources WHERE entity_seq = ANY($1::bigint[])', [seqs])).rows)
      entSources.set(s.entity_seq, (entSources.get(s.entity_seq) ?? new Map<string, SourceRow>()).set(s.source_key, s));
  }
  // New entities take seqs from the identity's own sequence, in creation order (as SQLite's rowids grow).
  let fresh: number[] | null = null;
  const takenIds = new Set<string>();
  const dirty = new Map<number, MergedEntity>();
  const touchedSources = new Map<string, SourceRow>();
  const touchedKeys = new Map<string, readonly string[]>();

  const out: UpsertOutcome[] = [];
  for (const st of statements) {
    const { facts } = st.row;
    // The same rows, filters, order and limits as the SQLite store's queries (EntityStore #answer).
    const others = (key: string) =>
      (keyRows.get(key) ?? [])
        .filter((k) => k.source_key !== st.sourceKey && entities.has(k.entity_seq))
        .sort((a, b) => a.entity_seq - b.entity_seq);
    const d = await runJoinAsync(joinDecision(st.sourceKey, facts, st.keys, new Map()), async (ask) => {
      switch (ask.op) {
        case 'source':
          return srcEntity.get(ask.sourceKey) ?? null;
        case 'byKey':
          return others(ask.key)
            .slice(0, 8)
            .map((k) => ({ entity_seq: k.entity_seq, postal_code: entities.get(k.entity_seq)!.postal_code }));
        case 'byName': {
          const distinct = [...new Set(others(ask.key).map((k) => k.entity_seq))].slice(0, 20);
          return distinct.map((seq): PlaceCandidate => {
            const e = entities.get(seq)!;
            return { entity_seq: seq, lat: e.lat, lon: e.lon, postal_code: e.postal_code, street: e.street, locality: e.locality };
          });
        }
        case 'alive':
          return entities.has(ask.seq);
        case 'create': {
          fresh ??= (
            await c.query<{ seq: number }>(
              `SELECT nextval(pg_get_serial_sequence('entities', 'seq')) AS seq FROM generate_series(1, $1::int)`,
              [statements.length],
            )
          ).rows.map((r) => r.seq);
          const seq = fresh.shift()!;
          let id = entityIdFor(ask.primaryKey);
          // A hash collision with a different live entity (practically impossible) gets a salted id rather than a merge.
          for (let i = 1; takenIds.has(id) || (await c.query('SELECT 1 FROM entities WHERE id = $1', [id])).rows.length > 0; i++)
            id = entityIdFor(`${ask.primaryKey}#${i}`);
          takenIds.add(id);
          entities.set(seq, { id, tokens: 0, postal_code: null, lat: null, lon: null, street: null, locality: null });
          totals.entities++;
          return seq;
        }
      }
    });
    // Apply the row's writes to the snapshot: its source, its keys (all replaced), then the entity's merge.
    const source: SourceRow = {
      source_key: st.sourceKey,
      entity_seq: d.seq,
      type: 'dataset',
      page_ref: null,
      page_url: null,
      dataset,
      row_id: st.row.rowId,
      facts: JSON.stringify(facts),
      observed_at: observedAt,
      verified_at: verifiedAt,
    };
    const before = srcEntity.get(st.sourceKey);
    if (before !== undefined && before !== d.seq) entSources.get(before)?.delete(st.sourceKey);
    srcEntity.set(st.sourceKey, d.seq);
    entSources.set(d.seq, (entSources.get(d.seq) ?? new Map<string, SourceRow>()).set(st.sourceKey, source));
    touchedSources.set(st.sourceKey, source);
    for (const key of keysOfSource.get(st.sourceKey) ?? [])
      keyRows.set(
        key,
        keyRows.get(key)!.filter((k) => k.source_key !== st.sourceKey),
      );
    const stored = new Set(d.storedKeys);
    for (const key of stored) keyRows.set(key, [...(keyRows.get(key) ?? []), { key, source_key: st.sourceKey, entity_seq: d.seq }]);
    keysOfSource.set(st.sourceKey, stored);
    touchedKeys.set(st.sourceKey, [...stored]);
    const merged = mergeSources([...entSources.get(d.seq)!.values()])!;
    const e = entities.get(d.seq)!;
    Object.assign(e, {
      postal_code: merged.postalCode,
      lat: merged.lat,
      lon: merged.lon,
      street: merged.street,
      locality: merged.locality,
    });
    dirty.set(d.seq, merged);
    out.push(d.outcome);
  }

  // One write per table: entities (new ones inserted with their seq, others updated), sources, keys.
  const ents = [...dirty];
  for (const [seq, m] of ents) totals.tokens += nameTokens(m.names).length - entities.get(seq)!.tokens;
  const col = <T>(f: (seq: number, m: MergedEntity) => T): T[] => ents.map(([seq, m]) => f(seq, m));
  await c.query(
    `INSERT INTO entities (seq, id, name, name_sort, kind, street, locality, locality_key, province, postal_code, country, lat, lon, telephone, url,
                           last_verified_at, created_at, updated_at, name_tokens, name_tsv)
     OVERRIDING SYSTEM VALUE
     SELECT u.seq, u.id, u.name, u.name_sort, u.kind, u.street, u.locality, u.locality_key, u.province, u.postal_code, 'CA', u.lat, u.lon, u.telephone, u.url,
            u.last_verified_at, $18, u.updated_at, t.tokens, array_to_tsvector(t.tokens)
     FROM unnest($1::bigint[], $2::text[], $3::text[], $4::text[], $5::text[], $6::text[], $7::text[], $8::text[], $9::text[], $10::text[],
                 $11::float8[], $12::float8[], $13::text[], $14::text[], $15::text[], $16::text[], $17::text[])
          AS u(seq, id, name, name_sort, kind, street, locality, locality_key, province, postal_code, lat, lon, telephone, url, last_verified_at, updated_at, tokens_json)
     CROSS JOIN LATERAL (SELECT coalesce(array_agg(x ORDER BY o), '{}'::text[]) AS tokens FROM json_array_elements_text(u.tokens_json::json) WITH ORDINALITY AS j(x, o)) t
     ON CONFLICT (seq) DO UPDATE SET name = excluded.name, name_sort = excluded.name_sort, kind = excluded.kind, street = excluded.street,
       locality = excluded.locality, locality_key = excluded.locality_key, province = excluded.province, postal_code = excluded.postal_code,
       lat = excluded.lat, lon = excluded.lon, telephone = excluded.telephone, url = excluded.url, last_verified_at = excluded.last_verified_at,
       updated_at = excluded.updated_at, name_tokens = excluded.name_tokens, name_tsv = excluded.name_tsv`,
    [
      col((s) => s),
      col((s) => entities.get(s)!.id),
      col((_, m) => m.name),
      col((_, m) => nameSortKey(m.name)),
      col((_, m) => m.kind),
      col((_, m) => m.street),
      col((_, m) => m.locality),
      col((_, m) => m.localityKey),
      col((_, m) => m.province),
      col((_, m) => m.postalCode),
      col((_, m) => m.lat),
      col((_, m) => m.lon),
      col((_, m) => m.telephone),
      col((_, m) => m.url),
      col((_, m) => m.lastVerifiedAt),
      col((_, m) => m.updatedAt),
      col((_, m) => JSON.stringify(nameTokens(m.names))),
      observedAt,
    ],
  );
  const srcs = [...touchedSources.values()];
  await c.query(
    `INSERT INTO entity_sources (source_key, entity_seq, type, page_ref, page_url, dataset, row_id, facts, observed_at, verified_at)
     SELECT u.source_key, u.entity_seq, 'dataset', NULL, NULL, u.dataset, u.row_id, u.facts, u.observed_at, u.verified_at
     FROM unnest($1::text[], $2::bigint[], $3::text[], $4::text[], $5::text[], $6::text[], $7::text[]) AS u(source_key, entity_seq, dataset, row_id, facts, observed_at, verified_at)
     ON CONFLICT (source_key) DO UPDATE SET entity_seq = excluded.entity_seq, page_url = excluded.page_url,
       facts = excluded.facts, observed_at = excluded.observed_at, verified_at = excluded.verified_at`,
    [
      srcs.map((s) => s.source_key),
      srcs.map((s) => s.entity_seq),
      srcs.map((s) => s.dataset),
      srcs.map((s) => s.row_id),
      srcs.map((s) => s.facts),
      srcs.map((s) => s.observed_at),
      srcs.map((s) => s.verified_at),
    ],
  );
  const keyList = [...touchedKeys].flatMap(([sk, keys]) => keys.map((k) => [k, sk, srcEntity.get(sk)!] as const));
  await c.query('DELETE FROM entity_keys WHERE source_key = ANY($1::text[])', [[...touchedKeys.keys()]]);
  await c.query('INSERT INTO entity_keys (key, source_key, entity_seq) SELECT * FROM unnest($1::text[], $2::text[], $3::bigint[])', [
    keyList.map((k) => k[0]),
    keyList.map((k) => k[1]),
    keyList.map((k) => k[2]),
  ]);
  return out;
}
