/**
 * A shard answered by a searcher process over HTTP (docs/architecture.md#shards): a `ShardSource` whose every call is
 * one request to a live searcher of the shard (shard-wire.ts), failing over to the shard's other searchers when one
 * fails. `SearcherDirectory` keeps which searchers are live from the registry (their heartbeats).
 *
 * The synchronous parts of `ShardSource` are answered from what the searcher said beforehand, never by blocking:
 * - per query, `prepare` asks the shard in one call for what the filters and the title boost read synchronously (the
 *   host ids of the query's `site:` domains, whether its language occurs, its title terms' statistics); retrieval
 *   awaits it before compiling the filter, so each query reads the shard's current answer, never a stale snapshot;
 *   the same call answers the BM25 statistics of the query's terms (`lookup`), and a second one every candidate arm
 *   (`arms`), so a query costs two round trips per shard, then one for the rows of the shards holding its results;
 * - per heartbeat, the shard's status (version, embedder model, vectors unused): the embedder the vector arm uses is
 *   this process's own, used for the shard while the searcher serves vectors of the same model;
 * - the title boost of a text candidate comes with it, scored by its searcher with the summed title statistics the
 *   `arms` call sent; of any other row it is computed here from the row's title and those statistics (the same BM25
 *   of the same terms: a title's term ids are a searcher thread's own numbering and never cross the wire).
 */
import { Agent } from 'undici';
import type { Embedder } from '../serving/embedder.js';
import type { MatchColumn, PassageHit, PassageKey, PassageRow, ResultRow } from '../engines/lance/columns.js';
import type { HostPrint, ImageHit, IndexStats, StoredPage, StoredPassage } from '../engines/lance/store.js';
import { bm25Idf } from '../engines/memory/postings.js';
import { TitleStats } from '../engines/memory/title-stats.js';
import type { CorpusStats, TextQuery, TitleCorpus, VectorsUnused } from '../retrieval/engine-seam.js';
import type { PassageFilter } from '../retrieval/passage-filter.js';
import {
  decodeWire,
  encodeWire,
  SHARD_ROUTE,
  type ShardArms,
  type ShardArmsAnswer,
  type ShardLookup,
  type ShardLookupAnswer,
  type ShardStatus,
} from './shard-wire.js';

/** Raised when no live searcher of a shard answered a call. */
export class ShardUnavailableError extends Error {
  override readonly name = 'ShardUnavailableError';
  constructor(
    readonly shard: number,
    message: string,
  ) {
    super(message);
  }
}

/** A live searcher as the directory knows it. */
export interface LiveSearcher {
  readonly id: string;
  readonly url: string;
  readonly shards: readonly number[];
  readonly shardCount: number;
}

/** Where the registry is read from (state's `SearchersRepo.live`). */
export type ListSearchers = () => Promise<readonly LiveSearcher[]>;

/**
 * Which searchers are live for each shard, renewed from the registry every `refreshMs`; and the connections to them
 * (`dispatcher`: kept alive between a query's calls and the next query's).
 */
export class SearcherDirectory {
  /**
   * The HTTP client of the calls to the searchers: keep-alive connections per searcher, a call's body written with its
   * headers, its answer read as bytes (no WHATWG Request, Response, streams or abort signal per call, as `fetch` has).
   */
  readonly dispatcher = new Agent({ keepAliveTimeout: 4_000 });
  readonly #list: ListSearchers;
  readonly #shardCount: number;
  #byShard: string[][];
  #timer: NodeJS.Timeout | null = null;
  #turn = 0;
  readonly #onRefresh = new Set<() => Promise<void>>();

  constructor(list: ListSearchers, shardCount: number) {
    this.#list = list;
    this.#shardCount = shardCount;
    this.#byShard = Array.from({ length: shardCount }, () => []);
  }

  /** Reads the registry now (searchers of another shard count serve another index and are ignored). */
  async refresh(): Promise<void> {
    const live = await this.#list();
    const byShard = Array.from({ length: this.#shardCount }, (): string[] => []);
    for (const s of live) {
      if (s.shardCount !== this.#shardCount) continue;
      for (const i of s.shards) if (i >= 0 && i < this.#shardCount) byShard[i]!.push(s.url.replace(/\/+$/, ''));
    }
    this.#byShard = byShard;
    await Promise.all([...this.#onRefresh].map((fn) => fn().catch(() => undefined)));
  }

  /** Refreshes every `ms` until `stop` (a failed read keeps the last known list). */
  start(ms: number): void {
    if (this.#timer) return;
    this.#timer = setInterval(() => void this.refresh().catch(() => undefined), ms);
    this.#timer.unref();
  }

  /** Stops refreshing and closes the connections to the searchers (calls in flight finish). */
  stop(): void {
    if (this.#timer) clearInterval(this.#timer);
    this.#timer = null;
    void this.dispatcher.close().catch(() => undefined);
  }

  /** Runs `fn` after every refresh (a shard renewing its status). */
  onRefresh(fn: () => Promise<void>): void {
    this.#onRefresh.add(fn);
  }

  /** The live searchers of shard `i`, the first one taken in turn (queries spread over a shard's replicas). */
  urlsFor(i: number): string[] {
    const urls = this.#byShard[i] ?? [];
    if (urls.length <= 1) return [...urls];
    const at = this.#turn++ % urls.length;
    return [...urls.slice(at), ...urls.slice(0, at)];
  }

  /** Live searchers per shard (/readyz, /metrics). */
  liveCounts(): number[] {
    return this.#byShard.map((u) => u.length);
  }
}

/** Options of a `RemoteShard`. */
export interface RemoteShardOptions {
  readonly shard: number;
  readonly directory: SearcherDirectory;
  /** This process's embedder: the shard's vector arm serves with it when the searcher's vectors are of its model. */
  readonly embedder: Embedder | null;
  /** The fleet secret the searchers check. */
  readonly secret: string;
  /** Bound of one request (ms): a searcher that has not answered by then is failed over. */
  readonly timeoutMs: number;
  /** Largest answer read (bytes). @default 64 MiB */
  readonly maxAnswerBytes?: number;
}

const EMPTY_TITLES: TitleCorpus = { titles: 0, terms: 0, df: new Map() };

/** One shard of a sharded index, answered by its live searchers (see the module comment). */
export class RemoteShard {
  /** Marks a source whose failures are the shard's absence, not the query's error (sharded-index.ts). */
  readonly remote = true;
  readonly shard: number;
  readonly #o: RemoteShardOptions;
  #status: ShardStatus | null = null;
  // What `prepare` learnt for the queries running now; bounded (cleared when large), each query asks again.
  readonly #hostIds = new Map<string, number[]>();
  readonly #langs = new Map<string, boolean>();
  readonly #titleCorpora = new WeakMap<readonly string[], TitleCorpus>();
  /** Scores titles with the statistics it is given (its own stay empty). */
  readonly #titles = new TitleStats();

  constructor(o: RemoteShardOptions) {
    this.#o = o;
    this.shard = o.shard;
    o.directory.onRefresh(() => this.refreshStatus());
  }

  /** Whether a searcher has given the shard's status yet. */
  get answered(): boolean {
    return this.#status !== null;
  }

  /** The last status a searcher gave (null: none yet). */
  get status(): ShardStatus | null {
    return this.#status;
  }

  /** Asks a live searcher for the shard's status. */
  async refreshStatus(): Promise<void> {
    this.#status = await this.#call<ShardStatus>('status', {});
  }

  get embedder(): Embedder | null {
    const e = this.#o.embedder;
    return e && this.#status?.embedderModel === e.modelId ? e : null;
  }

  get vectorsUnused(): VectorsUnused | null {
    return this.#status?.vectorsUnused ?? null;
  }

  async prepare(q: ShardLookup): Promise<void> {
    await this.lookup(q);
  }

  /** `prepare`, answering too the shard's BM25 statistics of `q.terms` (the query's first call). */
  async lookup(q: ShardLookup): Promise<CorpusStats | undefined> {
    const a = await this.#call<ShardLookupAnswer>('lookup', q);
    if (this.#hostIds.size > 1000) this.#hostIds.clear();
    if (this.#langs.size > 1000) this.#langs.clear();
    for (const [d, ids] of a.hostIds) this.#hostIds.set(d, ids);
    if (q.lang !== null) this.#langs.set(q.lang, a.hasLang);
    this.#titleCorpora.set(q.titleTerms, a.titleCorpus);
    return a.stats;
  }

  /** A query's candidates in one call (its second). */
  arms(req: ShardArms): Promise<ShardArmsAnswer> {
    return this.#call('arms', req);
  }

  hostIdsUnder(domain: string): number[] {
    return this.#hostIds.get(domain) ?? [];
  }

  hasLang(lang: string): boolean {
    return this.#langs.get(lang) ?? false;
  }

  titleCorpus(terms: readonly string[]): TitleCorpus {
    return this.#titleCorpora.get(terms) ?? EMPTY_TITLES;
  }

  titleScore(
    queryTerms: readonly string[],
    row: Pick<PassageHit, 'page_ref' | 'title' | 'lang' | '_titleIds'>,
    corpus: TitleCorpus = this.titleCorpus(queryTerms),
  ): number {
    return this.#titles.score(queryTerms, row.title, row.lang, undefined, corpus);
  }

  corpusStats(terms: readonly string[]): Promise<CorpusStats> {
    return this.#call('corpusStats', { terms });
  }

  async termIdf(terms: readonly string[]): Promise<number[]> {
    const s = await this.corpusStats(terms);
    return terms.map((t) => bm25Idf(s.docs, s.df.get(t) ?? 0));
  }

  textCandidates(
    text: TextQuery,
    filter: PassageFilter,
    k: number,
    extra: readonly MatchColumn[] = [],
    stats?: CorpusStats,
  ): Promise<(PassageHit & { _score: number })[]> {
    return this.#call('textCandidates', { text, filter, k, extra, ...(stats ? { stats } : {}) });
  }

  vectorDistances(vector: Float32Array, passages: readonly PassageKey[]): Promise<Map<string, number>> {
    return this.#call('vectorDistances', { vector, keys: passages });
  }

  vectorCandidates(
    vector: Float32Array,
    filter: PassageFilter,
    k: number,
    extra: readonly MatchColumn[] = [],
    minSimilarity?: number,
  ): Promise<(PassageHit & { _distance: number })[]> {
    return this.#call('vectorCandidates', { vector, filter, k, extra, ...(minSimilarity !== undefined ? { minSimilarity } : {}) });
  }

  scanCandidates(filter: PassageFilter, k: number, extra: readonly MatchColumn[] = []): Promise<PassageHit[]> {
    return this.#call('scanCandidates', { filter, k, extra });
  }

  passageRows(keys: readonly PassageKey[]): Promise<Map<string, PassageRow>> {
    return this.#call('passageRows', { keys });
  }

  resultRows(keys: readonly PassageKey[]): Promise<Map<string, ResultRow>> {
    return this.#call('resultRows', { keys });
  }

  getPage(pageRef: number): Promise<StoredPage | null> {
    return this.#call('getPage', { pageRef });
  }

  pagePassages(
    pageRef: number,
    offset: number,
    limit: number,
  ): Promise<{ page: StoredPage; passages: StoredPassage[]; total: number } | null> {
    return this.#call('pagePassages', { pageRef, offset, limit });
  }

  hostPrints(host: string): Promise<HostPrint[]> {
    return this.#call('hostPrints', { host });
  }

  scoredImages(text: string, limit: number): Promise<(ImageHit & { score: number })[]> {
    return this.#call('scoredImages', { text, limit });
  }

  stats(): Promise<IndexStats> {
    return this.#call('stats', {});
  }

  async version(): Promise<number> {
    await this.refreshStatus();
    return this.#status!.version;
  }

  /** Requests sent to this shard's searchers, by call (metrics, the tests that count a query's round trips). */
  readonly calls = new Map<string, number>();

  /** One call, to each live searcher of the shard in turn until one answers. */
  async #call<T>(call: string, args: unknown): Promise<T> {
    this.calls.set(call, (this.calls.get(call) ?? 0) + 1);
    const urls = this.#o.directory.urlsFor(this.shard);
    if (urls.length === 0) throw new ShardUnavailableError(this.shard, `shard ${this.shard}: no live searcher`);
    const body = encodeWire(args);
    const max = this.#o.maxAnswerBytes ?? 64 * 2 ** 20;
    const timeout = this.#o.timeoutMs;
    let last = '';
    for (const url of urls) {
      try {
        const res = await this.#o.directory.dispatcher.request({
          origin: url,
          path: `${SHARD_ROUTE}/${this.shard}/${call}`,
          method: 'POST',
          headers: { authorization: `Bearer ${this.#o.secret}`, 'content-type': 'application/json' },
          body,
          // Bounds of the wait for the answer's headers and between its bytes (the shard's deadline is the caller's).
          headersTimeout: timeout,
          bodyTimeout: timeout,
        });
        if (Number(res.headers['content-length'] ?? 0) > max) {
          // Destroyed unread, the answer's stream reports the abort as an error event: read here, not thrown later.
          res.body.on('error', () => undefined).destroy();
          throw new Error('answer too large');
        }
        const chunks: Buffer[] = [];
        let size = 0;
        for await (const chunk of res.body as AsyncIterable<Buffer>) {
          chunks.push(chunk);
          // Leaving the loop destroys the answer's stream.
          if ((size += chunk.length) > max) throw new Error('answer too large');
        }
        if (res.statusCode < 200 || res.statusCode > 299) throw new Error(`status ${res.statusCode}`);
        return decodeWire(Buffer.concat(chunks).toString('utf8')) as T;
      } catch (err) {
        last = err instanceof Error ? err.name : 'error';
      }
    }
    throw new ShardUnavailableError(this.shard, `shard ${this.shard}: no live searcher answered (${last})`);
  }
}
