/**
 * `svc ingest --jsonl FILE [--data-dir D] [--name N] [--embedder auto|none|hashing]`: adds a BEIR-format corpus
 * (JSON lines: _id, title, text; .gz accepted) to the index through the same PageInput → passages → embedding →
 * PassageIndex path as crawled pages. Each document gets a durable page_ref from the documents repository (the data
 * dir's SQLite file, or PostgreSQL with SVC_DATABASE_URL; host ids likewise from the state) under the URL
 * `corpus:<name>/<_id>`, and keeps its `_id` as externalId so eval can map results back.
 */
import { createHash } from 'node:crypto';
import { createReadStream, statSync } from 'node:fs';
import { basename, dirname } from 'node:path';
import { createInterface } from 'node:readline';
import { parseArgs } from 'node:util';
import { createGunzip } from 'node:zlib';
import { loadConfig, type Config } from '../config.js';
import { createEmbedder, createHashingEmbedder, type Embedder } from '../index/serving/embedder.js';
import { chooseModel } from '../main.js';
import { indexLocation } from '../index/engines/lance/location.js';
import { openIndex, type ServedIndex } from '../index/shards/sharded-index.js';
import { vectorsUnusedWarning } from '../index/retrieval/warnings.js';
import type { PageInput, PassageInput } from '../page-model.js';
import { openRepositories, stateOptions } from '../state/repos/open.js';
import { UsageError, type CliIo } from './io.js';
import { ProgressLines } from './progress.js';
import { reembedWithProgress } from './reembed-run.js';
import { onStopSignals } from './stop-signals.js';

/** One BEIR corpus line. */
export interface CorpusDoc {
  readonly _id: string;
  readonly title: string;
  readonly text: string;
}

/** Longest passage cut from a corpus document, in words (most abstracts fit in one). */
export const CORPUS_PASSAGE_WORDS = 320;

/**
 * Reads a BEIR JSONL corpus (plain or gzip), skipping blank lines; ends early, without error, once `stop` aborts.
 * `read.bytes` follows the bytes of the file read so far (a progress fraction).
 */
export async function* readCorpus(file: string, stop?: AbortSignal, read?: { bytes: number }): AsyncGenerator<CorpusDoc> {
  const raw = createReadStream(file);
  const input = file.endsWith('.gz') ? raw.pipe(createGunzip()) : raw;
  const rl = createInterface({ input, crlfDelay: Infinity });
  // Closing the reader ends the loop below even while it waits for input (a slow disk, a pipe).
  const close = (): void => {
    rl.close();
    raw.destroy();
  };
  if (stop?.aborted) close();
  stop?.addEventListener('abort', close, { once: true });
  let line = 0;
  try {
    for await (const l of rl) {
      line++;
      if (l.trim() === '') continue;
      let d: unknown;
      try {
        d = JSON.parse(l);
      } catch {
        throw new UsageError(`${file}:${line}: not JSON`);
      }
      const o = d as Record<string, unknown>;
      if (typeof o._id !== 'string' && typeof o._id !== 'number') throw new UsageError(`${file}:${line}: missing _id`);
      if (read) read.bytes = raw.bytesRead;
      yield { _id: String(o._id), title: typeof o.title === 'string' ? o.title : '', text: typeof o.text === 'string' ? o.text : '' };
      if (stop?.aborted) return;
    }
  } finally {
    stop?.removeEventListener('abort', close);
  }
}

/** Splits text into passages of at most `maxWords` words, cutting after sentence ends where possible. */
export function splitPassages(text: string, maxWords = CORPUS_PASSAGE_WORDS): string[] {
  const sentences = text
    .replace(/\s+/g, ' ')
    .trim()
    .split(/(?<=[.!?])\s+(?=[\p{Lu}\p{N}("])/u);
  const out: string[] = [];
  let cur: string[] = [];
  const flush = () => {
    if (cur.length) out.push(cur.join(' '));
    cur = [];
  };
  for (const s of sentences) {
    const words = s.split(' ').filter(Boolean);
    if (cur.length + words.length > maxWords && cur.length > 0) flush();
    for (let i = 0; i < words.length; i += maxWords) {
      const chunk = words.slice(i, i + maxWords);
      if (cur.length + chunk.length > maxWords) flush();
      cur.push(...chunk);
    }
  }
  flush();
  return out;
}

/** The PageInput of a corpus document (the same contract the crawler produces). */
export function corpusPage(doc: CorpusDoc, pageRef: number, name: string, fetchedAt: string): PageInput {
  const parts = splitPassages(doc.text);
  const passages: PassageInput[] = (parts.length ? parts : ['']).map((p, i) => ({
    ordinal: i,
    text: p,
    snippetText: p,
    headingPath: doc.title ? [doc.title] : [],
  }));
  return {
    pageRef,
    url: corpusUrl(name, doc._id),
    canonicalUrl: null,
    host: corpusHost(name, doc._id),
    title: doc.title,
    description: '',
    lang: null,
    publishedAt: null,
    modifiedAt: null,
    dateSource: 'corpus',
    fetchedAt,
    contentHash: createHash('sha256').update(`${doc.title}\n${doc.text}`).digest('hex'),
    snippet: { nosnippet: false, maxSnippet: null },
    filetype: 'txt',
    signals: { declaredTypes: [], addressCountries: [], addressRegions: [] },
    passages,
    images: [],
    externalId: doc._id,
  };
}

/**
 * The source identity of a corpus record: its own host name under the corpus' reserved domain
 * (`<record>.<corpus>.corpus.invalid`, RFC 2606 `.invalid`: never resolvable, never crawled). Every record of a
 * collection is a separate source, like pages of different sites, so the per-host diversity cap of svc_search and
 * svc_context never hides a record behind another, and `site:<corpus>.corpus.invalid` still selects the collection.
 * A record id that is not already a DNS label is replaced by a stable digest of it.
 */
export function corpusHost(name: string, id: string): string {
  const label = /^[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?$/.test(id) ? id : `x${createHash('sha256').update(id).digest('hex').slice(0, 24)}`;
  return `${label}.${corpusDomain(name)}`;
}

/** The reserved domain of a corpus: every record's host is under it. */
export const corpusDomain = (name: string) => `${name}.corpus.invalid`;

/** The registry URL of a corpus document. */
export const corpusUrl = (name: string, id: string) => `corpus:${name}/${encodeURIComponent(id)}`;

/** Picks the embedder: `auto` = the real model when configured and present, else none. */
export async function pickEmbedder(kind: string, config: Config, io: CliIo): Promise<Embedder | null> {
  if (kind === 'none') return null;
  if (kind === 'hashing') return createHashingEmbedder();
  if (kind !== 'auto' && kind !== 'model') throw new UsageError(`--embedder must be auto, model, none or hashing`);
  if (!config.modelDir) {
    if (kind === 'model') throw new UsageError('--embedder model needs SVC_MODEL_DIR');
    io.stderr.write('embedder: no model directory configured (SVC_MODEL_DIR): BM25 only\n');
    return null;
  }
  // An unset SVC_MODEL keeps the model of the index's vectors (main.ts chooseModel), as `svc serve` does.
  const model = await chooseModel({ ...config, modelDir: config.modelDir });
  if (model.notice) io.stderr.write(`embedder: ${model.notice}\n`);
  const e = await createEmbedder({
    modelDir: config.modelDir,
    modelName: model.name,
    threads: config.embedThreads,
    ...(model.dtype ? { dtype: model.dtype } : {}),
  });
  if (!e) {
    if (kind === 'model') throw new UsageError('embedding model weights are not available');
    io.stderr.write('embedder: model weights absent or invalid: BM25 only\n');
  }
  return e;
}

/** Corpus name from the file path: the folder name for `<dir>/corpus.jsonl[.gz]`, else the file's base name. */
export function corpusName(file: string): string {
  const base = basename(file)
    .replace(/\.gz$/, '')
    .replace(/\.jsonl$/, '');
  const n = base === 'corpus' ? basename(dirname(file)) : base;
  return (
    n
      .toLowerCase()
      .replace(/[^a-z0-9-]+/g, '-')
      .replace(/^-+|-+$/g, '') || 'corpus'
  );
}

function progress(io: CliIo, n: number, passages: number, started: number, done = false, lines?: ProgressLines, fraction?: number): void {
  const secs = (Date.now() - started) / 1000;
  const rate = secs > 0 ? Math.round(n / secs) : 0;
  // Off a terminal: a line every few seconds (progress.ts); on one, the live bar.
  if (lines && !done) lines.update(n, { fraction: fraction ?? null, extra: `${passages} passages` });
  if (io.stdout.isTTY)
    io.stdout.write(
      `\r[${'#'.repeat(Math.min(30, Math.floor(Math.log2(n + 1) * 2)))}] ${n} docs, ${passages} passages, ${rate} docs/s${done ? '\n' : ''}`,
    );
  else if (done) io.stdout.write(`${n} docs, ${passages} passages, ${rate} docs/s\n`);
}

/** `svc ingest`. */
export async function ingestCommand(argv: string[], io: CliIo): Promise<number> {
  const { values } = parseArgs({
    args: argv,
    options: {
      jsonl: { type: 'string' },
      'data-dir': { type: 'string' },
      name: { type: 'string' },
      embedder: { type: 'string', default: 'auto' },
      batch: { type: 'string', default: '256' },
    },
  });
  if (!values.jsonl) throw new UsageError('usage: svc ingest --jsonl FILE [--data-dir D] [--name N] [--embedder auto|none|hashing]');
  const config = loadConfig({ env: io.env, flags: { dataDir: values['data-dir'] } });
  const name = values.name ? corpusName(values.name) : corpusName(values.jsonl);
  const batchSize = Math.max(1, Math.min(5000, Number(values.batch) || 256));
  const embedder = await pickEmbedder(values.embedder ?? 'auto', config, io);
  // Documents and host ids through the repositories: with SVC_DATABASE_URL the ingested pages are in the
  // fleet's shared page registry and their host ids are the ones every other writer of the index uses.
  const repos = await openRepositories(stateOptions(config));
  const documents = repos.documents;
  let index: ServedIndex;
  try {
    index = await openIndex({
      location: indexLocation(config),
      shards: config.indexShards,
      embedder,
      optimizeEvery: Number.MAX_SAFE_INTEGER,
      hostIds: repos.hostIds,
      textEngine: false,
      // A model on an index without its vectors: what this run writes is embedded, then what was there (below).
      reembed: config.reembed === 'background',
    });
  } catch (err) {
    await embedder?.close();
    await repos.close();
    throw err;
  }
  const started = Date.now();
  const lines = new ProgressLines({ io, label: 'ingest', unit: 'docs', everyMs: config.progressMs });
  const size = statSync(values.jsonl, { throwIfNoEntry: false })?.size ?? 0;
  const read = { bytes: 0 };
  const fetchedAt = new Date().toISOString();
  let n = 0;
  let passages = 0;
  let batch: PageInput[] = [];
  // Two batches in flight at most: while one batch is embedded (the embedding worker, all ONNX threads), the one
  // before it is written (LanceDB's pool) and the next is read and analysed (this thread), so the cores are not
  // idle between inference calls (docs/bench-history.md measures the gain). Two batches may commit in
  // either order, so a batch repeating a record id of the batch in flight waits for it (the later line wins, as in
  // one batch). Memory holds at most two batches.
  let inFlight = null as Promise<void> | null; // (a cast: set inside flush, which the compiler does not follow)
  let inFlightRefs = new Set<number>();
  const flush = async () => {
    if (batch.length === 0) return;
    const pages = batch;
    const counted = { n, passages };
    batch = [];
    if (inFlight && pages.some((p) => inFlightRefs.has(p.pageRef))) await inFlight;
    const previous = inFlight;
    inFlightRefs = new Set(pages.map((p) => p.pageRef));
    const current = index.upsertPages(pages).then(async () => {
      for (const p of pages) await documents.recordIndexed(p.pageRef, { contentHash: p.contentHash, title: p.title, at: fetchedAt });
      progress(io, counted.n, counted.passages, started, false, lines, size > 0 ? read.bytes / size : undefined);
    });
    current.catch(() => undefined); // observed here, thrown where it is awaited (below or at the next flush)
    inFlight = current;
    if (previous) await previous;
  };
  // Ctrl-C and SIGTERM alike: reading stops, every record read so far is written (its page_ref is allocated
  // already), then the summary, and exit 130 (interrupted: the corpus is not complete; running again finishes it).
  const stop = onStopSignals();
  io.stderr.write(`ingesting ${values.jsonl} as corpus ${name} (Ctrl-C or SIGTERM stops after writing what was read)\n`);
  try {
    for await (const doc of readCorpus(values.jsonl, stop.signal, read)) {
      const url = corpusUrl(name, doc._id);
      const ref = await documents.allocate(url, corpusHost(name, doc._id));
      const page = corpusPage(doc, ref, name, fetchedAt);
      batch.push(page);
      n++;
      passages += page.passages.length;
      if (batch.length >= batchSize) await flush();
    }
    await flush();
    await inFlight;
    const stoppedBy = stop.received();
    // An interrupted run leaves compaction to the next writer: the operator asked to stop now.
    if (!stoppedBy) await index.optimize();
    progress(io, n, passages, started, true);
    // Then the passages already there, when the index had no vectors of this model (stoppable; the next run resumes).
    const reembedded = stoppedBy ? 'none' : await reembedWithProgress(index, io, { everyMs: config.progressMs, signal: stop.signal });
    if (reembedded === 'done') await index.optimize();
    const s = await index.stats();
    io.stdout.write(`index: ${s.pages} pages, ${s.passages} passages, ${s.vectors} vectors, ranking ${s.rankingMode}\n`);
    // A model left unused is said, with why (manual re-embedding, or vectors of another model).
    const unused = vectorsUnusedWarning(index.vectorsUnused);
    if (unused) io.stdout.write(`ranking: ${unused.message}\n`);
    if (stoppedBy) {
      io.stdout.write(`ingest stopped by ${stoppedBy}: the ${n} records read are indexed; run the same command again to finish\n`);
      return 130;
    }
    if (reembedded === 'stopped') {
      io.stdout.write(
        `re-embedding stopped by ${stop.received() ?? 'a signal'}: what is done is kept; svc reindex --vectors finishes it\n`,
      );
      return 130;
    }
    return 0;
  } finally {
    stop.dispose();
    await inFlight?.catch(() => undefined); // a failed read must not close the index under a write
    await index.close();
    await embedder?.close();
    await repos.close();
  }
}
