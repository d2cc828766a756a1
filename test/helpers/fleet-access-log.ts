/**
 * What the fleet tests (issue 10) read from the fixture web's access log after a crawl in which one crawler worker
 * was killed (kill -9) mid-fetch: the per-host gap held across workers, every page was fetched, and only what the
 * killed worker held was fetched twice, the second time after the kill (after its lease lapsed, never concurrently).
 */
import type { Test } from 'tap';
import type { AccessEntry } from '../../fixtures/test-web/index.js';

/** The slow URL the killed worker held (`/slow-headers` on trap.test) was fetched once more, after its lease ended. */
export function assertSlowUrlRefetched(t: Test, log: readonly AccessEntry[], o: { killedAt: number; leaseUntil: number }): void {
  const slow = log.filter((e) => e.host === 'trap.test' && e.path.startsWith('/slow-headers'));
  t.equal(slow.length, 2, "the killed worker's URL was fetched once more");
  t.ok(
    slow[1]!.at >= o.killedAt && slow[1]!.at >= o.leaseUntil,
    `…only after the kill and after its lease lapsed (${slow[1]!.at - o.killedAt} ms after the kill, ${slow[1]!.at - o.leaseUntil} ms after the lease end): never concurrently`,
  );
}

export interface FleetCrawlExpectation {
  /** The generated hosts crawled (gen-N.test), each with its home page and `pages` pages /p/0.html …. */
  readonly hosts: readonly string[];
  readonly pages: number;
  /** The per-host gap every worker keeps (ms, between request arrivals). */
  readonly gapMs: number;
  /** URLs the killed worker held leased when it died: the only ones that may be fetched twice. */
  readonly held: ReadonlySet<string>;
  readonly killedAt: number;
  /** The URL of a host's path (TestWeb.url). */
  readonly url: (host: string, path: string) => string;
}

/**
 * Per host: no two requests closer than the gap, robots.txt fetched once for the fleet, every page fetched, nothing
 * fetched twice but what the dead worker held.
 */
export function assertFleetCrawl(t: Test, log: readonly AccessEntry[], x: FleetCrawlExpectation): void {
  for (const h of x.hosts) {
    const entries = log.filter((e) => e.host === h);
    for (let k = 1; k < entries.length; k++) {
      const d = entries[k]!.at - entries[k - 1]!.at;
      if (d < x.gapMs) t.fail(`${h}: ${entries[k - 1]!.path} → ${entries[k]!.path} only ${d} ms apart across workers`);
    }
    // One robots.txt fetch for the whole fleet; a second only when the worker fetching it was the one killed.
    const robots = entries.filter((e) => e.path === '/robots.txt');
    t.ok(
      robots.length === 1 || (robots.length === 2 && robots[1]!.at >= x.killedAt),
      `${h}: robots.txt fetched once for the fleet (${robots.length} fetches)`,
    );
    const paths = entries.filter((e) => e.path !== '/robots.txt').map((e) => e.path);
    const pagePaths = [...new Set(paths.filter((p) => /^\/(p\/\d+\.html)?$/.test(p)))].sort();
    t.same(
      pagePaths,
      ['/', ...Array.from({ length: x.pages }, (_, i) => `/p/${i}.html`)].sort(),
      `${h}: every page fetched (${[...new Set(paths)].join(' ')})`,
    );
    const twice = paths.filter((p, k) => paths.indexOf(p) !== k);
    t.same(
      twice.filter((p) => !x.held.has(x.url(h, p))),
      [],
      `${h}: no URL fetched twice but those the killed worker held`,
    );
    for (const p of twice) {
      const url = x.url(h, p);
      t.ok(x.held.has(url), `${url} fetched twice: only a URL the killed worker held`);
      const hits = entries.filter((e) => e.path === p);
      t.ok(hits[1]!.at >= x.killedAt, `${url}: the second fetch came after the kill`);
    }
  }
}
