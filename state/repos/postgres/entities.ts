/**
 * The entities repository on PostgreSQL: answers entity-merge.ts's decisions, same results as the SQLite store.
 * Name search mirrors FTS5 exactly (array_to_tsvector of foldText tokens, bm25 computed alike); writes hold one
 * advisory lock so two workers never both create one entity (see docs/architecture.md#entities-on-postgresql).
 */
import type { JsonLdNode, JsonLdParseErrors } from '../../../page-model.js';
import {
  entityIdFor,
  KNOWN_DATASETS,
  parseErrorRows,
  type DatasetInfo,
  type DatasetRowInput,
  type EntityQuery,
  type EntityRecord,
  type JsonLdParseErrorRecord,
  type NodeOutcome,
  type UpsertOutcome,
} from '../../entity-types.js';
import type { EntityFacts } from '../../entity-facts.js';
import {
  joinDecision,
  mergeSources,
  nameKeyOf,
  nameSortKey,
  nameTokens,
  pageStatements,
  runJoinAsync,
  searchPlan,
  toEntityRecord,
  type EntityRow,
  type JoinAsk,
  type PlaceCandidate,
  type SourceRow,
} from '../../entity-merge.js';
import type pg from 'pg';
import type { Db, Queryable } from './db.js';
import type { EntitiesRepo } from '../types.js';
import { importBatch, type NameTotals } from './entities-batch.js';

/** bm25 constants of FTS5 (sqlite/ext/fts5/fts5_aux.c). */
const K1 = 1.2;
const B = 0.75;

/** A tsquery lexeme, quoted (folded words hold only letters and digits; quotes and backslashes escaped anyway). */
const lexeme = (w: string, prefix = false): string => `'${w.replace(/['\\]/g, '\\$&')}'${prefix ? ':*' : ''}`;

interface SourceKeyRef {
  sourceKey: string;
  type: 'page' | 'dataset';
  pageRef: number | null;
  pageUrl: string | null;
  dataset: string | null;
  rowId: string | null;
  verifiedAt: string | null;
}

export class PgEntities implements EntitiesRepo {
  readonly #datasets = new Map<string, DatasetInfo>(KNOWN_DATASETS.map((d) => [d.id, d]));

  constructor(readonly db: Db) {}

  async get(id: string): Promise<EntityRecord | null> {
    const row = (await this.db.query<EntityRow>('SELECT * FROM entities WHERE id = $1', [id])).rows[0];
    return row ? (await this.#records(this.db, [row]))[0]! : null;
  }

  async counts() {
    const e = (await this.db.query<{ n: number }>('SELECT count(*)::int AS n FROM entities')).rows[0]?.n ?? 0;
    const s = (await this.db.query<{ type: string; n: number }>('SELECT type, count(*)::int AS n FROM entity_sources GROUP BY type')).rows;
    const page = s.find((r) => r.type === 'page')?.n ?? 0;
    const dataset = s.find((r) => r.type === 'dataset')?.n ?? 0;
    return { entities: e, sources: page + dataset, pageSources: page, datasetSources: dataset };
  }

  async observePage(
    page: { pageRef: number; url: string; host: string; lang: string | null },
    nodes: readonly JsonLdNode[],
    observedAt: string,
    parseErrors?: JsonLdParseErrors,
  ): Promise<void> {
    await this.observePageDetailed(page, nodes, observedAt, parseErrors);
  }

  /** observePage with the per-node outcome (as EntityStore.observePageDetailed). */
  async observePageDetailed(
    page: { pageRef: number; url: string; host?: string },
    nodes: readonly JsonLdNode[],
    observedAt: string,
    parseErrors?: JsonLdParseErrors,
  ): Promise<NodeOutcome[]> {
    const statements = pageStatements(page.pageRef, page.url, nodes);
    return this.db.transaction(async (c) => {
      await lock(c);
      const totals: NameTotals = { entities: 0, tokens: 0 };
      // Entities this page fed before: reused when a node no longer matches anything else, so ids stay put.
      const previous = new Map<string, number>();
      for (const r of (
        await c.query<{ key: string; entity_seq: number }>(
          'SELECT k.key, k.entity_seq FROM entity_keys k JOIN entity_sources s ON s.source_key = k.source_key WHERE s.page_ref = $1',
          [page.pageRef],
        )
      ).rows)
        previous.set(r.key, r.entity_seq);
      const touched = new Set<number>(
        (
          await c.query<{ entity_seq: number }>('DELETE FROM entity_sources WHERE page_ref = $1 RETURNING entity_seq', [page.pageRef])
        ).rows.map((r) => r.entity_seq),
      );
      await c.query('DELETE FROM entity_parse_errors WHERE page_ref = $1', [page.pageRef]);
      const rows = parseErrorRows(parseErrors);
      if (rows.length > 0) {
        await c.query(
          `INSERT INTO entity_parse_errors (page_ref, page_url, host, reason, blocks, observed_at)
           SELECT $1::bigint, $2::text, $3::text, r, n, $6::text FROM unnest($4::text[], $5::int[]) AS u(r, n)`,
          [page.pageRef, page.url, page.host ?? new URL(page.url).host, rows.map((r) => r[0]), rows.map((r) => r[1]), observedAt],
        );
      }
      const results: NodeOutcome[] = [];
      for (const st of statements) {
        if (!st.ok) {
          results.push(st);
          continue;
        }
        const r = await this.#record(
          c,
          {
            sourceKey: st.sourceKey,
            type: 'page',
            pageRef: page.pageRef,
            pageUrl: page.url,
            dataset: null,
            rowId: null,
            verifiedAt: observedAt,
          },
          st.facts,
          st.keys,
          observedAt,
          previous,
          totals,
        );
        touched.add(r.seq);
        results.push({ ok: true, id: r.id, outcome: r.outcome });
      }
      for (const seq of touched) await this.#refresh(c, seq, totals);
      await addTotals(c, totals);
      return results;
    });
  }

  async withdrawPage(pageRef: number): Promise<void> {
    await this.db.transaction(async (c) => {
      await lock(c);
      const totals: NameTotals = { entities: 0, tokens: 0 };
      const seqs = new Set(
        (await c.query<{ entity_seq: number }>('DELETE FROM entity_sources WHERE page_ref = $1 RETURNING entity_seq', [pageRef])).rows.map(
          (r) => r.entity_seq,
        ),
      );
      await c.query('DELETE FROM entity_parse_errors WHERE page_ref = $1', [pageRef]);
      for (const seq of seqs) await this.#refresh(c, seq, totals);
      await addTotals(c, totals);
    });
  }

  async importRows(
    dataset: string,
    rows: readonly DatasetRowInput[],
    observedAt: string,
    verifiedAt?: string | null,
  ): Promise<UpsertOutcome[]> {
    const verified = verifiedAt ?? this.#datasets.get(dataset)?.releasedAt ?? null;
    return this.db.transaction(async (c) => {
      await lock(c);
      const totals: NameTotals = { entities: 0, tokens: 0 };
      const out = await importBatch(c, dataset, rows, observedAt, verified, totals);
      await addTotals(c, totals);
      return out;
    });
  }

  async afterImport(): Promise<void> {
    await this.db.query('ANALYZE entities, entity_sources, entity_keys');
  }

  async parseErrors(hosts: readonly string[]): Promise<JsonLdParseErrorRecord[]> {
    if (hosts.length === 0) return [];
    const rows = (
      await this.db.query<{
        page_ref: number;
        page_url: string;
        host: string;
        reason: JsonLdParseErrorRecord['reason'];
        blocks: number;
        observed_at: string;
      }>('SELECT * FROM entity_parse_errors WHERE host = ANY($1::text[]) ORDER BY page_url COLLATE "C", reason COLLATE "C"', [hosts])
    ).rows;
    return rows.map((r) => ({
      pageRef: r.page_ref,
      url: r.page_url,
      host: r.host,
      reason: r.reason,
      blocks: r.blocks,
      observedAt: r.observed_at,
    }));
  }

  async search(query: EntityQuery): Promise<EntityRecord[]> {
    const plan = searchPlan(query);
    const where: string[] = [];
    const params: unknown[] = [];
    const p = (v: unknown): string => {
      params.push(v);
      return `$${params.length}`;
    };
    let score = '';
    let order = 'e.name_sort COLLATE "C", e.seq';
    if (plan.nameWords.length > 0) {
      const words = plan.nameWords;
      const last = words.length - 1;
      where.push(`e.name_tsv @@ ${p(words.map((w, i) => lexeme(w, i === last)).join(' & '))}::tsquery`);
      // bm25 as FTS5 computes it: N rows and their average token count (kept in entity_name_stats by every write,
      // under the write lock), and per word the rows holding it (its idf, counted through the GIN index).
      const counts = words.map((w, i) => `(SELECT count(*) FROM entities WHERE name_tsv @@ $${i + 1}::tsquery)::int AS h${i}`).join(', ');
      const stats = (
        await this.db.query<Record<string, number>>(
          `SELECT entities::int AS n, tokens::float8 AS total, ${counts} FROM entity_name_stats WHERE id = 1`,
          words.map((w, i) => lexeme(w, i === last)),
        )
      ).rows[0]!;
      const rowsN = stats['n']!;
      const avgdl = rowsN > 0 ? stats['total']! / rowsN : 1;
      const idfs = words.map((_, i) => {
        const hits = stats[`h${i}`]!;
        const idf = Math.log((rowsN - hits + 0.5) / (hits + 0.5));
        return idf <= 0 ? 1e-6 : idf;
      });
      score = `, (SELECT sum(u.idf * ((u.f * ${K1 + 1}) / (u.f + ${K1} * (${1 - B} + ${B} * cardinality(e.name_tokens)::float8 / ${p(avgdl)}::float8))))
          FROM (SELECT w.idf, (SELECT count(*) FROM unnest(e.name_tokens) AS t(tok)
                               WHERE CASE WHEN w.prefix THEN starts_with(t.tok, w.word) ELSE t.tok = w.word END)::float8 AS f
                FROM unnest(${p(words)}::text[], ${p(idfs)}::float8[], ${p(words.map((_, i) => i === last))}::bool[]) AS w(word, idf, prefix)) u) AS score`;
      order = 'score DESC, e.seq';
    }
    for (const c of plan.kindConds) {
      const byWord = `e.name_tsv @@ ${p(c.words.map((w) => lexeme(w)).join(' | '))}::tsquery`;
      where.push(c.kinds.length > 0 ? `(e.kind = ANY(${p(c.kinds)}::text[]) OR ${byWord})` : `(${byWord})`);
    }
    if (plan.province !== null) where.push(`e.province = ${p(plan.province)}`);
    if (plan.localityKey !== null) where.push(`e.locality_key = ${p(plan.localityKey)}`);
    if (plan.kinds !== null) where.push(`e.kind = ANY(${p(plan.kinds)}::text[])`);
    const sql = `SELECT e.*${score} FROM entities e${where.length ? ` WHERE ${where.join(' AND ')}` : ''} ORDER BY ${order} LIMIT ${p(plan.limit)}`;
    const rows = (await this.db.query<EntityRow>(sql, params)).rows;
    return this.#records(this.db, rows);
  }

  /** Records of rows, their sources read in one query. */
  async #records(c: Queryable, rows: readonly EntityRow[]): Promise<EntityRecord[]> {
    if (rows.length === 0) return [];
    const sources = (
      await c.query<SourceRow>('SELECT * FROM entity_sources WHERE entity_seq = ANY($1::bigint[])', [rows.map((r) => r.seq)])
    ).rows;
    const bySeq = new Map<number, SourceRow[]>();
    for (const s of sources) bySeq.set(s.entity_seq, [...(bySeq.get(s.entity_seq) ?? []), s]);
    return rows.map((r) => toEntityRecord(r, bySeq.get(r.seq) ?? [], this.#datasets));
  }

  /**
   * Attaches a source statement to the entity joinDecision picks, storing the source and its keys. Round trips are
   * what an import costs here, so: the decision's reads are one query (nothing is written between its asks until
   * `create`, its last), and the writes are one statement. (Dataset rows go by batch: entities-batch.ts.)
   */
  async #record(
    c: Queryable,
    src: SourceKeyRef,
    facts: EntityFacts,
    keys: readonly string[],
    observedAt: string,
    previous: ReadonlyMap<string, number>,
    totals: NameTotals,
  ): Promise<{ seq: number; id: string; outcome: UpsertOutcome }> {
    let pre: Prefetched | null = null;
    const d = await runJoinAsync(joinDecision(src.sourceKey, facts, keys, previous), async (ask) => {
      if (ask.op === 'source' || ask.op === 'byKey' || ask.op === 'byName') {
        pre ??= await prefetch(c, src.sourceKey, keys, nameKeyOf(facts));
        if (ask.op === 'source') return pre.source;
        if (ask.op === 'byKey') return pre.byKey.get(ask.key) ?? [];
        return pre.byName;
      }
      return this.#answer(c, ask, observedAt, totals);
    });
    const source: SourceRow = {
      source_key: src.sourceKey,
      entity_seq: d.seq,
      type: src.type,
      page_ref: src.pageRef,
      page_url: src.pageUrl,
      dataset: src.dataset,
      row_id: src.rowId,
      facts: JSON.stringify(facts),
      observed_at: observedAt,
      verified_at: src.verifiedAt,
    };
    // The source upsert, its keys (stale ones deleted, current ones upserted: disjoint rows) and the entity's id, in
    // one statement.
    const r = await prepared<{ id: string }>(
      c,
      'svc_entity_record',
      `WITH src AS (
         INSERT INTO entity_sources (source_key, entity_seq, type, page_ref, page_url, dataset, row_id, facts, observed_at, verified_at)
         VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10)
         ON CONFLICT (source_key) DO UPDATE SET entity_seq = excluded.entity_seq, page_url = excluded.page_url,
           facts = excluded.facts, observed_at = excluded.observed_at, verified_at = excluded.verified_at
         RETURNING 1
       ), stale AS (
         DELETE FROM entity_keys WHERE source_key = $1 AND NOT (key = ANY($11::text[])) RETURNING 1
       ), fresh AS (
         INSERT INTO entity_keys (key, source_key, entity_seq) SELECT DISTINCT k, $1::text, $2::bigint FROM unnest($11::text[]) AS k
         ON CONFLICT (key, source_key) DO UPDATE SET entity_seq = excluded.entity_seq RETURNING 1
       )
       SELECT e.id FROM entities e WHERE e.seq = $2`,
      [
        source.source_key,
        d.seq,
        source.type,
        source.page_ref,
        source.page_url,
        source.dataset,
        source.row_id,
        source.facts,
        observedAt,
        source.verified_at,
        d.storedKeys,
      ],
    );
    const row = r.rows[0]!;
    return { seq: d.seq, id: row.id, outcome: d.outcome };
  }

  /** Answers the asks that write or that only pages make (`alive`, `create`). */
  async #answer(c: Queryable, ask: JoinAsk, at: string, totals: NameTotals): Promise<unknown> {
    switch (ask.op) {
      case 'alive':
        return (await c.query('SELECT 1 FROM entities WHERE seq = $1', [ask.seq])).rows.length > 0;
      case 'create': {
        // A hash collision with a different live entity (practically impossible) gets a salted id rather than a merge.
        for (let i = 0; ; i++) {
          const id = entityIdFor(i === 0 ? ask.primaryKey : `${ask.primaryKey}#${i}`);
          const r = await prepared<{ seq: number }>(
            c,
            'svc_entity_create',
            `INSERT INTO entities (id, name, name_sort, kind, country, last_verified_at, created_at, updated_at) VALUES ($1, $2, $3, $4, 'CA', $5, $5, $5)
             ON CONFLICT (id) DO NOTHING RETURNING seq`,
            [id, ask.facts.name, nameSortKey(ask.facts.name), ask.facts.kind, at],
          );
          if (r.rows[0]) {
            totals.entities++;
            return r.rows[0].seq;
          }
        }
      }
      default:
        throw new Error(`answered from the prefetch: ${ask.op}`);
    }
  }

  /** Recomputes an entity from its sources (mergeSources; read unless given); no source left → the entity is deleted. */
  async #refresh(c: Queryable, seq: number, totals: NameTotals): Promise<void> {
    const merged = mergeSources(
      (await prepared<SourceRow>(c, 'svc_entity_sources', 'SELECT * FROM entity_sources WHERE entity_seq = $1', [seq])).rows,
    );
    if (merged === null) {
      const gone = (await c.query<{ old: number }>('DELETE FROM entities WHERE seq = $1 RETURNING cardinality(name_tokens) AS old', [seq]))
        .rows[0];
      if (gone) {
        totals.entities--;
        totals.tokens -= gone.old;
      }
      return;
    }
    const tokens = nameTokens(merged.names);
    const r = await prepared<{ old: number }>(
      c,
      'svc_entity_refresh',
      `UPDATE entities e SET name = $1, name_sort = $2, kind = $3, street = $4, locality = $5, locality_key = $6, province = $7, postal_code = $8,
         lat = $9, lon = $10, telephone = $11, url = $12, last_verified_at = $13, updated_at = $14,
         name_tokens = $15::text[], name_tsv = array_to_tsvector($15::text[])
       FROM (SELECT cardinality(name_tokens) AS old FROM entities WHERE seq = $16) o WHERE e.seq = $16 RETURNING o.old`,
      [
        merged.name,
        nameSortKey(merged.name),
        merged.kind,
        merged.street,
        merged.locality,
        merged.localityKey,
        merged.province,
        merged.postalCode,
        merged.lat,
        merged.lon,
        merged.telephone,
        merged.url,
        merged.lastVerifiedAt,
        merged.updatedAt,
        tokens,
        seq,
      ],
    );
    totals.tokens += tokens.length - (r.rows[0]?.old ?? 0);
  }
}

async function addTotals(c: Queryable, t: NameTotals): Promise<void> {
  if (t.entities !== 0 || t.tokens !== 0)
    await c.query('UPDATE entity_name_stats SET entities = entities + $1, tokens = tokens + $2 WHERE id = 1', [t.entities, t.tokens]);
}

/** What joinDecision may ask about one statement before it writes, read at once. */
interface Prefetched {
  /** The entity the statement already feeds (`source`). */
  readonly source: number | null;
  /** Per matching key, the first 8 entities other sources matched under it, by seq (`byKey`). */
  readonly byKey: ReadonlyMap<string, { entity_seq: number; postal_code: string | null }[]>;
  /** The first 20 distinct entities other sources named alike, by seq (`byName`). */
  readonly byName: PlaceCandidate[];
}

/** The rows the SQLite store reads ask by ask (same filters, order and limits), in one query. */
async function prefetch(c: Queryable, sourceKey: string, keys: readonly string[], nameKey: string | null): Promise<Prefetched> {
  const r = await prepared<{
    part: 'source' | 'key' | 'name';
    key: string | null;
    entity_seq: number;
    postal_code: string | null;
    lat: number | null;
    lon: number | null;
    street: string | null;
    locality: string | null;
  }>(
    c,
    'svc_entity_prefetch',
    `SELECT 'source' AS part, NULL::text AS key, s.entity_seq, NULL::text AS postal_code, NULL::float8 AS lat, NULL::float8 AS lon, NULL::text AS street, NULL::text AS locality, 0 AS o
       FROM entity_sources s WHERE s.source_key = $1
     UNION ALL
     SELECT 'key', q.key, x.entity_seq, x.postal_code, NULL, NULL, NULL, NULL, q.o::int
       FROM unnest($2::text[]) WITH ORDINALITY AS q(key, o)
       CROSS JOIN LATERAL (SELECT k.entity_seq, e.postal_code FROM entity_keys k JOIN entities e ON e.seq = k.entity_seq
                           WHERE k.key = q.key AND k.source_key <> $1 ORDER BY k.entity_seq LIMIT 8) x
     UNION ALL
     SELECT 'name', NULL, y.entity_seq, y.postal_code, y.lat, y.lon, y.street, y.locality, 0
       FROM (SELECT DISTINCT k.entity_seq, e.lat, e.lon, e.postal_code, e.street, e.locality FROM entity_keys k
             JOIN entities e ON e.seq = k.entity_seq WHERE k.key = $3 AND k.source_key <> $1 ORDER BY k.entity_seq LIMIT 20) y
     ORDER BY part, o, entity_seq`,
    [sourceKey, keys, nameKey],
  );
  const byKey = new Map<string, { entity_seq: number; postal_code: string | null }[]>();
  const byName: PlaceCandidate[] = [];
  let source: number | null = null;
  for (const x of r.rows) {
    if (x.part === 'source') source = x.entity_seq;
    else if (x.part === 'key') byKey.set(x.key!, [...(byKey.get(x.key!) ?? []), { entity_seq: x.entity_seq, postal_code: x.postal_code }]);
    else
      byName.push({ entity_seq: x.entity_seq, lat: x.lat, lon: x.lon, postal_code: x.postal_code, street: x.street, locality: x.locality });
  }
  return { source, byKey, byName };
}

/**
 * A named (prepared once per connection) statement: an import runs the same few statements tens of thousands of
 * times. Only on a transaction's own client, where the connection is fixed.
 */
function prepared<R extends pg.QueryResultRow = pg.QueryResultRow>(
  c: Queryable,
  name: string,
  text: string,
  values: unknown[],
): Promise<pg.QueryResult<R>> {
  return (c as unknown as { query(q: pg.QueryConfig): Promise<pg.QueryResult<R>> }).query({ name, text, values });
}

/** Serialises entity writers across the fleet (see the file comment). */
async function lock(c: Queryable): Promise<void> {
  await c.query(`SELECT pg_advisory_xact_lock(hashtext('svc:entities'))`);
}
