/**
 * The entity store: Canadian establishments, organizations and places merged from page JSON-LD and Statistics Canada
 * open databases. Every fact stays an observation of its source with provenance and licence (docs/api-entities.md).
 */
import type { EntitySink, JsonLdNode, JsonLdParseError, JsonLdParseErrors } from '../page-model.js';
import type { Statement } from 'better-sqlite3';
import type { StateDb } from './db.js';
import type { EntityFacts } from './entity-facts.js';
import {
  datasetStatement,
  joinDecision,
  mergeSources,
  pageStatements,
  runJoinSync,
  searchPlan,
  toEntityRecord,
  type EntityRow,
  type JoinAsk,
  type SourceRow,
} from './entity-merge.js';
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
} from './entity-types.js';

export { EntityQueryError, OGL_CANADA, PAGE_LICENCE_NOTE } from './entity-merge.js';
// The shared types lived here once; consumers written against this module keep finding them.
export { entityIdFor, KNOWN_DATASETS, parseErrorRows } from './entity-types.js';
export type {
  DatasetInfo,
  DatasetRowInput,
  EntityObservation,
  EntityQuery,
  EntityRecord,
  EntitySource,
  JsonLdParseErrorRecord,
  NodeOutcome,
  SourceLicence,
  UpsertOutcome,
} from './entity-types.js';

/** FTS5 query from folded words: each word quoted (no operator can be injected), all required, last one a prefix. */
function ftsQuery(words: readonly string[]): string {
  return words.map((w, i) => `"${w}"${i === words.length - 1 ? '*' : ''}`).join(' ');
}

/**
 * SQLite-backed entity store and EntitySink: `observePage` replaces a page's contribution, `withdrawPage` removes it,
 * and sourceless entities are deleted. Decisions are entity-merge.ts's, shared with PostgreSQL; this only answers them.
 */
export class EntityStore implements EntitySink {
  readonly #db: StateDb;
  readonly #datasets = new Map<string, DatasetInfo>();
  /** Prepared statements by SQL text: an import runs the same few statements tens of thousands of times. */
  readonly #stmts = new Map<string, Statement>();

  constructor(db: StateDb, datasets: readonly DatasetInfo[] = []) {
    this.#db = db;
    for (const d of [...KNOWN_DATASETS, ...datasets]) this.#datasets.set(d.id, d);
  }

  #prep<P extends unknown[] = unknown[], R = unknown>(sql: string): Statement<P, R> {
    let st = this.#stmts.get(sql);
    if (!st) {
      st = this.#db.prepare(sql);
      this.#stmts.set(sql, st);
    }
    return st as unknown as Statement<P, R>;
  }

  /** Registers a dataset's title for provenance (the importer does this; unknown ids still work). */
  registerDataset(info: DatasetInfo): void {
    this.#datasets.set(info.id, info);
  }

  /**
   * Replaces everything the page contributes with the admitted nodes, and its JSON-LD parse errors, in one
   * transaction (EntitySink). Nodes that are not Canadian, unnamed or out of scope are skipped; `observePageDetailed`
   * says why.
   */
  observePage(
    page: { pageRef: number; url: string; host: string; lang: string | null },
    nodes: readonly JsonLdNode[],
    observedAt: string,
    parseErrors?: JsonLdParseErrors,
  ): void {
    this.observePageDetailed(page, nodes, observedAt, parseErrors);
  }

  /** Same as observePage, with the per-node outcome. */
  observePageDetailed(
    page: { pageRef: number; url: string; host?: string },
    nodes: readonly JsonLdNode[],
    observedAt: string,
    parseErrors?: JsonLdParseErrors,
  ): NodeOutcome[] {
    return this.#db
      .transaction(() => {
        // Entities this page fed before: reused when a node no longer matches anything else, so ids stay put.
        const previous = new Map<string, number>();
        for (const r of this.#prep<[number], { key: string; entity_seq: number }>(
          `SELECT k.key, k.entity_seq FROM entity_keys k JOIN entity_sources s ON s.source_key = k.source_key WHERE s.page_ref = ?`,
        ).all(page.pageRef)) {
          previous.set(r.key, r.entity_seq);
        }
        const touched = new Set<number>(
          this.#prep<[number], { entity_seq: number }>('SELECT entity_seq FROM entity_sources WHERE page_ref = ?')
            .all(page.pageRef)
            .map((r) => r.entity_seq),
        );
        this.#prep('DELETE FROM entity_sources WHERE page_ref = ?').run(page.pageRef);
        this.#recordParseErrors(page, parseErrors, observedAt);

        const results: NodeOutcome[] = [];
        for (const st of pageStatements(page.pageRef, page.url, nodes)) {
          if (!st.ok) {
            results.push(st);
            continue;
          }
          const r = this.#record(
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
          );
          touched.add(r.seq);
          results.push({ ok: true, id: r.id, outcome: r.outcome });
        }
        for (const seq of touched) this.#refresh(seq);
        return results;
      })
      .immediate();
  }

  /** A page's parse errors replace its previous ones (a fixed page clears them). */
  #recordParseErrors(page: { pageRef: number; url: string; host?: string }, parseErrors: JsonLdParseErrors | undefined, at: string): void {
    this.#prep('DELETE FROM entity_parse_errors WHERE page_ref = ?').run(page.pageRef);
    const host = page.host ?? new URL(page.url).host;
    for (const [reason, n] of parseErrorRows(parseErrors)) {
      this.#prep('INSERT INTO entity_parse_errors (page_ref, page_url, host, reason, blocks, observed_at) VALUES (?, ?, ?, ?, ?, ?)').run(
        page.pageRef,
        page.url,
        host,
        reason,
        n,
        at,
      );
    }
  }

  /** Withdraws everything the page contributed (its parse errors too); entities left without a source disappear. */
  withdrawPage(pageRef: number): void {
    this.#db
      .transaction(() => {
        const seqs = this.#prep<[number], { entity_seq: number }>('SELECT DISTINCT entity_seq FROM entity_sources WHERE page_ref = ?').all(
          pageRef,
        );
        this.#prep('DELETE FROM entity_sources WHERE page_ref = ?').run(pageRef);
        this.#prep('DELETE FROM entity_parse_errors WHERE page_ref = ?').run(pageRef);
        for (const { entity_seq } of seqs) this.#refresh(entity_seq);
      })
      .immediate();
  }

  /** The JSON-LD blocks that failed to parse on pages of these hosts, by page URL then reason. */
  parseErrors(hosts: readonly string[]): JsonLdParseErrorRecord[] {
    if (hosts.length === 0) return [];
    const rows = this.#prep<
      string[],
      { page_ref: number; page_url: string; host: string; reason: JsonLdParseError; blocks: number; observed_at: string }
    >(`SELECT * FROM entity_parse_errors WHERE host IN (${hosts.map(() => '?').join(', ')}) ORDER BY page_url, reason`).all(...hosts);
    return rows.map((r) => ({
      pageRef: r.page_ref,
      url: r.page_url,
      host: r.host,
      reason: r.reason,
      blocks: r.blocks,
      observedAt: r.observed_at,
    }));
  }

  /**
   * Records one dataset row (idempotent by dataset + row id: a re-import updates the same source of the same
   * entity). Callers batch rows inside `transaction`, or use importRows.
   */
  upsertDatasetRow(
    dataset: string,
    rowId: string,
    facts: EntityFacts,
    observedAt: string,
    /** When the publisher last confirmed the row. @default the dataset's release date, else observedAt */
    verifiedAt?: string | null,
  ): { id: string; outcome: UpsertOutcome } {
    const verified = verifiedAt ?? this.#datasets.get(dataset)?.releasedAt ?? null;
    return this.#db
      .transaction(() => {
        const { sourceKey, keys } = datasetStatement(dataset, rowId, facts);
        const r = this.#record(
          { sourceKey, type: 'dataset', pageRef: null, pageUrl: null, dataset, rowId, verifiedAt: verified },
          facts,
          keys,
          observedAt,
          new Map(),
        );
        this.#refresh(r.seq);
        return { id: r.id, outcome: r.outcome };
      })
      .immediate();
  }

  /** Records a batch of dataset rows in one transaction (the importer's unit of work); outcomes in row order. */
  importRows(dataset: string, rows: readonly DatasetRowInput[], observedAt: string, verifiedAt?: string | null): UpsertOutcome[] {
    return this.transaction(() => rows.map((r) => this.upsertDatasetRow(dataset, r.rowId, r.facts, observedAt, verifiedAt).outcome));
  }

  /** Runs `fn` in one SQLite transaction (bulk imports). */
  transaction<T>(fn: () => T): T {
    return this.#db.transaction(fn).immediate();
  }

  /** One record by durable id, or null. */
  get(id: string): EntityRecord | null {
    const row = this.#prep<[string], EntityRow>('SELECT * FROM entities WHERE id = ?').get(id);
    return row ? this.#toRecord(row) : null;
  }

  /** Number of entities and sources (status, tests). */
  counts(): { entities: number; sources: number; pageSources: number; datasetSources: number } {
    const e = this.#prep<[], { n: number }>('SELECT count(*) AS n FROM entities').get()?.n ?? 0;
    const s = this.#prep<[], { type: string; n: number }>('SELECT type, count(*) AS n FROM entity_sources GROUP BY type').all();
    const page = s.find((r) => r.type === 'page')?.n ?? 0;
    const dataset = s.find((r) => r.type === 'dataset')?.n ?? 0;
    return { entities: e, sources: page + dataset, pageSources: page, datasetSources: dataset };
  }

  /**
   * Finds entities (searchPlan says what the query means). Filters are compiled to bound parameters only (never
   * concatenated user text). Throws EntityQueryError for an unknown province or kind. Ordered by name relevance
   * (FTS5 bm25) when name words are given, else by name.
   */
  search(query: EntityQuery): EntityRecord[] {
    const plan = searchPlan(query);
    const where: string[] = [];
    const params: (string | number)[] = [];
    let from = 'entities e';
    let order = 'e.name COLLATE NOCASE, e.seq';
    if (plan.nameWords.length > 0) {
      // CROSS JOIN keeps the FTS scan first: otherwise SQLite may walk a filter index and re-run MATCH per row.
      from = 'entity_names f CROSS JOIN entities e ON e.seq = f.rowid';
      where.push('entity_names MATCH ?');
      params.push(ftsQuery(plan.nameWords));
      order = 'bm25(entity_names), e.seq';
    }
    for (const c of plan.kindConds) {
      const byKind = c.kinds.length > 0 ? `e.kind IN (${c.kinds.map(() => '?').join(', ')}) OR ` : '';
      where.push(`(${byKind}e.seq IN (SELECT rowid FROM entity_names WHERE entity_names MATCH ?))`);
      params.push(...c.kinds, c.words.map((n) => `"${n}"`).join(' OR '));
    }
    if (plan.province !== null) {
      where.push('e.province = ?');
      params.push(plan.province);
    }
    if (plan.localityKey !== null) {
      where.push('e.locality_key = ?');
      params.push(plan.localityKey);
    }
    if (plan.kinds !== null) {
      where.push(`e.kind IN (${plan.kinds.map(() => '?').join(', ')})`);
      params.push(...plan.kinds);
    }
    const sql = `SELECT e.* FROM ${from}${where.length ? ` WHERE ${where.join(' AND ')}` : ''} ORDER BY ${order} LIMIT ?`;
    params.push(plan.limit);
    const rows = this.#prep<(string | number)[], EntityRow>(sql).all(...params);
    return rows.map((r) => this.#toRecord(r));
  }

  /** Attaches a source statement to the entity joinDecision picks, storing the source and its keys. */
  #record(
    src: {
      sourceKey: string;
      type: 'page' | 'dataset';
      pageRef: number | null;
      pageUrl: string | null;
      dataset: string | null;
      rowId: string | null;
      verifiedAt: string | null;
    },
    facts: EntityFacts,
    keys: readonly string[],
    observedAt: string,
    previous: ReadonlyMap<string, number>,
  ): { seq: number; id: string; outcome: UpsertOutcome } {
    const d = runJoinSync(joinDecision(src.sourceKey, facts, keys, previous), (ask) => this.#answer(ask, observedAt));
    this.#prep(
      `INSERT INTO entity_sources (source_key, entity_seq, type, page_ref, page_url, dataset, row_id, facts, observed_at, verified_at)
       VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
       ON CONFLICT (source_key) DO UPDATE SET entity_seq = excluded.entity_seq, page_url = excluded.page_url,
         facts = excluded.facts, observed_at = excluded.observed_at, verified_at = excluded.verified_at`,
    ).run(
      src.sourceKey,
      d.seq,
      src.type,
      src.pageRef,
      src.pageUrl,
      src.dataset,
      src.rowId,
      JSON.stringify(facts),
      observedAt,
      src.verifiedAt,
    );
    this.#prep('DELETE FROM entity_keys WHERE source_key = ?').run(src.sourceKey);
    const addKey = this.#prep('INSERT OR IGNORE INTO entity_keys (key, source_key, entity_seq) VALUES (?, ?, ?)');
    for (const k of d.storedKeys) addKey.run(k, src.sourceKey, d.seq);
    const id = this.#prep<[number], { id: string }>('SELECT id FROM entities WHERE seq = ?').get(d.seq)!.id;
    return { seq: d.seq, id, outcome: d.outcome };
  }

  /** Answers one ask of joinDecision from SQLite. */
  #answer(ask: JoinAsk, at: string): unknown {
    switch (ask.op) {
      case 'source':
        return (
          this.#prep<[string], { entity_seq: number }>('SELECT entity_seq FROM entity_sources WHERE source_key = ?').get(ask.sourceKey)
            ?.entity_seq ?? null
        );
      case 'byKey':
        return this.#prep<[string, string], { entity_seq: number; postal_code: string | null }>(
          `SELECT k.entity_seq, e.postal_code FROM entity_keys k JOIN entities e ON e.seq = k.entity_seq
           WHERE k.key = ? AND k.source_key <> ? ORDER BY k.entity_seq LIMIT 8`,
        ).all(ask.key, ask.sourceKey);
      case 'alive':
        return this.#prep<[number], { n: number }>('SELECT 1 AS n FROM entities WHERE seq = ?').get(ask.seq) !== undefined;
      case 'byName':
        return this.#prep(
          `SELECT DISTINCT k.entity_seq, e.lat, e.lon, e.postal_code, e.street, e.locality FROM entity_keys k
           JOIN entities e ON e.seq = k.entity_seq WHERE k.key = ? AND k.source_key <> ? ORDER BY k.entity_seq LIMIT 20`,
        ).all(ask.key, ask.sourceKey);
      case 'create':
        return this.#create(ask.primaryKey, ask.facts, at);
    }
  }

  #create(primaryKey: string, facts: EntityFacts, at: string): number {
    let id = entityIdFor(primaryKey);
    // A hash collision with a different live entity (practically impossible) gets a salted id rather than a merge.
    for (let i = 1; this.#prep<[string], { n: number }>('SELECT 1 AS n FROM entities WHERE id = ?').get(id); i++) {
      id = entityIdFor(`${primaryKey}#${i}`);
    }
    const r = this.#prep(
      `INSERT INTO entities (id, name, kind, country, last_verified_at, created_at, updated_at) VALUES (?, ?, ?, 'CA', ?, ?, ?)`,
    ).run(id, facts.name, facts.kind, at, at, at);
    return Number(r.lastInsertRowid);
  }

  /** Recomputes an entity from its sources (mergeSources); no source left → the entity is deleted. */
  #refresh(seq: number): void {
    const merged = mergeSources(this.#prep<[number], SourceRow>('SELECT * FROM entity_sources WHERE entity_seq = ?').all(seq));
    this.#prep('DELETE FROM entity_names WHERE rowid = ?').run(seq);
    if (merged === null) {
      this.#prep('DELETE FROM entities WHERE seq = ?').run(seq);
      return;
    }
    this.#prep(
      `UPDATE entities SET name = ?, kind = ?, street = ?, locality = ?, locality_key = ?, province = ?, postal_code = ?,
         lat = ?, lon = ?, telephone = ?, url = ?, last_verified_at = ?, updated_at = ? WHERE seq = ?`,
    ).run(
      merged.name,
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
      seq,
    );
    this.#prep('INSERT INTO entity_names (rowid, name) VALUES (?, ?)').run(seq, merged.names);
  }

  #toRecord(row: EntityRow): EntityRecord {
    return toEntityRecord(
      row,
      this.#prep<[number], SourceRow>('SELECT * FROM entity_sources WHERE entity_seq = ?').all(row.seq),
      this.#datasets,
    );
  }
}
