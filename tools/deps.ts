import type { Logger } from 'pino';
import type { Config } from '../config.js';
import type { Resolver } from '../crawler/resolver.js';
import type { ServedIndex } from '../index/shards/sharded-index.js';
import type { EntitiesRepo, Repositories } from '../state/repos/types.js';
import type { CrawlerHandle } from './request-processor.js';

/**
 * The services every tool handler may use, built once by main.ts (createServices) and passed in — never module
 * singletons, so a test can build a whole service in a temp dir. Each area adds its own member here.
 */
export interface ServiceDeps {
  readonly config: Config;
  /**
   * The state repositories (keys, usage, documents, host facts, requests, …): SQLite in the data dir by default,
   * PostgreSQL with SVC_DATABASE_URL. Tools never get a database handle, so the same code serves a fleet.
   */
  readonly repos: Repositories;
  readonly log: Logger;
  /** The clock (tests inject a fixed one). */
  readonly now: () => Date;
  /** The LanceDB passage index, one dataset or sharded (svc_search, svc_context, page passages). */
  readonly index: ServedIndex;
  /** Canadian establishments from page JSON-LD and open data (svc_entities). */
  readonly entities: EntitiesRepo;
  /** The running crawler, for URL requests; null when this process does not crawl (requests then wait, queued). */
  readonly crawler: CrawlerHandle | null;
  /**
   * Name resolution (the crawler's: operator pins, then DNS) for checks at submission time. Absent: submissions are
   * not resolved (the crawler still classifies every address at fetch time).
   */
  readonly resolver?: Resolver;
  /**
   * Where `callTool` runs a handler (`ToolDefinition.runsOn`): the search pool in a process with search threads.
   * Absent: every handler on the calling thread (`inlineExecutor`).
   */
  readonly executor?: ToolExecutor;
}

/**
 * Where a tool's handler runs: `main`, the thread that took the request; `search-thread`, one of the process's search
 * threads (tools/search-pool.ts; the calling thread when the process has none, or while none is ready). The handler
 * is the same either way: the executor `callTool` is given (tools/executor.ts) dispatches it.
 */
export type RunsOn = 'main' | 'search-thread';

/** Who is calling: the key's id and digest only (never the key). */
export interface Caller {
  readonly keyId: string;
  /** SHA-256 digest of the key, hex. */
  readonly digest: string;
}

/** Everything a tool handler may use. */
export interface ToolContext {
  readonly deps: ServiceDeps;
  readonly caller: Caller;
  /** Aborted when the caller stopped waiting (the index read deadline): work not yet begun need not begin. */
  readonly signal?: AbortSignal;
}

/** What an executor needs of a tool definition (define-tool.ts): its name, where it runs, its handler. */
export interface RunnableTool<In, Out> {
  readonly name: string;
  readonly runsOn: RunsOn;
  readonly run: (input: In, ctx: ToolContext) => Promise<Out>;
}

/**
 * Runs a tool's handler where the tool says it runs. `callTool` hands every call to the executor of the services it
 * is given, so REST, MCP and `svc eval` take the same path: a process with search threads runs `search-thread` tools
 * on them (tools/search-pool.ts), any other runs them here (`inlineExecutor`, tools/executor.ts).
 */
export interface ToolExecutor {
  run<In, Out>(tool: RunnableTool<In, Out>, input: In, ctx: ToolContext): Promise<Out>;
}
