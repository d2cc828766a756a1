/**
 * A whole svc service for the page tests: the real service (createServices/startServer, all registered tools)
 * with the web pages mounted, over an index filled by the real crawler from crawler-net's local test web, and the
 * real request processor following URL requests through that crawler. Everything listens on 127.0.0.1.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { captureLog, loopbackFlags } from '../helpers/service.js';
import { loadConfig, type Config } from '../../config.js';
import { sqliteRepositories } from '../../state/repos/sqlite.js';
import { createCrawler, type Crawler, type CrawlStats } from '../../crawler/crawler.js';
import { startTestWeb, type TestWeb } from '../../fixtures/test-web/index.js';
import { createLogger } from '../../logger.js';
import { createServices, startServer, type RunningServer, type Services } from '../../main.js';
import { RequestProcessor, type CrawlerHandle } from '../../tools/request-processor.js';

export interface WebService {
  readonly url: string;
  readonly key: string;
  readonly config: Config;
  readonly services: Services;
  readonly web: TestWeb;
  readonly crawler: Crawler;
  /** What the initial crawl did. */
  readonly crawlStats: CrawlStats;
  /** Every log line the service wrote (JSON strings). */
  readonly logLines: string[];
  close(): Promise<void>;
}

/** Hosts of the test web whose pages the page tests search. */
export const SEED_HOSTS = [
  'gen-0.test',
  'gen-1.test',
  'gen-2.test',
  'ontario-gov.test',
  'ville-quebec.test',
  'shop-montreal.test',
] as const;

/** The host that also serves the snippet-rule pages below (its robots.txt allows everything, no Crawl-delay). */
export const SNIPPET_HOST = 'shop-montreal.test';

/**
 * Pages with snippet rules, served on SNIPPET_HOST through the test web's setPage: every one says "maplewood", so
 * `maplewood site:shop-montreal.test` finds all three. The data-nosnippet page hides SECRET-NOSNIPPET.
 */
export const SNIPPET_PAGES: Readonly<Record<string, string>> = {
  '/snippet-rules/nosnippet.html': snippetPage(
    'Maplewood rye (nosnippet)',
    '<meta name="robots" content="nosnippet">',
    '<p>Maplewood rye is baked every Thursday with stone-ground flour from a mill near Joliette.</p>',
  ),
  '/snippet-rules/max-snippet-50.html': snippetPage(
    'Maplewood brioche (max-snippet:50)',
    '<meta name="robots" content="max-snippet:50">',
    '<p>Our maplewood brioche uses butter from Quebec dairies, eggs from local farms and a slow overnight proof that gives it a soft and even crumb.</p>',
  ),
  '/snippet-rules/data-nosnippet.html': snippetPage(
    'Maplewood baguette (data-nosnippet)',
    '',
    '<p>The maplewood baguette is shaped by hand each morning.</p><p data-nosnippet>SECRET-NOSNIPPET maplewood supplier code 4471.</p>',
  ),
};

function snippetPage(title: string, head: string, body: string): string {
  return `<!doctype html>\n<html lang="en"><head><meta charset="utf-8"><title>${title}</title>${head}</head><body><main><h1>${title}</h1>${body}</main></body></html>\n`;
}

/**
 * Starts the test web, crawls the seed hosts into the service's own index (robots, sitemaps and links as the
 * crawler does them), then serves REST + pages. `crawl: false` skips the initial crawl (empty index).
 */
export async function startWebService(opts: { crawl?: boolean; maxPages?: number } = {}): Promise<WebService> {
  const web = await startTestWeb({ generatedHosts: 3, generatedPages: 12 });
  const dataDir = mkdtempSync(join(tmpdir(), 'svc-web-test-'));
  const config = loadConfig({
    env: {},
    flags: {
      ...loopbackFlags(dataDir),
      crawlAllowLoopback: true,
      resolve: web.pins,
      crawlGapMs: 10,
      crawlConcurrency: 6,
    },
  });
  const { lines: logLines, destination } = captureLog();
  const log = createLogger({ level: 'info', destination });
  const base = await createServices(config, { log });
  const { deps } = base;
  const crawler = createCrawler({
    config,
    repos: sqliteRepositories(base.local.db, { defaultGapMs: config.crawlGapMs }),
    sink: deps.index,
    entities: base.local.entities,
    // The crawl stays on the seeded hosts (the test web also serves traps and other fixtures).
    admit: (url) => SEED_HOSTS.some((h) => new URL(url).hostname === h),
    fetchTimeouts: { connectTimeoutMs: 2000, headersTimeoutMs: 3000, totalTimeoutMs: 5000 },
  });
  for (const h of SEED_HOSTS) await crawler.enqueue(web.url(h, '/'), { reason: 'seed', priority: 'discovered' });
  for (const [path, body] of Object.entries(SNIPPET_PAGES)) {
    web.setPage(SNIPPET_HOST, path, { body });
    await crawler.enqueue(web.url(SNIPPET_HOST, path), { reason: 'seed', priority: 'discovered' });
  }
  const crawlStats =
    opts.crawl === false ? await crawler.stats() : await crawler.runUntilIdle({ maxPages: opts.maxPages ?? 120, timeoutMs: 40_000 });
  // Fold the crawl into the full-text indexes. Without it, rows written after the index's first FTS build are
  // searched inconsistently until the store's own optimize (every 200 writes): phrase and intitle: queries miss
  // them and a positive site: query sometimes returns nothing (reported to index-core; see docs/web.md).
  await deps.index.optimize();

  // URL requests go through the same crawler: the processor admits them, the running crawler fetches them.
  const handle: CrawlerHandle = {
    frontier: crawler.frontier,
    processNow: async (url, o) => crawler.processNow(url, o),
  };
  const processor = new RequestProcessor({
    requests: deps.repos.requests,
    documents: base.local.documents,
    crawler: handle,
    intervalMs: 200,
  });
  crawler.start();
  processor.start();

  // main.ts mounts the pages (AppServices.mountExtra): the test serves exactly what `svc serve` serves.
  const services: Services = base;
  const { key } = await services.keys.create({ name: 'web-test', perMinute: 600, perDay: 100_000 });
  const running: RunningServer = await startServer(services);
  let closed = false;
  return {
    url: running.url,
    key,
    config,
    services,
    web,
    crawler,
    crawlStats,
    logLines,
    close: async () => {
      if (closed) return;
      closed = true;
      await running.close();
      await processor.stop();
      await crawler.stop();
      await services.close();
      await web.close();
      rmSync(dataDir, { recursive: true, force: true });
    },
  };
}
