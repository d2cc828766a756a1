/**
 * What webmaster diagnostics read about a property's hosts beyond HostFactsRepo: hosts, sitemaps, statuses,
 * documents, change intervals, entities. The same SQL on both backends; read-only, the property's own URLs only.
 */
import type { StateDb } from '../db.js';
import type { Queryable } from './postgres/db.js';
import type { PropertyStateRepo, PropertyStateRows } from './types.js';

type Run = (sql: string, params: readonly unknown[]) => Promise<Record<string, unknown>[]>;

/** `?` placeholders to PostgreSQL's `$1, $2…` (the statements below hold no `?` inside literals). */
function numbered(sql: string): string {
  let i = 0;
  return sql.replace(/\?/g, () => `$${++i}`);
}

function repo(run: Run): PropertyStateRepo {
  return {
    async hostsUnder(kind, name) {
      const sub = kind === 'domain' ? `%.${name}` : name;
      const rows = await run(
        `SELECT host FROM documents WHERE host = ? OR host LIKE ? UNION SELECT host FROM frontier WHERE host = ? OR host LIKE ?
         UNION SELECT host FROM crawl_hosts WHERE host = ? OR host LIKE ? ORDER BY host`,
        [name, sub, name, sub, name, sub],
      );
      // The property's own name counts even before anything of it was seen (a host property is that host, a
      // domain property covers its apex).
      const known = rows.map((r) => r.host as string);
      return known.includes(name) ? known : [name, ...known].sort();
    },
    async rows(hosts): Promise<PropertyStateRows> {
      const list = [...hosts];
      const inHosts = (col = 'host') => `${col} IN (${list.map(() => '?').join(', ') || 'NULL'})`;
      const [sitemaps, statuses, documents, intervals, entities] = await Promise.all([
        run(`SELECT url, state, last_status, last_outcome FROM frontier WHERE kind = 'sitemap' AND ${inHosts()} ORDER BY url`, list),
        run(`SELECT last_status AS s, count(*) AS n FROM frontier WHERE kind = 'page' AND ${inHosts()} GROUP BY last_status`, list),
        run(`SELECT page_ref, url, status, reason, last_fetched, last_changed FROM documents WHERE ${inHosts()} ORDER BY page_ref`, list),
        run(`SELECT interval_ms FROM host_change_intervals WHERE ${inHosts()}`, list),
        run(
          `SELECT e.id, e.name, e.kind, s.page_url, s.observed_at FROM entity_sources s JOIN entities e ON e.seq = s.entity_seq
           JOIN documents d ON d.page_ref = s.page_ref WHERE s.type = 'page' AND ${inHosts('d.host')} ORDER BY e.id, s.page_url`,
          list,
        ),
      ]);
      return {
        sitemaps: sitemaps.map((r) => ({
          url: r.url as string,
          state: r.state as string,
          lastStatus: (r.last_status as number | null) ?? null,
          lastOutcome: (r.last_outcome as string | null) ?? null,
        })),
        statusCounts: statuses.map((r) => ({ status: r.s === null ? null : Number(r.s), count: Number(r.n) })),
        documents: documents.map((r) => ({
          pageRef: Number(r.page_ref),
          url: r.url as string,
          status: r.status as string,
          reason: (r.reason as string | null) ?? null,
          lastFetched: (r.last_fetched as string | null) ?? null,
          lastChanged: (r.last_changed as string | null) ?? null,
        })),
        changeIntervalsMs: intervals.map((r) => Number(r.interval_ms)),
        entitySources: entities.map((r) => ({
          id: r.id as string,
          name: r.name as string,
          kind: r.kind as string,
          pageUrl: r.page_url as string,
          observedAt: r.observed_at as string,
        })),
      };
    },
  };
}

export function sqlitePropertyState(db: StateDb): PropertyStateRepo {
  return repo(async (sql, params) => db.prepare(sql).all(...params) as Record<string, unknown>[]);
}

export function pgPropertyState(db: Queryable): PropertyStateRepo {
  return repo(async (sql, params) => (await db.query(numbered(sql), [...params])).rows);
}
