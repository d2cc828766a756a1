/**
 * Integer host ids: what `site:` compiles to (a where-clause over integers, never user text). The ids are cached in
 * memory; new hosts get theirs from a shared source when the writer has one (the state's HostIdsRepo, so every
 * writer of every process agrees), else max + 1 here (single-writer `svc ingest`, benchmarks).
 */
import type { Table } from '@lancedb/lancedb';
import type { Logger } from 'pino';
import { HOST_COLUMNS, type PAGE_COLUMNS, type RowOf } from './columns.js';
import { arrowRows } from './rows.js';

/** The allocation seam for host ids (structurally the state's HostIdsRepo; index/ does not import state/). */
export interface HostIdSource {
  /** The host's id, allocated on first sight; the same for every caller, forever. */
  idFor(host: string): Promise<number>;
}

/** A (host, host id, language) row of the pages table. */
export type HostRow = RowOf<typeof PAGE_COLUMNS, 'hosts'>;

/**
 * Reads host, host id and language of every page or, with `after`, of rows with a greater row id only. Every commit
 * that can bring a host writes new fragments with ever-greater row ids (even across a restore; tested in
 * test/index/host-follow-reads-new-rows.test.ts), so a following reader reads only the new rows.
 */
export async function readHostRows(pages: Table, after: bigint | null): Promise<(HostRow & { _rowid: bigint })[]> {
  let q = pages.query().select(HOST_COLUMNS).withRowId();
  if (after !== null) q = q.where(`_rowid > ${after}`);
  return arrowRows<HostRow & { _rowid: bigint }>(await q.toArrow());
}

/** The greatest row id among `rows` and `from`. */
export function lastRowId(rows: readonly { readonly _rowid: bigint }[], from: bigint | null): bigint | null {
  let last = from;
  for (const r of rows) if (last === null || r._rowid > last) last = r._rowid;
  return last;
}

/**
 * What a reader of the index knows of its hosts and languages after reading the pages table: handed to a search thread
 * at its start (`OpenOptions.hosts`), so it does not read every page's host row again; it reads the rows after
 * `through` when it follows the writer, as it would after its own read.
 */
export interface HostSnapshot {
  readonly hosts: readonly (readonly [string, number])[];
  readonly langs: readonly string[];
  /** The greatest pages row id the read saw (null: none). */
  readonly through: bigint | null;
}

/** The host → id map of one index. */
export class HostIds {
  readonly #ids = new Map<string, number>();
  /**
   * Per domain, the known hosts equal to or under it, in order known, so each `site:` query reads one entry. Keyed
   * by host, not id, because a host's id may change; hosts are never forgotten.
   */
  readonly #under = new Map<string, string[]>();
  readonly #source: HostIdSource | null;
  #next = 1;

  constructor(source: HostIdSource | null) {
    this.#source = source;
  }

  /** Takes the ids stored in the index's rows. */
  learn(rows: readonly HostRow[]): void {
    for (const r of rows) {
      this.#put(r.host, r.host_id);
      this.#next = Math.max(this.#next, r.host_id + 1);
    }
  }

  /** Takes the ids of a `HostSnapshot`. */
  learnIds(entries: readonly (readonly [string, number])[]): void {
    for (const [host, id] of entries) {
      this.#put(host, id);
      this.#next = Math.max(this.#next, id + 1);
    }
  }

  /** Every known host with its id (`HostSnapshot`). */
  entries(): [string, number][] {
    return [...this.#ids];
  }

  /** Gives each new host (lower-cased) its id from the shared source, when there is one; known hosts cost nothing. */
  async allocate(hosts: Iterable<string>): Promise<void> {
    if (!this.#source) return;
    for (const host of hosts) if (!this.#ids.has(host)) this.#put(host, await this.#source.idFor(host));
  }

  /** The id of a (lower-cased) host, allocated here when unknown. */
  idFor(host: string): number {
    let id = this.#ids.get(host);
    if (id === undefined) {
      // max + 1, not size + 1: a host whose pages were all removed is gone from the map after a reopen, and its id
      // must not be handed to another host while old ids are still in use.
      id = this.#next++;
      this.#put(host, id);
    }
    return id;
  }

  /** Ids of every known host equal to `domain` or under it. */
  under(domain: string): number[] {
    return (this.#under.get(domain) ?? []).map((h) => this.#ids.get(h)!);
  }

  /** Sets a host's id; a host new here is entered under each domain it equals or is under. */
  #put(host: string, id: number): void {
    const known = this.#ids.has(host);
    this.#ids.set(host, id);
    if (known) return;
    // The host itself, then what follows each of its dots: the domains d with h === d || h.endsWith('.' + d).
    let at = -1;
    do {
      const domain = host.slice(at + 1);
      const hosts = this.#under.get(domain);
      if (hosts) hosts.push(host);
      else this.#under.set(domain, [host]);
      at = host.indexOf('.', at + 1);
    } while (at >= 0);
  }

  /**
   * Makes every stored host id the one the source gives (a no-op when they already agree, as they do for an index
   * only ever written with the source). Each host's rows are rewritten by one update per table; a crash in between
   * leaves some rows with the old id, and the next open finishes the job (the update is idempotent).
   */
  async adopt(tables: readonly Table[], log: Pick<Logger, 'info'> | undefined): Promise<void> {
    const source = this.#source;
    if (!source) return;
    let changed = 0;
    for (const [host, id] of [...this.#ids]) {
      const wanted = await source.idFor(host);
      if (wanted === id) continue;
      const where = `host = '${host.replace(/'/g, "''")}'`;
      for (const table of tables) await table.update({ where, valuesSql: { host_id: `CAST(${wanted} AS INT)` } });
      this.#put(host, wanted);
      changed++;
    }
    if (changed > 0) log?.info({ hosts: changed }, 'index: host ids taken from the shared state');
  }
}

/** What `followWriter` returns. */
export interface WriterFollower {
  /**
   * Looks at the writer's pages version now (after a look already in flight), so a caller that knows the writer has
   * moved on need not wait for the next tick (a search thread told the version its request must see, search-pool.ts).
   */
  lookNow(): Promise<void>;
  /** Stops it; settles once a look in flight (and its `onRows`) has finished. */
  stop(): Promise<void>;
}

/**
 * For a reader of an index another process writes: on each new pages version, reads the host rows committed since
 * row id `from` every `everyMs` (0: only on `lookNow`) and awaits `onRows`. `stop` settles after any look in flight,
 * because closing a LanceDB table during a read fails.
 */
export function followWriter(
  pages: Table,
  everyMs: number,
  from: bigint | null,
  onRows: (rows: HostRow[], pageCount: number) => void | Promise<void>,
  log: Pick<Logger, 'debug'> | undefined,
): WriterFollower {
  let seen: number | null = null;
  let after = from;
  let stopped = false;
  let timer: NodeJS.Timeout | null = null;
  let inFlight: Promise<void> = Promise.resolve();
  const look = async (): Promise<void> => {
    try {
      const v = await pages.version();
      if (v !== seen) {
        const [rows, pageCount] = await Promise.all([readHostRows(pages, after), pages.countRows()]);
        await onRows(rows, pageCount);
        // Moved on only once the rows are taken: a look that fails reads them again next time.
        seen = v;
        after = lastRowId(rows, after);
      }
    } catch (err) {
      log?.debug({ err }, "index: following the writer's hosts failed; next time");
    }
  };
  const tick = async (): Promise<void> => {
    if (stopped) return;
    await look();
    if (!stopped) schedule();
  };
  const schedule = (): void => {
    if (everyMs <= 0) return;
    timer = setTimeout(() => (inFlight = inFlight.then(tick)), everyMs).unref();
  };
  schedule();
  return {
    lookNow() {
      if (stopped) return Promise.resolve();
      // Chained after the look in flight: one look at a time (onRows is not re-entrant), and `stop` awaits this one.
      const next = inFlight.then(look);
      inFlight = next;
      return next;
    },
    async stop() {
      stopped = true;
      if (timer) clearTimeout(timer);
      timer = null;
      await inFlight;
    },
  };
}
