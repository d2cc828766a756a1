/**
 * The crawler's frontier bookkeeping and host-fact writes on PostgreSQL, sharing rules and SQL with SQLite
 * (crawl-sql.ts). Rows read then written are locked FOR UPDATE, so workers on other machines serialise on the row.
 */
import { randomUUID } from 'node:crypto';
import { MAX_INTERVALS_PER_HOST, PAGE_EXTRACTION_UPSERT } from '../../hosts.js';
import type { Db, Queryable } from './db.js';
import {
  fetchedInsertArgs,
  fetchedUpdateArgs,
  insertArgs,
  NO_HOST_CAP,
  planKnown,
  plansNothing,
  SQL,
  toRecord,
  type RawFrontierRow,
} from '../crawl-sql.js';
import { toClaimed } from '../rows.js';
import {
  LeaseLostError,
  type AdmitResult,
  type ClaimedItem,
  type CompleteFields,
  type FrontierEntry,
  type FrontierRecord,
  type FrontierRepo,
  type HostFactsRepo,
} from '../types.js';

async function guarded(q: Queryable, sql: string, args: unknown[], item: ClaimedItem): Promise<void> {
  const r = await q.query(sql, args);
  if (r.rowCount !== 1) throw new LeaseLostError(`lease on frontier item ${item.id} is no longer held`);
}

export async function pgComplete(db: Db, item: ClaimedItem, opts: CompleteFields): Promise<void> {
  const now = opts.now ?? Date.now();
  await guarded(
    db,
    SQL.complete,
    [
      opts.recrawlAt,
      opts.status ?? null,
      now,
      opts.etag ?? null,
      opts.lastModified ?? null,
      opts.outcome ?? null,
      opts.recrawlMs ?? null,
      opts.changed === true ? 1 : 0,
      opts.priority ?? null,
      item.id,
      item.lease,
    ],
    item,
  );
}

export async function pgFail(db: Db, item: ClaimedItem, opts: Parameters<FrontierRepo['fail']>[1]): Promise<'retrying' | 'dead'> {
  const now = opts.now ?? Date.now();
  const state = opts.retryAt === null ? 'dead' : 'retrying';
  await guarded(
    db,
    SQL.fail,
    [
      state,
      opts.error,
      state === 'dead' ? (opts.deadReason ?? opts.error) : null,
      opts.retryAt ?? Number.MAX_SAFE_INTEGER,
      now,
      opts.status ?? null,
      item.id,
      item.lease,
    ],
    item,
  );
  return state;
}

/**
 * Runs `insert` (an INSERT … ON CONFLICT DO NOTHING RETURNING id) as a counted new row of `host`: creates the host's
 * politeness row if missing, refuses at `cap` ('capped'), undefined if another worker won. The count row stays locked
 * until commit, so the cap is exact for a fleet.
 */
export async function pgCounted(
  c: Queryable,
  host: string,
  gapMs: number,
  cap: number,
  insert: () => Promise<{ id: number } | undefined>,
): Promise<{ id: number } | undefined | 'capped'> {
  await c.query(SQL.ensureHost, [host, gapMs]);
  if (cap <= 0 || (await c.query(SQL.hostReserve, [host, cap])).rowCount !== 1) return 'capped';
  const row = await insert();
  if (row === undefined) await c.query(SQL.hostUnreserve, [host]);
  return row;
}

/** Inserts a new queued frontier row for `e` (counted; see {@link pgCounted}). */
export function pgInsertEntry(
  c: Queryable,
  e: FrontierEntry,
  gapMs: number,
  cap: number,
  now: number,
): Promise<{ id: number } | undefined | 'capped'> {
  return pgCounted(c, e.host, gapMs, cap, async () => (await c.query<{ id: number }>(SQL.insert, insertArgs(e, now))).rows[0]);
}

export class PgCrawlFrontier {
  constructor(
    readonly db: Db,
    readonly defaultGapMs: number,
  ) {}

  async admit(e: FrontierEntry, now: number = Date.now()): Promise<AdmitResult | null> {
    // A known URL whose row this admission would not change (a link found again: most links of most pages) is
    // answered from one read, with no transaction and no row lock; anything else is decided on the locked row.
    const seen = (await this.db.query<RawFrontierRow>(SQL.byUrl, [e.url])).rows[0];
    if (seen) {
      const plan = planKnown(seen, e, now);
      if (plansNothing(plan)) return plan.result;
    }
    return this.db.transaction(async (c) => {
      const cur = (await c.query<RawFrontierRow>(`${SQL.byUrl} FOR UPDATE`, [e.url])).rows[0];
      if (!cur) {
        const ins = await pgInsertEntry(c, e, this.defaultGapMs, e.maxPerHost ?? NO_HOST_CAP, now);
        if (ins !== undefined && ins !== 'capped') return { id: ins.id, added: true, state: 'queued' as const };
        // Not inserted: another worker admitted this URL while we waited for the host's count (this statement sees
        // what committed meanwhile), and a known URL is never refused; or the cap refused a new one.
        const known = (await c.query<RawFrontierRow>(SQL.byUrl, [e.url])).rows[0];
        return known ? { id: known.id, added: false, state: known.state } : null;
      }
      const plan = planKnown(cur, e, now);
      if (plan.rescope) {
        if (plan.rescope.from !== null) await c.query(SQL.rescopeAll, [plan.rescope.to, plan.rescope.from]);
        await c.query(SQL.rescopeOne, [plan.rescope.to, cur.id]);
      }
      if (plan.refresh) await c.query(SQL.refresh, [plan.refresh.nextAt, e.priority ?? 0, e.reason, e.requestId ?? null, now, cur.id]);
      else if (plan.raise) await c.query(SQL.raise, [e.priority ?? 0, e.requestId ?? null, now, cur.id]);
      return plan.result;
    });
  }

  async claimUrl(url: string, opts: { owner: string; leaseMs: number; now?: number }): Promise<ClaimedItem | null> {
    const now = opts.now ?? Date.now();
    return this.db.transaction(async (c) => {
      const r = (await c.query<RawFrontierRow>(`${SQL.byUrl} FOR UPDATE`, [url])).rows[0];
      if (!r || (r.state === 'leased' && (r.lease_until ?? 0) > now)) return null;
      const token = `${opts.owner}:${randomUUID()}`;
      await c.query(SQL.lease, [token, now + opts.leaseMs, now, r.id]);
      return toClaimed({ ...r, lease_owner: token, lease_until: now + opts.leaseMs });
    });
  }

  async markFetched(url: string, host: string, m: Parameters<FrontierRepo['markFetched']>[2]): Promise<void> {
    const now = m.now ?? Date.now();
    await this.db.transaction(async (c) => {
      const r = (await c.query<RawFrontierRow>(`${SQL.byUrl} FOR UPDATE`, [url])).rows[0];
      if (r?.state === 'leased') return; // someone is on it right now; let them finish
      const interval = r?.recrawl_ms ?? m.recrawlMs;
      if (!r) {
        await pgCounted(c, host, this.defaultGapMs, NO_HOST_CAP, async () => {
          const ins = await c.query<{ id: number }>(SQL.fetchedInsert, fetchedInsertArgs(url, host, m, now, interval));
          return ins.rows[0];
        });
      } else {
        await c.query(SQL.fetchedUpdate, fetchedUpdateArgs(m, now, interval, r.id));
      }
    });
  }

  async get(url: string): Promise<FrontierRecord | null> {
    const r = (await this.db.query<RawFrontierRow>(SQL.byUrl, [url])).rows[0];
    return r ? toRecord(r) : null;
  }

  async deadLetters(opts: { host?: string; limit?: number } = {}): Promise<FrontierRecord[]> {
    const limit = opts.limit ?? 100;
    const r = opts.host
      ? await this.db.query<RawFrontierRow>(SQL.deadHost, [limit, opts.host.toLowerCase()])
      : await this.db.query<RawFrontierRow>(SQL.deadAll, [limit]);
    return r.rows.map(toRecord);
  }

  async pendingItems(limit = 10): Promise<FrontierRecord[]> {
    return (await this.db.query<RawFrontierRow>(SQL.pending, [limit])).rows.map(toRecord);
  }
}

type HostWrites = Omit<HostFactsRepo, 'evidence'>;

/** The host-fact writes of state/hosts.ts on PostgreSQL (same tables and columns: migration repos-004). */
export function pgHostWrites(db: Db): HostWrites {
  const ensure = (c: Queryable, h: string) => c.query('INSERT INTO crawl_hosts (host) VALUES ($1) ON CONFLICT (host) DO NOTHING', [h]);
  return {
    recordRobots: async (host, f) => {
      const h = host.toLowerCase();
      await db.transaction(async (c) => {
        await ensure(c, h);
        await c.query(
          `UPDATE crawl_hosts SET robots_status = $1, robots_http_status = $2, robots_fetched_at = $3, robots_rules = $4,
             robots_sitemaps = $5, robots_crawl_delay = $6 WHERE host = $7`,
          [f.status, f.httpStatus, f.fetchedAt, JSON.stringify(f.rules), JSON.stringify(f.sitemaps), f.crawlDelaySec, h],
        );
      });
    },
    recordLlms: async (host, f) => {
      const h = host.toLowerCase();
      await db.transaction(async (c) => {
        await ensure(c, h);
        await c.query(
          'UPDATE crawl_hosts SET llms_present = $1, llms_fetched_at = $2, llms_title = $3, llms_summary = $4, llms_link_count = $5 WHERE host = $6',
          [f.present ? 1 : 0, f.fetchedAt, f.title, f.summary, f.linkCount, h],
        );
      });
    },
    recordExtraction: async (host, f) => {
      await db.query(PAGE_EXTRACTION_UPSERT, [f.url, host.toLowerCase(), f.pageChars, f.keptChars, f.verdict, f.at]);
    },
    recordCrawl: async (host, at) => {
      // One statement: concurrent workers' increments never overwrite each other.
      await db.query(
        `INSERT INTO crawl_hosts (host, last_crawl_at, pages_fetched) VALUES ($1, $2, 1)
         ON CONFLICT (host) DO UPDATE SET last_crawl_at = excluded.last_crawl_at, pages_fetched = crawl_hosts.pages_fetched + 1`,
        [host.toLowerCase(), at],
      );
    },
    recordChangeInterval: async (host, intervalMs, at) => {
      if (!(intervalMs > 0)) return;
      const h = host.toLowerCase();
      await db.transaction(async (c) => {
        await c.query('INSERT INTO host_change_intervals (host, at, interval_ms) VALUES ($1, $2, $3)', [h, at, Math.round(intervalMs)]);
        await c.query(
          `DELETE FROM host_change_intervals WHERE host = $1 AND id NOT IN
             (SELECT id FROM host_change_intervals WHERE host = $1 ORDER BY at DESC, id DESC LIMIT $2)`,
          [h, MAX_INTERVALS_PER_HOST],
        );
      });
    },
    recordPageLinks: async (pageRef, fromHost, counts) => {
      const from = fromHost.toLowerCase();
      await db.transaction(async (c) => {
        await c.query('DELETE FROM page_host_links WHERE page_ref = $1', [pageRef]);
        // Link targets are aggregated by lower-cased host: two spellings of one host add up (the primary key).
        const agg = new Map<string, number>();
        for (const [to, n] of counts) if (n > 0) agg.set(to.toLowerCase(), (agg.get(to.toLowerCase()) ?? 0) + n);
        for (const [to, n] of agg)
          await c.query('INSERT INTO page_host_links (page_ref, from_host, to_host, links) VALUES ($1, $2, $3, $4)', [
            pageRef,
            from,
            to,
            n,
          ]);
      });
    },
    withdrawPageLinks: async (pageRef) => {
      await db.query('DELETE FROM page_host_links WHERE page_ref = $1', [pageRef]);
    },
  };
}
