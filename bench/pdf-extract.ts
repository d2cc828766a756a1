/**
 * PDF extraction (crawler/extract-pdf.ts: pdf.js in a worker thread, then passages on the main thread) on PDFs
 * generated with pdf-lib from known text, 1 to 200 pages of a dense page each (a heading and ~300 words):
 *  - throughput: pages/s and MB/s of the whole extraction (worker parse + passage building), median of the runs;
 *  - memory: peak process RSS above the level before the document (the worker's heap is part of the process);
 *  - the main thread's event loop meanwhile: its largest delay (perf_hooks.monitorEventLoopDelay at 1 ms resolution,
 *    read less it: bench/loop-delay.ts), which stays near zero because parsing and passage building both run in the
 *    worker;
 *  - text recall: share of the generated words found in the extracted text (bag of words, each occurrence
 *    counted once), and whether every page's passages carry that page's number.
 *
 * Run: node --import tsx bench/pdf-extract.ts [--runs N]
 */
// First: only loopback may ever be contacted, and no DNS query leaves the process (fixtures/loopback-only.ts).
import '../fixtures/loopback-only.js';
import { PdfExtractor } from '../crawler/extract-pdf.js';
import { fillerText, makePdf, type GenPage } from '../test/helpers/pdf-fixtures.js';
import { LoopDelayMonitor } from './loop-delay.js';

const args = process.argv.slice(2);
const runsArg = args.indexOf('--runs');
const RUNS = runsArg >= 0 ? Math.max(1, Number(args[runsArg + 1])) : 3;
const SIZES = [1, 10, 50, 100, 200];

const words = (s: string): string[] => s.toLowerCase().match(/[\p{L}\p{N}]+/gu) ?? [];

function recall(expected: readonly string[], got: readonly string[]): number {
  const have = new Map<string, number>();
  for (const w of got) have.set(w, (have.get(w) ?? 0) + 1);
  let hit = 0;
  for (const w of expected) {
    const n = have.get(w) ?? 0;
    if (n > 0) {
      hit++;
      have.set(w, n - 1);
    }
  }
  return expected.length === 0 ? 1 : hit / expected.length;
}

const median = (xs: number[]): number => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;

async function main(): Promise<void> {
  const extractor = new PdfExtractor({ maxBytes: 100 * 1024 * 1024, maxPages: 500, timeoutMs: 300_000 });
  // Worker start-up (thread + pdf.js import) once, outside the measurements.
  await extractor.extract(await makePdf([{ paragraphs: ['warm up'] }]));
  const rows: string[][] = [];
  for (const n of SIZES) {
    const pages: GenPage[] = Array.from({ length: n }, (_, i) => ({
      heading: `Section ${i + 1}`,
      paragraphs: [fillerText(i, 150), fillerText(i + 7919, 150)],
    }));
    const bytes = await makePdf(pages, { title: `Generated ${n}` });
    const expected = pages.flatMap((p) => [...words(p.heading ?? ''), ...p.paragraphs.flatMap(words)]);
    const times: number[] = [];
    const loopMax: number[] = [];
    let peak = 0;
    let rec = 0;
    let pagesOk = false;
    for (let r = 0; r < RUNS; r++) {
      global.gc?.();
      const base = process.memoryUsage().rss;
      let top = base;
      const sampler = setInterval(() => (top = Math.max(top, process.memoryUsage().rss)), 5);
      const loop = new LoopDelayMonitor(1);
      loop.enable();
      const t0 = performance.now();
      const got = await extractor.extract(bytes);
      const t1 = performance.now();
      loop.disable();
      clearInterval(sampler);
      top = Math.max(top, process.memoryUsage().rss);
      if (!got.ok) throw new Error(`${n} pages: ${got.reason} ${got.detail}`);
      const doc = got.doc;
      times.push(t1 - t0);
      loopMax.push(loop.maxNs / 1e6);
      peak = Math.max(peak, top - base);
      rec = recall(expected, words(doc.mainText));
      pagesOk = pages.every((_, i) => doc.passages.some((p) => p.page === i + 1 && p.headingPath[0] === `Section ${i + 1}`));
    }
    const ms = median(times);
    rows.push([
      String(n),
      (bytes.byteLength / 1024).toFixed(0),
      ms.toFixed(0),
      ((n * 1000) / ms).toFixed(1),
      (bytes.byteLength / 1024 / 1024 / (ms / 1000)).toFixed(2),
      median(loopMax).toFixed(1),
      (peak / 1024 / 1024).toFixed(0),
      `${(rec * 100).toFixed(2)} %`,
      pagesOk ? 'yes' : 'NO',
    ]);
  }
  await extractor.close();
  const head = ['pages', 'KiB', 'ms (median)', 'pages/s', 'MB/s', 'max loop delay ms', 'peak RSS +MiB', 'word recall', 'page numbers'];
  const widths = head.map((h, i) => Math.max(h.length, ...rows.map((r) => r[i]!.length)));
  const line = (cells: readonly string[]): string => `| ${cells.map((c, i) => c.padStart(widths[i]!)).join(' | ')} |`;
  console.log(`PDF extraction, ${RUNS} run(s) per size, Node ${process.version}`);
  console.log(line(head));
  console.log(`|${widths.map((w) => '-'.repeat(w + 2)).join('|')}|`);
  for (const r of rows) console.log(line(r));
}

await main();
