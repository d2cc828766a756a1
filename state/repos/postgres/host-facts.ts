/** Host facts on PostgreSQL (robots, sitemaps, change intervals) and a site's scope counts. */
import { extractionFacts, HOST_FACTS_SQL, hostFacts, type RawExtraction, type RawHost, type VerdictCount } from '../../hosts.js';
import { SCOPE_SQL, scopeOf, type ScopeRow } from '../../site-scope.js';
import { type HostFactsRepo } from '../types.js';
import { pgHostWrites } from './crawl.js';
import type { Db } from './db.js';

export class PgHostFacts implements HostFactsRepo {
  // The crawler's writes (crawl.ts).
  readonly recordRobots: HostFactsRepo['recordRobots'];
  readonly recordLlms: HostFactsRepo['recordLlms'];
  readonly recordCrawl: HostFactsRepo['recordCrawl'];
  readonly recordExtraction: HostFactsRepo['recordExtraction'];
  readonly recordChangeInterval: HostFactsRepo['recordChangeInterval'];
  readonly recordPageLinks: HostFactsRepo['recordPageLinks'];
  readonly withdrawPageLinks: HostFactsRepo['withdrawPageLinks'];

  constructor(readonly pool: Db) {
    ({
      recordRobots: this.recordRobots,
      recordLlms: this.recordLlms,
      recordCrawl: this.recordCrawl,
      recordExtraction: this.recordExtraction,
      recordChangeInterval: this.recordChangeInterval,
      recordPageLinks: this.recordPageLinks,
      withdrawPageLinks: this.withdrawPageLinks,
    } = pgHostWrites(pool));
  }

  async evidence(host: string) {
    const h = host.toLowerCase();
    // Independent reads; the pool runs them on separate connections at once.
    const [raw, intervals, outbound, inbound, scope, counts, thin] = await Promise.all([
      this.pool.query<RawHost>(HOST_FACTS_SQL.host, [h]),
      this.pool.query<{ interval_ms: number }>(HOST_FACTS_SQL.intervals, [h]),
      this.pool.query<{ n: number | null }>(HOST_FACTS_SQL.outbound, [h]),
      this.pool.query<{ n: number }>(HOST_FACTS_SQL.inbound, [h]),
      this.pool.query<ScopeRow>(SCOPE_SQL, [h]),
      this.pool.query<VerdictCount>(HOST_FACTS_SQL.extractionCounts, [h]),
      this.pool.query<RawExtraction>(HOST_FACTS_SQL.extractionThin, [h]),
    ]);
    return {
      facts: hostFacts(
        h,
        raw.rows[0],
        intervals.rows.map((x) => x.interval_ms),
        Number(outbound.rows[0]?.n ?? 0),
        Number(inbound.rows[0]?.n ?? 0),
        extractionFacts(counts.rows, thin.rows),
      ),
      scope: scopeOf(scope.rows),
    };
  }
}
