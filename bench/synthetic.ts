/**
 * Synthetic pages of real text for the index benchmarks: each passage is 3–6 sentences drawn (seeded PRNG) from the
 * SciFact corpus, pages spread over 500 hosts; and the query sets drawn from the SciFact test queries.
 */
import { fileURLToPath } from 'node:url';
import { join } from 'node:path';
import { readCorpus } from '../cli/ingest.js';
import type { PageInput } from '../page-model.js';

/** The benchmarks' source folder, also when they run compiled from dist/bench (as `npm start` runs the service). */
export const BENCH_SRC = fileURLToPath(new URL(import.meta.url.includes('/dist/bench/') ? '../../bench/' : './', import.meta.url));
export const SCIFACT = join(BENCH_SRC, '..', '..', 'shared', 'data', 'beir', 'scifact') + '/';

export function mulberry32(seed: number): () => number {
  return () => {
    seed |= 0;
    seed = (seed + 0x6d2b79f5) | 0;
    let t = Math.imul(seed ^ (seed >>> 15), 1 | seed);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

export interface SentencePool {
  readonly sentences: string[];
  readonly titles: string[];
}

export async function sentencePool(): Promise<SentencePool> {
  const sentences: string[] = [];
  const titles: string[] = [];
  for await (const d of readCorpus(join(SCIFACT, 'corpus.jsonl.gz'))) {
    titles.push(d.title);
    for (const s of d.text.split(/(?<=[.!?])\s+/)) if (s.length > 30) sentences.push(s);
  }
  return { sentences, titles };
}

/** `n` passages in pages of 1–8 passages (the same sequence for the same n: seed 42). */
export function* syntheticPages(n: number, pool: SentencePool): Generator<PageInput> {
  const rnd = mulberry32(42);
  const pick = <T>(a: T[]) => a[Math.floor(rnd() * a.length)]!;
  let made = 0;
  for (let ref = 1; made < n; ref++) {
    const host = `host${ref % 500}.example`;
    const count = Math.min(n - made, 1 + Math.floor(rnd() * 8));
    const passages = Array.from({ length: count }, (_, ordinal) => {
      const text = Array.from({ length: 3 + Math.floor(rnd() * 4) }, () => pick(pool.sentences)).join(' ');
      return { ordinal, text, snippetText: text, headingPath: [] };
    });
    made += count;
    yield {
      pageRef: ref,
      url: `https://${host}/doc/${ref}.html`,
      canonicalUrl: null,
      host,
      title: pick(pool.titles),
      description: '',
      lang: 'en',
      publishedAt: null,
      modifiedAt: '2026-01-01T00:00:00Z',
      dateSource: 'schema.org',
      fetchedAt: '2026-11-20T00:00:00Z',
      contentHash: `h${ref}`,
      snippet: { nosnippet: false, maxSnippet: null },
      filetype: 'html',
      signals: { declaredTypes: [], addressCountries: [], addressRegions: [] },
      passages,
      images: [],
    };
  }
}

const STOP = new Set(
  'the a an of in on and or to for with by is are was were be that this from as at it its not no than which into their have has had does do can'.split(
    ' ',
  ),
);

/** The 3 longest distinct content words of a query (the "3-word" query set). */
export function shortQuery(q: string): string {
  const words = (q.toLowerCase().match(/[a-z][a-z0-9-]{3,}/g) ?? []).filter((w) => !STOP.has(w));
  return [...new Set(words)]
    .sort((a, b) => b.length - a.length)
    .slice(0, 3)
    .join(' ');
}

/** A query with each of its words required (`+a +b +c`): the "all-required" form of a space-separated query. */
export function requireEach(q: string): string {
  return q
    .split(' ')
    .map((w) => `+${w}`)
    .join(' ');
}

/** The first two adjacent content words of a query (a 2-word phrase that occurs in SciFact text), or null. */
export function twoWordPhrase(q: string): string | null {
  const words = q.toLowerCase().match(/[a-z][a-z0-9]*/g) ?? [];
  for (let i = 0; i + 1 < words.length; i++) {
    const [a, b] = [words[i]!, words[i + 1]!];
    if (a.length >= 4 && b.length >= 4 && !STOP.has(a) && !STOP.has(b)) return `${a} ${b}`;
  }
  return null;
}

/** The p-th percentile (nearest rank) of `xs`. */
export function pct(xs: readonly number[], p: number): number {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.floor((p / 100) * s.length))] ?? 0;
}

/** Writes `n` synthetic passages' pages into `index` in batches of 500, then optimizes (the benches' index build). */
export async function writeSyntheticPages(
  index: { upsertPages(pages: PageInput[]): Promise<unknown>; optimize(): Promise<unknown> },
  n: number,
  pool: SentencePool,
): Promise<void> {
  let batch: PageInput[] = [];
  for (const p of syntheticPages(n, pool)) {
    batch.push(p);
    if (batch.length === 500) {
      await index.upsertPages(batch);
      batch = [];
    }
  }
  if (batch.length > 0) await index.upsertPages(batch);
  await index.optimize();
}
