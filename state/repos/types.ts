/**
 * Async repository interfaces, one per concern of shared state. Each has a SQLite backend (the embedded default,
 * one file) and a PostgreSQL backend (SVC_DATABASE_URL), held to one contract suite (test/state/repos-contract.ts).
 * Consumers receive these, never a database handle, so the same code runs on one machine or a fleet.
 */
import type { KeyRecord, VerifiedKey } from '../keys.js';
import type { RateDecision } from '../rate-limits.js';
import type { ContentChange, DocumentRow, DocumentStatus } from '../documents.js';
import type { HostFacts, HostLlmsFacts, HostRobotsFacts, PageExtractionFacts } from '../hosts.js';
import type { HostScope } from '../site-scope.js';
import type { DatasetRowInput, EntityQuery, EntityRecord, JsonLdParseErrorRecord, UpsertOutcome } from '../entity-types.js';
import type { JsonLdNode, JsonLdParseErrors } from '../../page-model.js';
import type { RequestOutcome, RequestStatus, RequestSubmission, UrlRequest } from '../requests.js';
import type { WebmasterRepo } from './webmaster-types.js';

export type { KeyRecord, VerifiedKey, RateDecision, ContentChange, DocumentRow, DocumentStatus };

/** API keys: only SHA-256 digests are stored; the plaintext exists once, in create()'s answer. */
export interface KeysRepo {
  create(opts: { name: string; perMinute: number; perDay: number; now?: Date }): Promise<{ record: KeyRecord; key: string }>;
  list(): Promise<KeyRecord[]>;
  /** false when there is no such active key. */
  revoke(id: string, now?: Date): Promise<boolean>;
  /** The active key matching `key`, or null (unknown, malformed and revoked keys look alike). */
  verify(key: string): Promise<VerifiedKey | null>;
}

/**
 * Per-key minute and day quotas over fixed UTC windows. consume() is one atomic conditional increment in the
 * database: N concurrent calls from any number of processes against a remaining quota Q admit exactly Q.
 */
export interface UsageCountersRepo {
  consume(digestHex: string, limits: { perMinute: number; perDay: number }, now?: Date): Promise<RateDecision>;
  /**
   * The quota state without consuming anything (rate headers of calls that do not count). Like RateLimiter.peek,
   * `allowed` is always true and retryAfter 0, so the headers carry no Retry-After.
   */
  peek(digestHex: string, limits: { perMinute: number; perDay: number }, now?: Date): Promise<RateDecision>;
  /** Deletes windows that started before `before` (ms); returns how many rows went. */
  prune(before: number): Promise<number>;
}

export type FrontierKind = 'page' | 'sitemap' | 'llms';
export type FrontierState = 'queued' | 'leased' | 'retrying' | 'done' | 'dead';

export interface FrontierEntry {
  readonly url: string;
  readonly host: string;
  readonly reason: string;
  /** Higher first. @default 0 */
  readonly priority?: number;
  /** @default "page" */
  readonly kind?: FrontierKind;
  /** When it becomes due (ms). @default now */
  readonly at?: number;
  readonly depth?: number;
  /** The URL request this comes from (kept on a known row unless it has one). */
  readonly requestId?: string | null;
  /** Where links found under this entry may lead: stored with a new row (null or absent: the open web). */
  readonly scope?: readonly string[] | null;
  /**
   * Make a known URL due again (a recrawl request, a verified owner's fast lane): a done, dead, retrying or queued row
   * becomes queued with next_at lowered to `at` (default now), attempts reset, priority raised. A leased row is left
   * to its holder. Robots and removal rules are not bypassed: the pipeline checks them again on the fetch.
   */
  readonly refresh?: boolean;
  /**
   * A seed given again: a known row takes `scope`, and so does every row admitted under its old scope; a done row
   * is made due again so its links are read under the new scope.
   */
  readonly rescope?: boolean;
  /**
   * A verified owner's fast lane: a DONE or QUEUED row becomes due at `at` (default now) with its priority
   * raised; a retrying row keeps its back-off and a dead row its dead letter (only the priority rises), a leased row
   * is left to its holder. Robots, noindex and removal still apply: the pipeline checks them again on the fetch.
   */
  readonly expedite?: boolean;
  /** A dead-lettered row is revived (a seed or submitted URL given again; a link found again never revives). */
  readonly reviveDead?: boolean;
  /**
   * Admission cap: a NEW row is refused (admit() answers null) when its host already has this many rows (crawler
   * traps, calendars). The count is kept in the database with every insert and taken under a row lock, so the cap
   * is exact for every process sharing it; a URL another worker admitted meanwhile is known, never refused.
   */
  readonly maxPerHost?: number;
}

/** What admit() did. */
export interface AdmitResult {
  readonly id: number;
  /** True when the URL was not in the frontier before. */
  readonly added: boolean;
  /** The row's state afterwards. */
  readonly state: FrontierState;
}

/** A frontier row as the crawler, svc crawl's summary, the request processor and tests read it. */
export interface FrontierRecord {
  readonly id: number;
  readonly url: string;
  readonly host: string;
  readonly kind: FrontierKind;
  readonly state: FrontierState;
  readonly priority: number;
  readonly reason: string;
  readonly requestId: string | null;
  readonly attempts: number;
  readonly nextAt: number;
  readonly lastError: string | null;
  readonly deadReason: string | null;
  readonly etag: string | null;
  readonly lastModified: string | null;
  readonly lastStatus: number | null;
  readonly lastOutcome: string | null;
  readonly recrawlMs: number | null;
  readonly completions: number;
  readonly scope: readonly string[] | null;
}

/** How a fetch ended, for complete() (everything but recrawlAt optional; absent validators are stored as none). */
export interface CompleteFields {
  /** When the row is due again (ms); Number.MAX_SAFE_INTEGER: never. */
  readonly recrawlAt: number;
  readonly status?: number | null;
  /** indexed, unchanged, excluded:…, gone, sitemap, llms, redirected … */
  readonly outcome?: string | null;
  readonly etag?: string | null;
  readonly lastModified?: string | null;
  /** The recrawl interval the next completion adapts from (null: no recrawl planned). */
  readonly recrawlMs?: number | null;
  /** true: the content changed (changed_at moves to now). */
  readonly changed?: boolean | null;
  /** The row's priority afterwards (a crawled page waits for its recrawl at the lowest). @default unchanged */
  readonly priority?: number | null;
  readonly now?: number;
}

/** A claimed item: the lease token must be passed back to complete(), fail(), extend() or release(). */
export interface ClaimedItem {
  readonly id: number;
  readonly url: string;
  readonly host: string;
  readonly kind: FrontierKind;
  readonly priority: number;
  readonly attempts: number;
  readonly depth: number;
  readonly reason: string;
  readonly requestId: string | null;
  /** Validators of the last fetch (a conditional GET when the page is known). */
  readonly etag: string | null;
  readonly lastModified: string | null;
  /** Was this URL completed before? */
  readonly fetchedBefore: boolean;
  /** Where links found under this item may lead: the hosts listed, or null for the open web. */
  readonly scope: readonly string[] | null;
  readonly lease: string;
  /** Lease expiry (ms): after it the item may be claimed again by anyone. */
  readonly leaseUntil: number;
  /** The recrawl interval of the last completion (adaptive recrawl starts from it); null when never set. */
  readonly recrawlMs?: number | null;
}

/**
 * The crawl frontier with per-host politeness. claim() moves the host's next_fetch_at by its gap in the same
 * transaction, so the gap holds for every worker sharing the database; leases expire by time only.
 * Due = next_at <= now in every state but dead.
 */
export interface FrontierRepo {
  /**
   * Adds a URL (and its host with the default gap); an already known URL is left as it is (added: false), unless
   * the entry asks for `refresh`, `expedite`, `rescope` or `reviveDead`, which are admit()'s rules.
   */
  enqueue(entry: FrontierEntry, now?: number): Promise<{ id: number; added: boolean }>;
  /**
   * enqueue() with the crawler's admission rules: a known URL's priority is raised (never lowered), its request id
   * kept unless it has none, and `refresh`, `rescope`, `reviveDead` apply (see FrontierEntry); a new URL beyond
   * `maxPerHost` is refused (null). One transaction.
   */
  admit(entry: FrontierEntry, now?: number): Promise<AdmitResult | null>;
  /** Leases one given URL now, due or not, unless a live lease holds it (a single-URL fetch); null when unknown or busy. */
  claimUrl(url: string, opts: { owner: string; leaseMs: number; now?: number }): Promise<ClaimedItem | null>;
  /**
   * Records that `url` was fetched through another item (the target of a redirect): done, due again after its
   * recrawl interval (its own, else `recrawlMs`), created when unknown. A row leased right now is left to its holder.
   */
  markFetched(
    url: string,
    host: string,
    c: {
      reason: string;
      outcome: string;
      status?: number | null;
      etag?: string | null;
      lastModified?: string | null;
      scope?: readonly string[] | null;
      recrawlMs: number;
      priority: number;
      now?: number;
    },
  ): Promise<void>;
  /** The row of a URL (as stored, normalised), or null. */
  get(url: string): Promise<FrontierRecord | null>;
  /** Dead-lettered rows, newest first, optionally of one host. */
  deadLetters(opts?: { host?: string; limit?: number }): Promise<FrontierRecord[]>;
  /** Unfinished rows (queued, leased, retrying), soonest due first. */
  pendingItems(limit?: number): Promise<FrontierRecord[]>;
  /**
   * Leases the best due URL whose host may be fetched now and reserves that host for the claim: next_fetch_at moves
   * by the host's gap and the host's holder becomes the lease token, so the item's first request may start at once
   * (PolitenessRepo.acquire with that token) while every other worker waits for the gap.
   */
  claim(opts: { owner: string; leaseMs: number; now?: number }): Promise<ClaimedItem | null>;
  /**
   * Earliest instant (ms) at which claim() could hand something out: max(URL due, host's next_fetch_at) over the
   * rows not dead-lettered (`unfinished`: queued, leased or retrying only, i.e. done rows waiting for a recrawl do
   * not count). Null when there is none. The dispatcher sleeps until then.
   */
  nextClaimAt(opts?: { unfinished?: boolean }): Promise<number | null>;
  /** Pushes the lease expiry to now + leaseMs. Throws LeaseLostError when the lease is no longer held. */
  extend(item: ClaimedItem, leaseMs: number, now?: number): Promise<ClaimedItem>;
  /** Marks done; due again at recrawlAt (Number.MAX_SAFE_INTEGER: never). Throws LeaseLostError when the lease is no longer held. */
  complete(item: ClaimedItem, opts: CompleteFields): Promise<void>;
  /**
   * Records a failure: retried at retryAt, or dead-lettered when retryAt is null (with `deadReason`, default the
   * error). Attempts count up by one. Throws LeaseLostError.
   */
  fail(
    item: ClaimedItem,
    opts: { error: string; retryAt: number | null; deadReason?: string; status?: number | null; now?: number },
  ): Promise<'retrying' | 'dead'>;
  /** Gives the item back unchanged (due at `at`, default now). Throws LeaseLostError. */
  release(item: ClaimedItem, at?: number, now?: number): Promise<void>;
  /** Rows by state, of one host when `host` is given (svc_site, tests). */
  counts(opts?: { host?: string }): Promise<Record<FrontierState, number>>;
  /** Items queued, leased or retrying. */
  unfinished(): Promise<number>;
}

export interface HostPoliteness {
  readonly host: string;
  /** Minimum time between two fetch starts on this host, for the whole fleet (ms). */
  readonly gapMs: number;
  /** Earliest instant the next fetch of this host may start (ms). */
  readonly nextFetchAt: number;
}

/**
 * Per-host politeness shared by every crawler worker: acquire()/release() allow one request per host fleet-wide and
 * the next only a gap after the last ended. A slot is held at most `holdMs`, so a killed worker blocks its host only that long.
 */
export interface PolitenessRepo {
  /** Sets a host's gap (e.g. from robots.txt Crawl-delay), creating the host when new. */
  setGap(host: string, gapMs: number): Promise<void>;
  get(host: string): Promise<HostPoliteness | null>;
  /**
   * Takes the host's slot for `token` when its next_fetch_at has passed or the host is reserved for that very
   * token (claim()); the slot is then held until now + holdMs. Otherwise says when to try again.
   */
  acquire(host: string, token: string, holdMs: number, now?: number): Promise<{ acquired: true } | { acquired: false; retryAt: number }>;
  /**
   * Gives the slot back: the next request may start at max(`nextFetchAt`, now + the host's gap). A token that no
   * longer holds the slot (its hold lapsed and someone else took it) changes nothing.
   */
  release(host: string, token: string, nextFetchAt: number, now?: number): Promise<void>;
}

/**
 * One origin's robots.txt as the fleet last fetched it: what a worker needs to apply it without fetching it again
 * (the body, parsed by each reader) and how long it holds (RFC 9309 §2.4).
 */
export interface SharedRobots {
  /** `scheme://host[:port]`. */
  readonly origin: string;
  /** ok | not_found | error_disallow_all | unreachable (crawler/robots.ts RobotsStatus). */
  readonly status: string;
  /** ms since epoch. */
  readonly fetchedAt: number;
  readonly expiresAt: number;
  readonly httpStatus: number | null;
  /** Final URL after redirects. */
  readonly url: string;
  readonly error: string | null;
  readonly truncated: boolean;
  /** The file as fetched (up to the parse limit) when it is applied (status ok), else null. */
  readonly body: Uint8Array | null;
}

/**
 * robots.txt fetched once per validity period for the whole fleet: a worker that needs an origin's file reads it
 * here, or takes the origin's fetch lease and fetches it, while the others wait for the row. A lease lapses after
 * `holdMs`, so a killed worker delays the host only that long.
 */
export interface RobotsRepo {
  get(origin: string): Promise<SharedRobots | null>;
  /** Takes the right to fetch the origin's robots.txt until now + holdMs; false while another token holds it. */
  lease(origin: string, token: string, holdMs: number, now?: number): Promise<boolean>;
  /** Stores a fetched file and ends the lease. */
  put(entry: SharedRobots): Promise<void>;
  /** Ends `token`'s lease without storing anything (what it fetched says nothing about the site). */
  release(origin: string, token: string): Promise<void>;
  /** Forgets an origin's file (a recrawl asked for it), so the next reader fetches it again. */
  forget(origin: string): Promise<void>;
}

/** Host ids for the index (its host_id column): allocated by the database, stable per host, never reused. */
export interface HostIdsRepo {
  /** The host's id, allocated on first sight. */
  idFor(host: string): Promise<number>;
  /** The host of an id, or null. */
  hostOf(id: number): Promise<string | null>;
}

/**
 * What svc_site reads about one host: the crawler's host facts (robots.txt, llms.txt, change intervals, link
 * aggregates) and the URL scope (every known URL in exactly one state, state/site-scope.ts). Read-only here: the
 * crawler writes the facts.
 */
export interface HostFactsRepo {
  evidence(host: string): Promise<{ facts: HostFacts | null; scope: HostScope }>;

  // The crawler's writes (state/hosts.ts Hosts semantics on both backends).
  /** Stores the latest robots.txt facts of a host. */
  recordRobots(host: string, f: HostRobotsFacts): Promise<void>;
  /** Stores the latest llms.txt facts (present: false when fetched and absent). */
  recordLlms(host: string, f: HostLlmsFacts): Promise<void>;
  /** Counts one fetch of a page of the host. */
  recordCrawl(host: string, at: string): Promise<void>;
  /** Stores the latest extraction of one page of the host (how much text was kept, and the verdict). */
  recordExtraction(host: string, f: PageExtractionFacts): Promise<void>;
  /** Records an interval between two observed content changes of a page (the newest 200 per host are kept). */
  recordChangeInterval(host: string, intervalMs: number, at: string): Promise<void>;
  /** Replaces what one page links to, aggregated by target host. */
  recordPageLinks(pageRef: number, fromHost: string, counts: ReadonlyMap<string, number>): Promise<void>;
  /** Forgets a page's links (it left the index). */
  withdrawPageLinks(pageRef: number): Promise<void>;
}

/** One extracted page on its way from a crawler worker to the indexer (crawler roles). */
export interface OutboxEntry {
  readonly id: number;
  readonly pageRef: number;
  /** The page as the crawler extracted it (JSON of a PageInput), written to the index as is. */
  readonly payload: string;
  readonly enqueuedAt: number;
  /** How many times it was claimed, this claim included (more than 1: an indexer died holding it). */
  readonly attempts: number;
}

/** The shards an indexer owns, of how many: what its outbox claims are restricted to. */
export interface OutboxShards {
  readonly count: number;
  readonly mine: readonly number[];
}

/** Entries claimed together under one lease. */
export interface OutboxBatch {
  readonly lease: string;
  readonly leaseUntil: number;
  readonly entries: readonly OutboxEntry[];
}

/**
 * The outbox between crawler workers and the index's one writer: workers enqueue extracted pages, the indexer
 * claims a batch under a time-based lease, writes it to the index, then acks it. A killed indexer never acks: its
 * batch is claimable again once the lease lapses (writing a page twice replaces it, so a retried batch is harmless).
 */
export interface OutboxRepo {
  /**
   * Adds a page; returns the entry id. `urlHash`: the FNV-1a of the page's URL (`urlHash32`), which routes it to the
   * indexer owning its shard.
   */
  enqueue(pageRef: number, payload: string, now?: number, urlHash?: number): Promise<number>;
  /**
   * Claims up to `limit` entries nobody holds (never held, or their lease lapsed), oldest first; null when none.
   * `shards`: only entries whose `urlHash % count` is one of `mine` (an entry without a hash only when `mine` is
   * every shard).
   */
  claim(opts: { owner: string; limit: number; leaseMs: number; now?: number; shards?: OutboxShards }): Promise<OutboxBatch | null>;
  /** Keeps a batch's lease alive; false when it was lost (lapsed and claimed by another). */
  extend(lease: string, leaseMs: number, now?: number): Promise<boolean>;
  /** Removes the entries still held under `lease` (after the index write); returns how many. */
  ack(lease: string): Promise<number>;
  /** Entries waiting and held, and when the oldest was enqueued (outbox lag = now - oldestAt). */
  stats(now?: number): Promise<{ pending: number; leased: number; oldestAt: number | null }>;
}

/** A shard's writer as the lease table holds it. */
export interface ShardWriter {
  readonly shard: number;
  readonly owner: string;
  /** The fencing token of the holder's claim: a later claim of the shard always has a greater one. */
  readonly token: number;
  /** When the lease lapses unless renewed (ms since the epoch, the database's clock on PostgreSQL). */
  readonly leaseUntil: number;
}

/** The answer to a claim of shards: the token they are now held under, or the live holders that refused it. */
export type ShardClaim =
  | { readonly ok: true; readonly token: number; readonly leaseUntil: number }
  | { readonly ok: false; readonly heldBy: readonly ShardWriter[] };

/**
 * One writer per index shard (`svc serve --role indexer --shards`), fenced: an indexer takes all its shards or none
 * under a fresh token, renews the lease while it runs, checks it before each commit, and releases it at a clean
 * stop. A lapsed lease is lost: it cannot be renewed, and another indexer may take the shard. `now` is the
 * database's clock on PostgreSQL unless a caller gives one (tests).
 */
export interface ShardWritersRepo {
  acquire(opts: { owner: string; shards: readonly number[]; leaseMs: number; now?: number }): Promise<ShardClaim>;
  /** Extends the lease of every one of `shards` held under `token`; false (nothing changed) when any is not. */
  renew(opts: { token: number; shards: readonly number[]; leaseMs: number; now?: number }): Promise<boolean>;
  /** Whether every one of `shards` is still held under `token`, its lease not lapsed. */
  check(opts: { token: number; shards: readonly number[]; now?: number }): Promise<boolean>;
  /** Lets the shards held under `token` go at once (a clean stop). */
  release(opts: { token: number; shards: readonly number[] }): Promise<void>;
  /** Every shard ever held, lapsed and released ones included, by shard. */
  list(): Promise<ShardWriter[]>;
}

/** The durable page_ref registry: ids come from the database and are never reused. */
export interface DocumentsRepo {
  allocate(url: string, host: string): Promise<number>;
  get(pageRef: number): Promise<DocumentRow | null>;
  byUrl(url: string): Promise<DocumentRow | null>;
  recordIndexed(pageRef: number, obs: { contentHash: string; title: string; at: string }): Promise<ContentChange>;
  recordExcluded(pageRef: number, status: Exclude<DocumentStatus, 'indexed' | 'known'>, reason: string, at: string): Promise<void>;
  /** Pages indexed now whose first sighting or last content change is at or after `since`, newest first (svc_fresh). */
  fresh(since: string, limit: number): Promise<(DocumentRow & { change: 'new' | 'changed' })[]>;
  /** How many pages are in each status (svc status). */
  counts(): Promise<Partial<Record<DocumentStatus, number>>>;
}

export type UrlRequestType = 'discovery' | 'recrawl' | 'correction' | 'removal';
export type UrlRequestStatus = 'received' | 'queued' | 'in_progress' | 'completed' | 'failed';

export interface StoredUrlRequest {
  readonly id: string;
  readonly keyDigest: string;
  readonly type: UrlRequestType;
  readonly url: string;
  readonly host: string;
  readonly note: string | null;
  readonly status: UrlRequestStatus;
  readonly receivedAt: string;
  readonly updatedAt: string;
}

/**
 * URL requests. The id comes from the database; (key digest, idempotency digest) is unique in the database, so a
 * retried submission on any replica finds the first one instead of creating a second.
 */
export interface RequestsRepo {
  /**
   * Stores a request, or returns the one already stored under the same idempotency digest (`deduplicated`), or
   * `conflict` when that digest was used for another type or URL.
   */
  create(sub: {
    keyDigest: string;
    type: UrlRequestType;
    url: string;
    host: string;
    note?: string | null;
    idempotencyDigest?: string | null;
    at?: string;
  }): Promise<{ request: StoredUrlRequest; deduplicated: boolean } | { conflict: StoredUrlRequest }>;
  get(id: string): Promise<StoredUrlRequest | null>;
  setStatus(id: string, status: UrlRequestStatus, at?: string): Promise<boolean>;

  // The URL-request lifecycle as svc_submit_url, svc_request_status and the request processor use it (the rules
  // of state/requests.ts, docs/api-requests.md), decided inside the database so they hold for every replica.

  /**
   * Records a submission for `keyDigest`, or returns the request it duplicates (same Idempotency-Key, or same type +
   * URL still open); only new requests count against `perDay`. Errors throw SvcError. A key's submissions are
   * serialised, so quota and open-request rule are exact across replicas.
   */
  submit(
    keyDigest: string,
    sub: RequestSubmission,
    opts: { perDay: number; now: Date },
  ): Promise<{ request: UrlRequest; deduplicated: boolean }>;
  /** A request as its submitter sees it; null for an unknown id or another key's request (same answer: 404). */
  getForKey(id: string, keyDigest: string): Promise<UrlRequest | null>;
  /** A request by id regardless of key (the processor only). */
  find(id: string): Promise<UrlRequest | null>;
  /** Requests in a status, oldest update first (the processor's work list). */
  listByStatus(status: RequestStatus, limit?: number): Promise<UrlRequest[]>;
  /** Moves a request on (REQUEST_TRANSITIONS), appending to its history; throws when not allowed. */
  transition(id: string, to: RequestStatus, detail?: { outcome?: RequestOutcome; reason?: string }, at?: Date): Promise<UrlRequest>;
  counts(): Promise<Record<RequestStatus, number>>;
}

/**
 * Canadian establishments (svc_entities) and the crawler's entity sink: merge rules, provenance and the name search
 * of state/entities.ts (EntityStore; the decisions themselves are state/entity-merge.ts's, shared by both backends).
 * search() throws EntityQueryError for an unknown province or kind.
 */
export interface EntitiesRepo {
  get(id: string): Promise<EntityRecord | null>;
  search(query: EntityQuery): Promise<EntityRecord[]>;
  /**
   * Replaces what this page contributes with `nodes`, and its JSON-LD parse errors with `parseErrors` (one
   * transaction; none when omitted).
   */
  observePage(
    page: { pageRef: number; url: string; host: string; lang: string | null },
    nodes: readonly JsonLdNode[],
    observedAt: string,
    parseErrors?: JsonLdParseErrors,
  ): Promise<void>;
  /** Withdraws everything this page contributed (its parse errors too); entities left without a source disappear. */
  withdrawPage(pageRef: number): Promise<void>;
  /**
   * Records a batch of dataset rows in one transaction (svc entities import), idempotent by dataset + row id;
   * `verifiedAt` defaults to the dataset's release date. Outcomes in row order.
   */
  importRows(dataset: string, rows: readonly DatasetRowInput[], observedAt: string, verifiedAt?: string | null): Promise<UpsertOutcome[]>;
  /**
   * After a bulk import: refreshes what the backend's query planner knows of the tables (PostgreSQL: ANALYZE, so
   * name search uses its index at once rather than after autovacuum's next pass). Absent where nothing is needed.
   */
  afterImport?(): Promise<void>;
  /** JSON-LD blocks that failed to parse on pages of these hosts, with their page (webmaster diagnostics). */
  parseErrors(hosts: readonly string[]): Promise<JsonLdParseErrorRecord[]>;
  counts(): Promise<{ entities: number; sources: number; pageSources: number; datasetSources: number }>;
}

/** A property's state rows for webmaster diagnostics (planned, not exposed). */
export interface PropertyStateRows {
  readonly sitemaps: readonly {
    readonly url: string;
    readonly state: string;
    readonly lastStatus: number | null;
    readonly lastOutcome: string | null;
  }[];
  /** Page URLs in the frontier by last HTTP status (null: no response yet). */
  readonly statusCounts: readonly { readonly status: number | null; readonly count: number }[];
  readonly documents: readonly {
    readonly pageRef: number;
    readonly url: string;
    readonly status: string;
    readonly reason: string | null;
    readonly lastFetched: string | null;
    readonly lastChanged: string | null;
  }[];
  readonly changeIntervalsMs: readonly number[];
  /** Entities fed by the hosts' pages, with the page (provenance). */
  readonly entitySources: readonly {
    readonly id: string;
    readonly name: string;
    readonly kind: string;
    readonly pageUrl: string;
    readonly observedAt: string;
  }[];
}

/** What webmaster diagnostics read about a property's hosts beyond `HostFactsRepo.evidence` (state/repos/property-state.ts). */
export interface PropertyStateRepo {
  /** The property's own name, and the hosts the registry, the frontier or the host facts know under it (subdomains of a domain). */
  hostsUnder(kind: 'domain' | 'host', name: string): Promise<string[]>;
  rows(hosts: readonly string[]): Promise<PropertyStateRows>;
}

/** Every repository of one backend, opened (and migrated) together. */
export interface Repositories {
  readonly backend: 'sqlite' | 'postgres';
  readonly keys: KeysRepo;
  readonly usage: UsageCountersRepo;
  readonly frontier: FrontierRepo;
  readonly politeness: PolitenessRepo;
  readonly robots: RobotsRepo;
  readonly hostIds: HostIdsRepo;
  readonly documents: DocumentsRepo;
  readonly requests: RequestsRepo;
  readonly hosts: HostFactsRepo;
  /**
   * Entities, on both backends (PostgreSQL: state/repos/postgres/entities.ts). Typed nullable for callers written
   * when PostgreSQL did not hold them; openRepositories always gives one.
   */
  readonly entities: EntitiesRepo | null;
  /** Extracted pages from crawler workers to the indexer (crawler roles). */
  readonly outbox: OutboxRepo;
  /** The writer of each index shard (indexer role). */
  readonly shardWriters: ShardWritersRepo;
  /** Searcher processes and the shards they serve, with their heartbeats (`svc serve --role searcher`). */
  readonly searchers: SearchersRepo;
  /** Webmaster properties, proofs, audit and fast lane (planned, not exposed). */
  readonly webmaster: WebmasterRepo;
  /** A property's crawl state for webmaster diagnostics (planned, not exposed). */
  readonly propertyState: PropertyStateRepo;
  /** Migration ids applied when this instance opened the database (empty when it was up to date). */
  readonly applied: readonly string[];
  /** Resolves when the database answers a trivial query; rejects (SvcError `unavailable` on PostgreSQL) otherwise. */
  ping(): Promise<void>;
  close(): Promise<void>;
}

/** A searcher process as registered: where it is reached and which shards of which index it serves. */
export interface SearcherEntry {
  /** The process's own id (random per start). */
  readonly id: string;
  /** The address other processes reach it at (SVC_SEARCHER_URL). */
  readonly url: string;
  /** The shards it serves, ascending. */
  readonly shards: readonly number[];
  /** The index's shard count. */
  readonly shardCount: number;
  /** The index it serves (its location's label: never credentials). */
  readonly index: string;
  /** Age of its last heartbeat (ms), by the state database's clock. */
  readonly ageMs: number;
}

/**
 * The searcher registry: each searcher renews its entry every few seconds; an `api` replica reads the live ones (a
 * heartbeat younger than the TTL) to know which process answers for each shard. Times are the database's, so the
 * fleet's clocks need not agree.
 */
export interface SearchersRepo {
  /** Creates or renews `entry`'s registration (its heartbeat is now). */
  heartbeat(entry: Omit<SearcherEntry, 'ageMs'>): Promise<void>;
  /** Removes a registration (a searcher stopping). */
  remove(id: string): Promise<void>;
  /** The entries whose heartbeat is younger than `ttlMs`, by id. */
  live(ttlMs: number): Promise<SearcherEntry[]>;
}

/** Raised when an operation names a lease that is no longer held (it lapsed and the item went to someone else). */
export class LeaseLostError extends Error {
  override readonly name = 'LeaseLostError';
  readonly code = 'lease_lost';
}
