/**
 * `svc crawl`: crawl from seeds into the index (the same crawler `svc serve` runs), with a live progress line on a
 * terminal (off one, a line every few seconds: progress.ts) and a summary at the end. Name pins (`--resolve`) and loopback access (`--allow-loopback`) exist only
 * here and in the environment, never in the API.
 */
import { readFileSync } from 'node:fs';
import { parseArgs } from 'node:util';
import { loadConfig, type Config } from '../config.js';
import { createCrawler, type CrawlStats } from '../crawler/crawler.js';
import { hostOf, normalizeUrl } from '../crawler/url.js';
import { openIndex, type ServedIndex } from '../index/shards/sharded-index.js';
import { createLogger } from '../logger.js';
import { indexLocation } from '../index/engines/lance/location.js';
import { openEmbedder, stateFile } from '../main.js';
import type { EntitySink, PageSink } from '../page-model.js';
import { openStateDb, type StateDb } from '../state/db.js';
import { EntityStore } from '../state/entities.js';
import { COMMAND_HELP } from './help.js';
import { UsageError, type CliIo } from './io.js';
import { onStopSignals } from './stop-signals.js';
import { ProgressLines } from './progress.js';
import { reembedWithProgress } from './reembed-run.js';
import { openRepositories, stateOptions } from '../state/repos/open.js';
import type { Repositories } from '../state/repos/types.js';

const USAGE = COMMAND_HELP['crawl']!;

/** The index and entity sinks the crawl writes to, and how to close them. */
export interface CrawlSinks {
  readonly sink: PageSink;
  readonly entities: EntitySink;
  /** The index, when the sink is one: a re-embedding it prepared runs after the crawl. */
  readonly index?: ServedIndex;
  close(): Promise<void>;
}

/** Injection points (tests, and the lead's wiring). */
export interface CrawlCommandDeps {
  /**
   * Opens the sinks. @default the index at SVC_INDEX_URI (host ids from the state repositories) and the entity
   * store of the repositories (the data dir's SQLite file, or PostgreSQL with SVC_DATABASE_URL)
   */
  readonly openSinks?: (config: Config, db: StateDb, repos: Repositories) => Promise<CrawlSinks>;
  /** Progress refresh interval on a TTY, ms. @default 250 */
  readonly progressMs?: number;
}

async function defaultSinks(config: Config, db: StateDb, repos: Repositories): Promise<CrawlSinks> {
  const log = createLogger({ level: config.logLevel === 'info' ? 'warn' : config.logLevel });
  const embedder = await openEmbedder(config, log);
  // Host ids from the state database: the same ids whichever process writes the index.
  // One dataset or N shards (SVC_INDEX_SHARDS for a new index): each page goes to its shard.
  const index = await openIndex({
    location: indexLocation(config),
    shards: config.indexShards,
    embedder,
    log,
    hostIds: repos.hostIds,
    textEngine: false,
    reembed: config.reembed === 'background',
  });
  return {
    sink: index,
    index,
    entities: repos.entities ?? new EntityStore(db),
    close: async () => {
      await index.close();
      await embedder?.close();
    },
  };
}

function progressLine(s: CrawlStats): string {
  return `fetched ${s.fetched} · indexed ${s.indexed} · queued ${s.queued} · waiting hosts ${s.waitingHosts} · errors ${s.errors}`;
}

function readSeedsFile(file: string): string[] {
  let text: string;
  try {
    text = readFileSync(file, 'utf8');
  } catch (err) {
    throw new UsageError(`cannot read seeds file ${file}: ${(err as Error).message}`);
  }
  return text
    .split(/\r?\n/)
    .map((l) => l.replace(/#.*$/, '').trim())
    .filter((l) => l !== '');
}

/** `svc crawl …` — returns the exit code (0 done, 1 nothing crawlable, 2 usage). */
export async function crawlCommand(argv: string[], io: CliIo, deps: CrawlCommandDeps = {}): Promise<number> {
  const { values, positionals } = parseArgs({
    args: argv,
    allowPositionals: true,
    options: {
      seeds: { type: 'string', multiple: true },
      'seeds-file': { type: 'string' },
      'max-pages': { type: 'string' },
      resolve: { type: 'string', multiple: true },
      'allow-loopback': { type: 'boolean' },
      'data-dir': { type: 'string' },
      'gap-ms': { type: 'string' },
      concurrency: { type: 'string' },
      'stay-on-hosts': { type: 'boolean' },
      timeout: { type: 'string' },
      wait: { type: 'string' },
      'lease-ms': { type: 'string' },
      help: { type: 'boolean', short: 'h' },
    },
  });
  if (values.help) {
    io.stdout.write(`${USAGE}\n`);
    return 0;
  }
  // `--seeds a b c`: parseArgs takes the first value; the rest arrive as positionals.
  const rawSeeds = [
    ...(values.seeds ?? []),
    ...(values.seeds ? positionals : []),
    ...(values['seeds-file'] ? readSeedsFile(values['seeds-file']) : []),
  ];
  if (!values.seeds && positionals.length > 0) throw new UsageError(`unexpected argument "${positionals[0]}"\n${USAGE}`);
  if (rawSeeds.length === 0) throw new UsageError(`no seeds: give --seeds URL… or --seeds-file F\n${USAGE}`);
  const num = (name: string, v: string | undefined, min: number): number | undefined => {
    if (v === undefined) return undefined;
    const n = Number(v);
    if (!Number.isInteger(n) || n < min) throw new UsageError(`--${name} must be an integer ≥ ${min}`);
    return n;
  };
  const maxPages = num('max-pages', values['max-pages'], 1);
  const timeoutS = num('timeout', values.timeout, 1);
  const waitS = num('wait', values.wait, 0) ?? 30;
  const leaseMs = num('lease-ms', values['lease-ms'], 100);
  const envResolve = (io.env['SVC_RESOLVE'] ?? '')
    .split(',')
    .map((s) => s.trim())
    .filter((s) => s !== '');
  const config = loadConfig({
    env: io.env,
    flags: {
      dataDir: values['data-dir'],
      resolve: values.resolve ? [...envResolve, ...values.resolve] : undefined,
      crawlAllowLoopback: values['allow-loopback'] ? true : undefined,
      crawlGapMs: values['gap-ms'],
      crawlConcurrency: values.concurrency,
    },
  });

  const seeds: string[] = [];
  for (const s of rawSeeds) {
    const n = normalizeUrl(s);
    if (n === null) io.stderr.write(`svc crawl: skipping "${s}": not a crawlable http(s) URL\n`);
    else seeds.push(n);
  }
  if (seeds.length === 0) {
    io.stderr.write('svc crawl: no crawlable seed\n');
    return 1;
  }

  const db = openStateDb(stateFile(config));
  // The crawl state (frontier, politeness, documents, host facts) is the repositories': the data dir's file, or
  // PostgreSQL with SVC_DATABASE_URL, where this run joins the fleet's frontier.
  let repos: Repositories;
  try {
    repos = await openRepositories({
      ...stateOptions(config),
      defaultGapMs: config.crawlGapMs,
      embedded: { db },
    });
  } catch (err) {
    db.close();
    throw err;
  }
  const sinks = await (deps.openSinks ?? defaultSinks)(config, db, repos);
  // --stay-on-hosts is stored with every entry (crawler/frontier.ts CrawlScope), so svc serve keeps to it too.
  const scope = values['stay-on-hosts'] ? [...new Set(seeds.map(hostOf))] : null;
  const log = createLogger({ level: config.logLevel === 'info' ? 'warn' : config.logLevel, destination: io.stderr as never });
  const crawler = createCrawler({
    config,
    repos,
    sink: sinks.sink,
    entities: sinks.entities,
    log,
    ...(leaseMs !== undefined ? { frontier: { leaseMs } } : {}),
  });
  // Seeds already known keep their state: running the same command again resumes the crawl (nothing is redone);
  // known pages come back on their recrawl schedule. A dead-lettered seed is revived, and a seed given with
  // another scope takes it (with the pages admitted under its old one).
  for (const s of seeds) await crawler.enqueue(s, { priority: 'submitted', reason: 'seed', scope, rescope: true });

  const tty = io.stdout.isTTY === true;
  const started = Date.now();
  let timer: NodeJS.Timeout | null = null;
  if (tty) {
    timer = setInterval(() => {
      void crawler.stats().then(
        (s) => timer && io.stdout.write(`\r\x1b[2K${progressLine(s)}`),
        () => undefined,
      );
    }, deps.progressMs ?? 250);
  } else {
    // Off a terminal: a line every config.progressMs, the share done being of what is fetched or still queued.
    const lines = new ProgressLines({ io, label: 'crawl', unit: 'pages', everyMs: config.progressMs });
    timer = setInterval(
      () => {
        void crawler.stats().then(
          (s) =>
            timer &&
            lines.update(s.fetched, {
              ...(maxPages !== undefined ? { total: maxPages } : { fraction: s.fetched / Math.max(1, s.fetched + s.queued) }),
              extra: `indexed ${s.indexed}, queued ${s.queued}, errors ${s.errors}`,
            }),
          () => undefined,
        );
      },
      Math.max(50, Math.min(config.progressMs, 1000)),
    );
  }
  // Ctrl-C and SIGTERM alike: in-flight items are aborted and handed back to the frontier, then the summary.
  const stop = onStopSignals();
  stop.signal.addEventListener('abort', () => void crawler.stop(), { once: true });
  let stats: CrawlStats;
  try {
    stats = await crawler.runUntilIdle({
      idleHorizonMs: waitS * 1000,
      ...(maxPages !== undefined ? { maxPages } : {}),
      ...(timeoutS !== undefined ? { timeoutMs: timeoutS * 1000 } : {}),
    });
  } finally {
    stop.dispose();
    if (timer) clearInterval(timer);
    if (tty) io.stdout.write('\r\x1b[2K');
  }
  const secs = (Date.now() - started) / 1000;
  const dead = await crawler.frontier.deadLetters({ limit: 5 });
  const later = await crawler.frontier.pendingItems(5);
  const when = (at: number): string =>
    at <= Date.now()
      ? 'due now'
      : `due ${new Date(at).toISOString().replace(/\.\d+Z$/, 'Z')} (in ${Math.ceil((at - Date.now()) / 1000)} s)`;
  const summary = [
    `crawl ${stop.received() ? `stopped by ${stop.received()}` : 'finished'} in ${secs.toFixed(1)} s`,
    `  fetched   ${stats.fetched}`,
    `  indexed   ${stats.indexed}`,
    `  excluded  ${stats.excluded}`,
    `  errors    ${stats.errors}`,
    `  dead      ${stats.dead}`,
    `  queued    ${stats.queued}`,
    `  rate      ${(stats.fetched / Math.max(secs, 0.001)).toFixed(2)} responses/s`,
    ...dead.map((d) => `  dead: ${d.url} (${d.deadReason ?? d.lastError ?? 'unknown'})`),
    ...later.map((p) => `  later: ${p.url} ${when(p.nextAt)}${p.lastError ? ` after ${p.lastError}` : ''}`),
    ...(stats.queued > 0 ? [`  ${stats.queued} item(s) stay queued: run this command again later, or let svc serve continue them.`] : []),
  ];
  io.stdout.write(summary.join('\n') + '\n');
  // A model on an index without its vectors: the pages already there are embedded now (stoppable, and resumed next
  // time: a crawl stopped still exits 0).
  if (sinks.index && !stop.received()) {
    const again = onStopSignals();
    try {
      const r = await reembedWithProgress(sinks.index, io, { everyMs: config.progressMs, signal: again.signal });
      if (r === 'stopped') {
        io.stdout.write(
          `re-embedding stopped by ${again.received() ?? 'a signal'}: what is done is kept; svc reindex --vectors finishes it\n`,
        );
      }
    } finally {
      again.dispose();
    }
  }
  await sinks.close();
  await repos.close();
  db.close();
  return 0;
}
