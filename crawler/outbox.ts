/**
 * The hand-over between crawler workers and the index's one writer: pages go into the shared outbox table and the
 * indexer acks a leased batch only after the index write. A killed indexer's batch returns after the lease and is
 * written again; upserts make that safe, so nothing is lost or half-written.
 */
import { urlHash32, type PageInput, type PageSink } from '../page-model.js';
import type { OutboxBatch, OutboxRepo, OutboxShards } from '../state/repos/types.js';
import type { BatchCapableSink } from './crawler.js';
import type { CrawlLog } from './pipeline.js';

/** One outbox entry's payload. */
type OutboxOp =
  | { readonly op: 'upsert'; readonly page: PageInput }
  | { readonly op: 'remove'; readonly pageRef: number; readonly url?: string };

/**
 * The crawler worker's sink: every write goes to the outbox instead of the index, with the hash of the page's URL
 * that routes it to the indexer owning its shard (the worker need not know the shard count).
 */
export class OutboxSink implements PageSink {
  constructor(readonly outbox: OutboxRepo) {}

  async upsertPage(page: PageInput): Promise<void> {
    await this.outbox.enqueue(page.pageRef, JSON.stringify({ op: 'upsert', page } satisfies OutboxOp), undefined, urlHash32(page.url));
  }

  async removePage(pageRef: number, url?: string): Promise<void> {
    const op: OutboxOp = url === undefined ? { op: 'remove', pageRef } : { op: 'remove', pageRef, url };
    await this.outbox.enqueue(pageRef, JSON.stringify(op), undefined, url === undefined ? undefined : urlHash32(url));
  }
}

/** Options of {@link OutboxDrainer}. */
export interface OutboxDrainerOptions {
  readonly outbox: OutboxRepo;
  /** The index (the only writer). */
  readonly sink: BatchCapableSink;
  readonly log: CrawlLog;
  /** Entries per batch. @default 64 */
  readonly batch?: number;
  /** Lease of a claimed batch, kept alive while it is written. @default 30000 */
  readonly leaseMs?: number;
  /** Poll interval when the outbox is empty (ms): the bound on how long a new page waits. @default 500 */
  readonly idleMs?: number;
  /** Names this indexer in lease tokens. @default indexer-<pid> */
  readonly owner?: string;
  /** The shards this indexer owns: it claims only their entries. @default every entry */
  readonly shards?: OutboxShards;
  /**
   * Called before each write to the index (a commit): throws when this indexer may no longer write (its shard lease
   * lost); the batch is then left to lapse and go to the shards' next owner. @default none
   */
  readonly beforeWrite?: () => Promise<void>;
}

/** The indexer role's loop: claim a batch, write it to the index in order, ack it. */
export class OutboxDrainer {
  readonly #o: Required<Omit<OutboxDrainerOptions, 'shards' | 'beforeWrite'>> & Pick<OutboxDrainerOptions, 'shards' | 'beforeWrite'>;
  #loop: Promise<void> | null = null;
  #stopping = false;
  #wake: (() => void) | null = null;
  /** Entries written since start (for status and tests). */
  written = 0;

  constructor(opts: OutboxDrainerOptions) {
    this.#o = { batch: 64, leaseMs: 30_000, idleMs: 500, owner: `indexer-${process.pid}`, ...opts };
  }

  start(): void {
    if (this.#loop) return;
    this.#stopping = false;
    this.#loop = this.#run();
  }

  async stop(): Promise<void> {
    this.#stopping = true;
    this.#wake?.();
    await this.#loop;
    this.#loop = null;
  }

  /** Claims and writes one batch; returns how many entries it wrote (0: the outbox had nothing claimable). */
  async drainOnce(): Promise<number> {
    const b = await this.#o.outbox.claim({
      owner: this.#o.owner,
      limit: this.#o.batch,
      leaseMs: this.#o.leaseMs,
      ...(this.#o.shards ? { shards: this.#o.shards } : {}),
    });
    if (!b) return 0;
    const keep = setInterval(
      () => void this.#o.outbox.extend(b.lease, this.#o.leaseMs).catch(() => undefined),
      Math.max(100, Math.floor(this.#o.leaseMs / 3)),
    );
    try {
      await this.#write(b);
    } finally {
      clearInterval(keep);
    }
    // Only after the index write: a crash before this line leaves the batch to be claimed again.
    await this.#o.outbox.ack(b.lease);
    this.written += b.entries.length;
    return b.entries.length;
  }

  async #write(b: OutboxBatch): Promise<void> {
    // Runs of upserts go in one index commit; a removal keeps its place in the order.
    let run: PageInput[] = [];
    const flush = async (): Promise<void> => {
      if (run.length === 0) return;
      const pages = run;
      run = [];
      await this.#o.beforeWrite?.();
      if (this.#o.sink.upsertPages) await this.#o.sink.upsertPages(pages);
      else for (const p of pages) await this.#o.sink.upsertPage(p);
    };
    for (const e of b.entries) {
      const op = JSON.parse(e.payload) as OutboxOp;
      if (op.op === 'upsert') run.push(op.page);
      else {
        await flush();
        await this.#o.beforeWrite?.();
        await this.#o.sink.removePage(op.pageRef, op.url);
      }
    }
    await flush();
  }

  async #run(): Promise<void> {
    while (!this.#stopping) {
      let n = 0;
      try {
        n = await this.drainOnce();
      } catch (err) {
        // The batch stays leased and comes back after its lease; back off meanwhile (database or index down).
        this.#o.log.warn({ err }, 'indexer: outbox batch not written');
      }
      if (n > 0 || this.#stopping) continue;
      await new Promise<void>((resolve) => {
        const t = setTimeout(resolve, this.#o.idleMs);
        this.#wake = () => {
          clearTimeout(t);
          resolve();
        };
      });
      this.#wake = null;
    }
  }
}
