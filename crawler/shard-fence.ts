/**
 * An indexer's claim on the index shards it writes (`svc serve --role indexer --shards`): taken all or none at start
 * through the shard writers repository (PostgreSQL for a fleet, the data dir's SQLite file on one machine), renewed
 * while the indexer runs, checked before each commit, released at a clean stop. Exactly one writer per shard: a second
 * indexer asking for a held shard is refused with `ShardOwnedError`; a killed one's lease lapses and its shards can be
 * taken then. A writer whose lease lapsed (paused, cut off from the database) fails its next check and writes nothing
 * more; what remains is the commit already past its check when the lease lapsed (docs/deploy.md "Shard writers").
 */
import type { ShardWriter, ShardWritersRepo } from '../state/repos/types.js';
import type { CrawlLog } from './pipeline.js';

/** A shard another indexer holds: the start is refused. */
export class ShardOwnedError extends Error {
  override readonly name = 'ShardOwnedError';
  readonly code = 'shard_owned';
  constructor(readonly heldBy: readonly ShardWriter[]) {
    super(
      heldBy
        .map(
          (w) => `shard ${w.shard} is written by ${w.owner} (lease until ${new Date(w.leaseUntil).toISOString()}, renewed while it runs)`,
        )
        .join('; ') +
        '; one writer per shard: stop that indexer or give this one other --shards (a killed one lets go when its lease lapses, SVC_SHARD_LEASE_S)',
    );
  }
}

/** This indexer no longer holds its shards: it must not commit. */
export class ShardLeaseLostError extends Error {
  override readonly name = 'ShardLeaseLostError';
  readonly code = 'shard_lease_lost';
}

export interface ShardFenceOptions {
  readonly repo: ShardWritersRepo;
  readonly owner: string;
  readonly shards: readonly number[];
  readonly leaseMs: number;
  readonly log?: CrawlLog;
}

export class ShardFence {
  readonly #o: ShardFenceOptions;
  readonly #lost = new AbortController();
  #timer: NodeJS.Timeout | null = null;
  #closed = false;

  private constructor(
    o: ShardFenceOptions,
    /** The fencing token the shards are held under. */
    readonly token: number,
  ) {
    this.#o = o;
  }

  /** Takes every one of `shards` or throws `ShardOwnedError` naming the held ones and their owners. */
  static async take(o: ShardFenceOptions): Promise<ShardFence> {
    const claim = await o.repo.acquire({ owner: o.owner, shards: o.shards, leaseMs: o.leaseMs });
    if (!claim.ok) throw new ShardOwnedError(claim.heldBy);
    const fence = new ShardFence(o, claim.token);
    fence.#timer = setInterval(() => void fence.#renew(), Math.max(100, Math.floor(o.leaseMs / 3)));
    fence.#timer.unref();
    return fence;
  }

  /** Aborted once the lease is known lost (a renewal refused): the indexer should stop. */
  get lost(): AbortSignal {
    return this.#lost.signal;
  }

  async #renew(): Promise<void> {
    if (this.#closed || this.#lost.signal.aborted) return;
    try {
      const ok = await this.#o.repo.renew({ token: this.token, shards: this.#o.shards, leaseMs: this.#o.leaseMs });
      if (!ok) this.#lose('its lease lapsed before it was renewed');
    } catch (err) {
      // The database is out of reach: the next renewal tries again; meanwhile every commit's check fails.
      this.#o.log?.warn({ err }, 'indexer: renewing the shard lease failed');
    }
  }

  #lose(why: string): void {
    if (this.#lost.signal.aborted) return;
    this.#o.log?.warn({ shards: this.#o.shards, token: this.token }, `indexer: lost its shards (${why}); it writes nothing more`);
    if (this.#timer) clearInterval(this.#timer);
    this.#lost.abort(new ShardLeaseLostError(`shards ${this.#o.shards.join(',')}: ${why}`));
  }

  /** Before each commit: throws `ShardLeaseLostError` unless every shard is still held under this token. */
  async check(): Promise<void> {
    if (this.#lost.signal.aborted) throw this.#lost.signal.reason as Error;
    if (this.#closed) throw new ShardLeaseLostError('the indexer is stopping');
    if (!(await this.#o.repo.check({ token: this.token, shards: this.#o.shards }))) {
      this.#lose('the lease lapsed or another indexer took them');
      throw this.#lost.signal.reason as Error;
    }
  }

  /** Stops renewing and lets the shards go at once (a clean stop), unless they were lost already. */
  async release(): Promise<void> {
    if (this.#closed) return;
    this.#closed = true;
    if (this.#timer) clearInterval(this.#timer);
    if (!this.#lost.signal.aborted) await this.#o.repo.release({ token: this.token, shards: this.#o.shards });
  }
}
