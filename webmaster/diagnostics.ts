/**
 * Diagnostics of a verified property from what the service already holds (registry, frontier, host facts, index,
 * entities): aggregates and the property's own URLs only, since no visitor logs exist. Read through the state
 * repositories, so SQLite and PostgreSQL give the same numbers.
 */
import type { StoredPage } from '../index/engines/lance/store.js';
import type { JsonLdParseErrorRecord } from '../state/entities.js';
import type { EntitiesRepo, HostFactsRepo, PropertyStateRepo } from '../state/repos/types.js';
import type { WebmasterProperty } from '../state/repos/webmaster-types.js';
import type { ExclusionReason } from '../state/site-scope.js';

export interface DiagnosticsSources {
  /** The state repositories (Repositories of either backend). */
  readonly repos: {
    readonly hosts: HostFactsRepo;
    readonly propertyState: PropertyStateRepo;
    /** Where the crawler's entity sink writes (JSON-LD parse errors). */
    readonly entities: Pick<EntitiesRepo, 'parseErrors'> | null;
  };
  /** The passage index (or anything that reads a stored page by page_ref). */
  readonly index: { getPage(pageRef: number): Promise<StoredPage | null> };
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
  readonly sitemaps: readonly {
    readonly url: string;
    readonly state: string;
    readonly lastStatus: number | null;
    readonly lastOutcome: string | null;
  }[];
  /** Last HTTP status of each page URL fetched ("none" when no response yet). */
  readonly statusCodes: Readonly<Record<string, number>>;
  /** Indexed pages grouped by their declared canonical URL (groups of one omitted); pages pointing elsewhere. */
  readonly canonical: {
    readonly groups: readonly { readonly canonical: string; readonly pages: number }[];
    readonly pointingElsewhere: number;
  };
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
    readonly entities: readonly {
      readonly id: string;
      readonly name: string;
      readonly kind: string;
      readonly pageUrl: string;
      readonly observedAt: string;
    }[];
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

const median = (xs: number[]): number | null => {
  if (xs.length === 0) return null;
  const s = [...xs].sort((a, b) => a - b);
  const m = Math.floor(s.length / 2);
  return s.length % 2 === 1 ? (s[m] as number) : ((s[m - 1] as number) + (s[m] as number)) / 2;
};

/** Diagnostics of one property. The caller checks ownership first (webmaster/ownership.ts isOwned). */
export async function propertyDiagnostics(src: DiagnosticsSources, property: WebmasterProperty): Promise<PropertyDiagnostics> {
  const { repos } = src;
  const hosts = await repos.propertyState.hostsUnder(property.kind, property.name);
  const urls = { known: 0, indexed: 0, queued: 0, retrying: 0, dead: 0 };
  const byReason: Partial<Record<ExclusionReason, number>> = {};
  let excluded = 0;
  let outbound = 0;
  let inboundHosts = 0;
  for (const h of hosts) {
    const { facts: f, scope: s } = await repos.hosts.evidence(h);
    urls.known += s.known;
    urls.indexed += s.indexed;
    urls.queued += s.queued;
    urls.retrying += s.retrying;
    urls.dead += s.dead;
    excluded += s.excluded.total;
    for (const [k, v] of Object.entries(s.excluded.byReason))
      byReason[k as ExclusionReason] = (byReason[k as ExclusionReason] ?? 0) + (v ?? 0);
    if (f) {
      outbound += f.outboundLinks;
      inboundHosts += f.inboundHosts;
    }
  }
  const rows = await repos.propertyState.rows(hosts);
  const statusCodes: Record<string, number> = {};
  for (const r of rows.statusCounts) statusCodes[r.status === null ? 'none' : String(r.status)] = r.count;

  const docs = rows.documents;
  const groups = new Map<string, number>();
  let pointingElsewhere = 0;
  let nosnippet = 0;
  let maxSnippet = 0;
  for (const d of docs.filter((x) => x.status === 'indexed')) {
    const page = await src.index.getPage(d.pageRef);
    if (!page) continue;
    const canonical = page.canonicalUrl ?? page.url;
    groups.set(canonical, (groups.get(canonical) ?? 0) + 1);
    if (canonical !== page.url) pointingElsewhere++;
    if (page.snippet.nosnippet) nosnippet++;
    else if (page.snippet.maxSnippet !== null) maxSnippet++;
  }
  const fetched = docs
    .map((d) => d.lastFetched)
    .filter((x): x is string => x !== null)
    .sort();
  const changed = docs
    .map((d) => d.lastChanged)
    .filter((x): x is string => x !== null)
    .sort();
  const sitemaps = rows.sitemaps;
  const intervals = [...rows.changeIntervalsMs];
  const entities = rows.entitySources;

  return {
    property: { id: property.id, kind: property.kind, name: property.name },
    hosts,
    urls: { ...urls, excluded: { total: excluded, byReason } },
    sitemaps,
    statusCodes,
    canonical: {
      groups: [...groups]
        .filter(([, n]) => n > 1)
        .map(([canonical, pages]) => ({ canonical, pages }))
        .sort((a, b) => a.canonical.localeCompare(b.canonical)),
      pointingElsewhere,
    },
    directives: { noindex: byReason.noindex ?? 0, nosnippet, maxSnippet },
    freshness: {
      lastFetchedAt: fetched.at(-1) ?? null,
      oldestFetchedAt: fetched[0] ?? null,
      lastChangedAt: changed.at(-1) ?? null,
      medianChangeIntervalMs: median(intervals),
    },
    structuredData: {
      entities,
      parseErrors: docs
        .filter((d) => (d.reason ?? '').startsWith('parse_error'))
        .map((d) => d.url)
        .sort(),
      jsonLdParseErrors: (await repos.entities?.parseErrors(hosts)) ?? [],
    },
    links: { outbound, inboundHosts },
  };
}
