/**
 * Diagnostics of a verified property, computed from what the service already holds: the document registry and the
 * frontier (state/site-scope.ts counts each URL once: known = indexed + excluded + queued + retrying + dead), host
 * facts (robots sitemaps, link aggregates, change rate), the passage index (canonical, snippet directives) and the
 * entity store (structured data with its source page, and the JSON-LD blocks that failed to parse, per page).
 * Aggregates and the property's own URLs only: no visitor logs exist to report. Reads the embedded SQLite state (as
 * svc_site does), and the parse errors from the entities repository when given (PostgreSQL); see docs/webmaster.md.
 */
import type { StoredPage } from '../index/store.js';
import type { StateDb } from '../state/db.js';
import { EntityStore, type JsonLdParseErrorRecord } from '../state/entities.js';
import type { EntitiesRepo } from '../state/repos/types.js';
import { Hosts } from '../state/hosts.js';
import type { WebmasterProperty } from '../state/repos/webmaster-types.js';
import { hostScope, type ExclusionReason } from '../state/site-scope.js';

export interface DiagnosticsSources {
  readonly db: StateDb;
  /** The passage index (or anything that reads a stored page by page_ref). */
  readonly index: { getPage(pageRef: number): Promise<StoredPage | null> };
  /** Where the crawler's entity sink writes (the repositories' EntitiesRepo). @default the entities of `db` */
  readonly entities?: Pick<EntitiesRepo, 'parseErrors'>;
}

export interface PropertyDiagnostics {
  readonly property: { readonly id: string; readonly kind: string; readonly name: string };
  /** Hosts of the property SvcBot knows, sorted. */
  readonly hosts: readonly string[];
  readonly urls: {
    readonly known: number;
    readonly indexed: number;
    readonly excluded: { readonly total: number; readonly byReason: Readonly<Partial<Record<ExclusionReason, number>>> };
    readonly queued: number;
    readonly retrying: number;
    readonly dead: number;
  };
  /** Sitemaps in the frontier with their last fetch. */
  readonly sitemaps: readonly { readonly url: string; readonly state: string; readonly lastStatus: number | null; readonly lastOutcome: string | null }[];
  /** Last HTTP status of each page URL fetched ("none" when no response yet). */
  readonly statusCodes: Readonly<Record<string, number>>;
  /** Indexed pages grouped by their declared canonical URL (groups of one omitted); pages pointing elsewhere. */
  readonly canonical: { readonly groups: readonly { readonly canonical: string; readonly pages: number }[]; readonly pointingElsewhere: number };
  readonly directives: { readonly noindex: number; readonly nosnippet: number; readonly maxSnippet: number };
  readonly freshness: {
    readonly lastFetchedAt: string | null;
    readonly oldestFetchedAt: string | null;
    readonly lastChangedAt: string | null;
    /** Median observed interval between two changes of a page, over the property's hosts (ms). */
    readonly medianChangeIntervalMs: number | null;
  };
  readonly structuredData: {
    /** Entities fed by the property's pages, with the page they came from (provenance). */
    readonly entities: readonly { readonly id: string; readonly name: string; readonly kind: string; readonly pageUrl: string; readonly observedAt: string }[];
    /** Documents that could not be parsed (reason parse_error), by URL. */
    readonly parseErrors: readonly string[];
    /**
     * JSON-LD blocks that failed to parse at each page's last fetch, with provenance (page ref, URL, host), a
     * closed-vocabulary reason and a count; no page text. By URL, then reason.
     */
    readonly jsonLdParseErrors: readonly JsonLdParseErrorRecord[];
  };
  readonly links: { readonly outbound: number; readonly inboundHosts: number };
}

/**
 * The property's hosts: its own name (a host property is that host, a domain property covers its apex), and the
 * subdomains the registry and the frontier of this file know. The own name counts even when this file saw nothing
 * of it: with SVC_DATABASE_URL the crawler records documents and frontier rows in PostgreSQL, not here.
 */
function propertyHosts(db: StateDb, p: Pick<WebmasterProperty, 'kind' | 'name'>): string[] {
  const sub = p.kind === 'domain' ? `%.${p.name}` : p.name;
  const known = (
    db
      .prepare(
        `SELECT host FROM documents WHERE host = ? OR host LIKE ? UNION SELECT host FROM frontier WHERE host = ? OR host LIKE ?
         UNION SELECT host FROM crawl_hosts WHERE host = ? OR host LIKE ? ORDER BY host`,
      )
      .all(p.name, sub, p.name, sub, p.name, sub) as { host: string }[]
  ).map((r) => r.host);
  return known.includes(p.name) ? known : [p.name, ...known].sort();
}

const median = (xs: number[]): number | null => {
  if (xs.length === 0) return null;
  const s = [...xs].sort((a, b) => a - b);
  const m = Math.floor(s.length / 2);
  return s.length % 2 === 1 ? (s[m] as number) : ((s[m - 1] as number) + (s[m] as number)) / 2;
};

/** Diagnostics of one property. The caller checks ownership first (webmaster/ownership.ts isOwned). */
export async function propertyDiagnostics(src: DiagnosticsSources, property: WebmasterProperty): Promise<PropertyDiagnostics> {
  const { db } = src;
  const hosts = propertyHosts(db, property);
  const urls = { known: 0, indexed: 0, queued: 0, retrying: 0, dead: 0 };
  const byReason: Partial<Record<ExclusionReason, number>> = {};
  let excluded = 0;
  for (const h of hosts) {
    const s = hostScope(db, h);
    urls.known += s.known;
    urls.indexed += s.indexed;
    urls.queued += s.queued;
    urls.retrying += s.retrying;
    urls.dead += s.dead;
    excluded += s.excluded.total;
    for (const [k, v] of Object.entries(s.excluded.byReason)) byReason[k as ExclusionReason] = (byReason[k as ExclusionReason] ?? 0) + (v ?? 0);
  }
  const inHosts = `host IN (${hosts.map(() => '?').join(', ') || 'NULL'})`;

  const sitemaps = (
    db.prepare(`SELECT url, state, last_status, last_outcome FROM frontier WHERE kind = 'sitemap' AND ${inHosts} ORDER BY url`).all(...hosts) as {
      url: string;
      state: string;
      last_status: number | null;
      last_outcome: string | null;
    }[]
  ).map((r) => ({ url: r.url, state: r.state, lastStatus: r.last_status, lastOutcome: r.last_outcome }));

  const statusCodes: Record<string, number> = {};
  for (const r of db.prepare(`SELECT last_status AS s, count(*) AS n FROM frontier WHERE kind = 'page' AND ${inHosts} GROUP BY last_status`).all(...hosts) as { s: number | null; n: number }[])
    statusCodes[r.s === null ? 'none' : String(r.s)] = r.n;

  const docs = db.prepare(`SELECT page_ref, url, status, reason, last_fetched, last_changed FROM documents WHERE ${inHosts}`).all(...hosts) as {
    page_ref: number;
    url: string;
    status: string;
    reason: string | null;
    last_fetched: string | null;
    last_changed: string | null;
  }[];
  const groups = new Map<string, number>();
  let pointingElsewhere = 0;
  let nosnippet = 0;
  let maxSnippet = 0;
  for (const d of docs.filter((x) => x.status === 'indexed')) {
    const page = await src.index.getPage(d.page_ref);
    if (!page) continue;
    const canonical = page.canonicalUrl ?? page.url;
    groups.set(canonical, (groups.get(canonical) ?? 0) + 1);
    if (canonical !== page.url) pointingElsewhere++;
    if (page.snippet.nosnippet) nosnippet++;
    else if (page.snippet.maxSnippet !== null) maxSnippet++;
  }
  const fetched = docs.map((d) => d.last_fetched).filter((x): x is string => x !== null).sort();
  const changed = docs.map((d) => d.last_changed).filter((x): x is string => x !== null).sort();

  const facts = new Hosts(db);
  let outbound = 0;
  let inboundHosts = 0;
  const intervals: number[] = [];
  for (const h of hosts) {
    const f = facts.get(h);
    if (!f) continue;
    outbound += f.outboundLinks;
    inboundHosts += f.inboundHosts;
  }
  for (const r of db.prepare(`SELECT interval_ms FROM host_change_intervals WHERE ${inHosts}`).all(...hosts) as { interval_ms: number }[]) intervals.push(r.interval_ms);

  const entities = (
    db
      .prepare(
        `SELECT e.id, e.name, e.kind, s.page_url, s.observed_at FROM entity_sources s JOIN entities e ON e.seq = s.entity_seq
         JOIN documents d ON d.page_ref = s.page_ref WHERE s.type = 'page' AND d.${inHosts} ORDER BY e.id, s.page_url`,
      )
      .all(...hosts) as { id: string; name: string; kind: string; page_url: string; observed_at: string }[]
  ).map((r) => ({ id: r.id, name: r.name, kind: r.kind, pageUrl: r.page_url, observedAt: r.observed_at }));

  return {
    property: { id: property.id, kind: property.kind, name: property.name },
    hosts,
    urls: { ...urls, excluded: { total: excluded, byReason } },
    sitemaps,
    statusCodes,
    canonical: { groups: [...groups].filter(([, n]) => n > 1).map(([canonical, pages]) => ({ canonical, pages })).sort((a, b) => a.canonical.localeCompare(b.canonical)), pointingElsewhere },
    directives: { noindex: byReason.noindex ?? 0, nosnippet, maxSnippet },
    freshness: {
      lastFetchedAt: fetched.at(-1) ?? null,
      oldestFetchedAt: fetched[0] ?? null,
      lastChangedAt: changed.at(-1) ?? null,
      medianChangeIntervalMs: median(intervals),
    },
    structuredData: {
      entities,
      parseErrors: docs.filter((d) => (d.reason ?? '').startsWith('parse_error')).map((d) => d.url).sort(),
      jsonLdParseErrors: await (src.entities ?? new EntityStore(db)).parseErrors(hosts),
    },
    links: { outbound, inboundHosts },
  };
}
