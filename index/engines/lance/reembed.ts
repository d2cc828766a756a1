/**
 * Re-embedding: giving every passage a vector of the configured model when the index has none, or another model's.
 * The writer prepares the vector column at open (`prepareReembed`), writes new pages with the configured model from
 * then on, and `ReembedPass` embeds what was there, page by page in page_ref order, in bounded batches: each batch one
 * merge-insert of the vector column alone (atomic), its progress saved in the index metadata after it, so a writer
 * killed mid-way resumes at the next page. The vector arm stays off until every row carries the new model's vector;
 * then the metadata names the model and the index switches (docs/api-search.md#re-embedding).
 */
import { makeArrowTable, type Table } from '@lancedb/lancedb';
import { Field, FixedSizeList, Float32, Int32, Schema } from './arrow.js';
import type { Logger } from 'pino';
import { KEY_COLUMNS } from './columns.js';
import { embedText } from './rows.js';
import type { Embedder } from '../../serving/embedder.js';
import { dropVectorIndexes, type IndexMeta, type ReembedMeta, type WriteQueue } from './maintenance.js';

/**
 * Passages embedded per batch (one embedding call and one commit). Queries' embeddings go ahead of a batch's anyway
 * (the interactive lane); the size sets how often progress moves and how much a kill redoes.
 */
export const REEMBED_BATCH_PASSAGES = 64;

/** Where a re-embedding stands, for /readyz, /metrics, `svc status` and progress lines. */
export interface ReembedProgress {
  /** The model the passages are being given vectors of. */
  readonly modelId: string;
  /** Passages re-embedded so far (across restarts). */
  readonly done: number;
  /** Passages in all: those done plus those of the pages still to do (an estimate while pages are being written). */
  readonly total: number;
  /** Passages per second since this process began its pass; null before its first batch. */
  readonly ratePerS: number | null;
  /** Seconds left at that rate; null without a rate. */
  readonly etaS: number | null;
  /** `running`: this process embeds now; `pending`: prepared, not running here (a reader, or a writer not started). */
  readonly state: 'running' | 'pending';
}

/** What a pass needs of the index that owns it (store.ts). */
export interface ReembedHost {
  readonly passages: Table;
  /** The writer's queue: each batch commits in it, between the writer's own writes. */
  readonly queue: WriteQueue;
  readonly meta: IndexMeta;
  readonly saveMeta: () => Promise<void>;
  /** Pages the writer wrote or removed since the pass began: their rows already carry the new model's vectors. */
  readonly touched: ReadonlySet<number>;
  /** A batch's commit to the passages table (the postings and search threads follow it by page). */
  readonly committed: (before: number, version: number, pageRefs: readonly number[]) => void;
  /** After a batch's commit, in the queue: the writer's maintenance counts it as a write of `pages` pages (compaction). */
  readonly afterBatch: (pages: number) => Promise<void>;
  /** Every row carries the new model's vector and the metadata says so: switch the vector arm on. */
  readonly finished: () => Promise<void>;
  readonly log?: Pick<Logger, 'info' | 'warn'> | undefined;
}

/** Options of one run of a pass. */
export interface ReembedRunOptions {
  /** Stops after the batch in hand (its progress saved): the pass resumes there next time. */
  readonly signal?: AbortSignal;
  /** Passages per batch. @default REEMBED_BATCH_PASSAGES */
  readonly batchPassages?: number;
  /** Told after each batch, and once at the end. */
  readonly onProgress?: (p: ReembedProgress) => void;
}

/** The Arrow type of a vector column of `dim` float32 values (the one columns.ts writes). */
const vectorType = (dim: number) => new FixedSizeList(dim, new Field('item', new Float32(), true));

/**
 * Prepares a writer's index for the configured embedder's vectors when they are not the stored ones: the metadata
 * records the pass (resumed when it is for this model already) with no vector model, and the `vector` column is made
 * the embedder's dimension (dropped and added empty when it had another, with any index on it). Returns the pass's
 * state, or null when the stored vectors are the embedder's already.
 */
export async function prepareReembed(
  passages: Table,
  meta: IndexMeta,
  embedder: Embedder,
  saveMeta: () => Promise<void>,
  log?: Pick<Logger, 'info' | 'warn'>,
): Promise<ReembedMeta | null> {
  if (meta.vectorModelId === embedder.modelId && meta.vectorDim === embedder.dim && !meta.reembed) return null;
  const resume = meta.reembed?.modelId === embedder.modelId && meta.reembed.dim === embedder.dim;
  if (!resume) {
    log?.info(
      { stored: meta.vectorModelId ?? meta.reembed?.modelId ?? null, embedder: embedder.modelId },
      'index vectors are not of the configured model: every passage is embedded again in the background',
    );
    meta.reembed = { modelId: embedder.modelId, dim: embedder.dim, afterRef: -1, done: 0 };
  }
  // Saved before the column changes: a kill between the two leaves a metadata that names no vector model, and the
  // next writer finds the column's dimension from the schema, not from the metadata.
  meta.vectorModelId = null;
  meta.vectorDim = embedder.dim;
  await saveMeta();
  const field = (await passages.schema()).fields.find((f) => f.name === 'vector');
  const dim = (field?.type as { listSize?: number } | undefined)?.listSize ?? null;
  if (dim !== embedder.dim) {
    if (field) {
      await dropVectorIndexes(passages);
      await passages.dropColumns(['vector']);
    }
    // The new column, null in every row until the pass writes it.
    await passages.addColumns([{ name: 'vector', valueSql: `arrow_cast(NULL, 'FixedSizeList(${embedder.dim}, Float32)')` }]);
  }
  return meta.reembed!;
}

/** A re-embedding of one index with one embedder, run by its writer (in the background, or to completion by the CLI). */
export class ReembedPass {
  readonly #host: ReembedHost;
  readonly #embedder: Embedder;
  readonly #state: ReembedMeta;
  #running: Promise<'done' | 'stopped'> | null = null;
  /** Passages in pages after `afterRef` when this process last counted them. */
  #left = 0;
  #rate: { since: number; passages: number } | null = null;
  #finished = false;

  constructor(host: ReembedHost, embedder: Embedder, state: ReembedMeta) {
    this.#host = host;
    this.#embedder = embedder;
    this.#state = state;
  }

  /** Whether every row has the new vectors and the index switched. */
  get finished(): boolean {
    return this.#finished;
  }

  /** Where the pass stands. */
  progress(): ReembedProgress {
    const { modelId, done } = this.#state;
    const r = this.#rate;
    const secs = r ? (performance.now() - r.since) / 1000 : 0;
    const ratePerS = r && secs > 0 && r.passages > 0 ? r.passages / secs : null;
    return {
      modelId,
      done,
      total: done + this.#left,
      ratePerS,
      etaS: ratePerS ? Math.ceil(this.#left / ratePerS) : null,
      state: this.#running ? 'running' : 'pending',
    };
  }

  /** Counts what is left (for a progress figure before the pass runs). */
  async count(): Promise<void> {
    this.#left = await this.#host.passages.countRows(`page_ref > ${this.#state.afterRef}`);
  }

  /** Runs the pass (joining the run in flight, if any) until it is done or `signal` stops it. */
  run(opts: ReembedRunOptions = {}): Promise<'done' | 'stopped'> {
    if (this.#finished) return Promise.resolve('done');
    this.#running ??= this.#run(opts).finally(() => {
      this.#running = null;
      this.#rate = null;
    });
    return this.#running;
  }

  async #run(opts: ReembedRunOptions): Promise<'done' | 'stopped'> {
    const host = this.#host;
    const state = this.#state;
    const per = Math.max(1, opts.batchPassages ?? REEMBED_BATCH_PASSAGES);
    const tell = () => opts.onProgress?.(this.progress());
    this.#rate = { since: performance.now(), passages: 0 };
    // Two rounds: the pages in order from where the pass stood, then any row still without a vector (a page another
    // process wrote without the model meanwhile). A row still without one after both is a failure to report.
    for (let round = 0; round < 2; round++) {
      const pages = await this.#pagesLeft(round === 0);
      this.#left = pages.reduce((n, p) => n + p.count, 0);
      if (round === 0 || pages.length > 0) tell();
      for (let i = 0; i < pages.length; ) {
        if (opts.signal?.aborted) return 'stopped';
        const batch: number[] = [];
        let rows = 0;
        while (i < pages.length && (batch.length === 0 || rows + pages[i]!.count <= per)) {
          batch.push(pages[i]!.ref);
          rows += pages[i]!.count;
          i++;
        }
        const embedded = await this.#batch(batch, round === 0);
        this.#left = Math.max(0, this.#left - rows);
        this.#rate.passages += embedded;
        tell();
      }
    }
    if (opts.signal?.aborted) return 'stopped';
    const missing = await host.queue.run(async () => {
      const n = await host.passages.countRows('vector IS NULL');
      if (n > 0) return n;
      host.meta.vectorModelId = state.modelId;
      host.meta.vectorDim = state.dim;
      delete host.meta.reembed;
      await host.saveMeta();
      return 0;
    });
    if (missing > 0) throw new Error(`re-embedding: ${missing} passages still have no vector of ${state.modelId}`);
    this.#finished = true;
    await host.finished();
    host.log?.info({ model: state.modelId, passages: state.done }, 'index vectors re-embedded: vector ranking on');
    return 'done';
  }

  /**
   * Pages whose passages the pass has to embed, in page_ref order, with their passage counts: those after `afterRef`
   * (`inOrder`), or those with a passage without a vector.
   */
  async #pagesLeft(inOrder: boolean): Promise<{ ref: number; count: number }[]> {
    const where = inOrder ? `page_ref > ${this.#state.afterRef}` : 'vector IS NULL';
    const rows = (await this.#host.passages.query().where(where).select(['page_ref']).toArray()) as { page_ref: number }[];
    const counts = new Map<number, number>();
    for (const r of rows) counts.set(r.page_ref, (counts.get(r.page_ref) ?? 0) + 1);
    return [...counts].map(([ref, count]) => ({ ref, count })).sort((a, b) => a.ref - b.ref);
  }

  /**
   * Embeds the passages of `refs` (at indexing priority: queries' embeddings go first) and writes their vectors in one
   * commit; a page the writer rewrote meanwhile is left as it is (its rows carry the model's vectors already). Returns
   * the passages embedded.
   */
  async #batch(refs: readonly number[], advance: boolean): Promise<number> {
    const host = this.#host;
    const state = this.#state;
    const fresh = refs.filter((r) => !host.touched.has(r));
    const read =
      fresh.length === 0
        ? []
        : ((await host.passages
            .query()
            .where(`page_ref IN (${fresh.join(', ')})`)
            .select(['page_ref', 'ordinal', 'title', 'text'])
            .toArray()) as { page_ref: number; ordinal: number; title: string; text: string }[]);
    const vectors = read.length > 0 ? await this.#embedder.embed(read.map((r) => embedText(r.title, r.text))) : [];
    return host.queue.run(async () => {
      const keep = read.flatMap((r, i) =>
        host.touched.has(r.page_ref) ? [] : [{ page_ref: r.page_ref, ordinal: r.ordinal, vector: vectors[i]! }],
      );
      if (keep.length > 0) {
        const schema = new Schema([
          new Field('page_ref', new Int32(), false),
          new Field('ordinal', new Int32(), false),
          new Field('vector', vectorType(state.dim), true),
        ]);
        const table = makeArrowTable(
          keep.map((k) => ({ ...k, vector: Array.from(k.vector) })),
          { schema },
        );
        const before = await host.passages.version();
        // Only the vector column: a row whose page changed since it was read is not matched (its ordinal is gone) or
        // was left out above; nothing is inserted.
        const { version } = await host.passages
          .mergeInsert([...KEY_COLUMNS])
          .whenMatchedUpdateAll()
          .execute(table);
        const pages = [...new Set(keep.map((k) => k.page_ref))];
        host.committed(before, version, pages);
        await host.afterBatch(pages.length);
      }
      if (advance) state.afterRef = Math.max(state.afterRef, refs[refs.length - 1]!);
      state.done += keep.length;
      await host.saveMeta();
      return keep.length;
    });
  }
}
