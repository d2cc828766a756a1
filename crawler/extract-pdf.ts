/**
 * PDF documents: text extraction in a worker thread (pdf-worker.ts, Mozilla's pdf.js) with caps on bytes, pages,
 * time and memory, then the same passage model as HTML pages, with the PDF page number kept on every passage.
 *
 * Outcomes a crawler records (documents.reason, svc_site `excluded.by_reason`):
 * - `encrypted`: the document needs a password to read its text;
 * - `no_text_layer`: it parses but has no extractable text (a scan without OCR, drawings only);
 * - `too_large`: more bytes than `maxBytes`;
 * - `parse_error`: broken or truncated, or over the time or memory cap (the worker is then restarted).
 */
import { existsSync } from 'node:fs';
import { Worker } from 'node:worker_threads';
import type { DateSource, PassageInput } from '../page-model.js';
import { buildPassages } from './extract-passages.js';
import type { TextBlock } from './extract-text.js';

/** Why a PDF is not indexed. */
export type PdfExclusion = 'encrypted' | 'no_text_layer' | 'too_large' | 'parse_error';

/** One line of text as pdf.js laid it out. */
export interface PdfLine {
  readonly text: string;
  /** Font size (text-space height), used to tell headings from body text. */
  readonly size: number;
  /** Baseline position (PDF user space: larger is higher on the page). */
  readonly y: number;
}

/** The text of one page, in content-stream order. */
export interface PdfRawPage {
  /** 1-based page number. */
  readonly number: number;
  readonly lines: readonly PdfLine[];
}

/** Document information dictionary fields the index uses. */
export interface PdfInfo {
  readonly title: string | null;
  readonly author: string | null;
  /** PDF date strings ("D:YYYYMMDDHHmmSSOHH'mm'"), raw. */
  readonly creationDate: string | null;
  readonly modDate: string | null;
  /** Catalog /Lang, raw. */
  readonly language: string | null;
  readonly encrypted: boolean;
}

/** @internal Message to the worker. */
export interface PdfWorkerRequest {
  readonly id: number;
  readonly data: ArrayBuffer;
  readonly maxPages: number;
  /** Response headers (Last-Modified, Content-Language) the document's dates and language may fall back to. */
  readonly headers: Readonly<Record<string, string>>;
}

/** What pdf.js read from one document (inside the worker). */
export type PdfRawResult =
  | { readonly ok: true; readonly numPages: number; readonly info: PdfInfo; readonly pages: readonly PdfRawPage[] }
  | { readonly ok: false; readonly reason: PdfExclusion; readonly detail: string };

/** What {@link PdfExtractor.extract} gives: the document ready to index, or why it is not indexed. */
export type PdfResult =
  | { readonly ok: true; readonly doc: PdfDocument }
  | { readonly ok: false; readonly reason: PdfExclusion; readonly detail: string };

/** @internal Message from the worker. */
export type PdfWorkerReply = PdfResult & { readonly id: number };

/** Caps of {@link PdfExtractor}. */
export interface PdfExtractorOptions {
  /** Largest document parsed, in bytes; larger ones are `too_large` without being parsed. @default 20 MiB */
  readonly maxBytes?: number;
  /** Pages read per document (the rest is not indexed). @default 200 */
  readonly maxPages?: number;
  /** Wall time per document; past it the worker is terminated and the document is a `parse_error`. @default 20000 */
  readonly timeoutMs?: number;
  /** Heap cap of the worker (MiB); a document that needs more is a `parse_error`. @default 512 */
  readonly maxHeapMb?: number;
}

/**
 * Parses PDFs one at a time in a dedicated worker thread, started on first use and restarted after a timeout or a
 * crash, so a hostile document can neither block the event loop nor take the crawler down.
 */
export class PdfExtractor {
  readonly maxBytes: number;
  readonly maxPages: number;
  readonly #timeoutMs: number;
  readonly #maxHeapMb: number;
  #worker: Worker | null = null;
  #ready: Promise<Worker> | null = null;
  #nextId = 1;
  /** Documents are parsed one at a time: the worker is a single thread and a queue keeps the caps per document. */
  #tail: Promise<unknown> = Promise.resolve();

  constructor(opts: PdfExtractorOptions = {}) {
    this.maxBytes = opts.maxBytes ?? 20 * 1024 * 1024;
    this.maxPages = opts.maxPages ?? 200;
    this.#timeoutMs = opts.timeoutMs ?? 20_000;
    this.#maxHeapMb = opts.maxHeapMb ?? 512;
  }

  /**
   * Reads one document into its indexable form (parse and passages both in the worker). Never throws for a bad
   * document: its failure is the result. `headers`: the response's, for date and language fallbacks.
   */
  extract(bytes: Uint8Array, headers: Readonly<Record<string, string>> = {}): Promise<PdfResult> {
    if (bytes.byteLength > this.maxBytes) {
      return Promise.resolve({ ok: false, reason: 'too_large', detail: `${bytes.byteLength} bytes > ${this.maxBytes}` });
    }
    const run = (): Promise<PdfResult> => this.#run(bytes, headers);
    const next = this.#tail.then(run, run);
    this.#tail = next.catch(() => undefined);
    return next;
  }

  /** Stops the worker (a document in progress fails with parse_error; a later one starts a new worker). */
  async close(): Promise<void> {
    const w = this.#worker;
    this.#worker = null;
    this.#ready = null;
    if (w) await w.terminate();
  }

  #spawn(): Promise<Worker> {
    if (this.#ready) return this.#ready;
    // Built: JavaScript beside this file. From source (tsx): a worker does not inherit the parent's loader, so a
    // one-line bootstrap registers tsx in the worker first (as index/serving/embedder.ts does).
    const here = new URL('.', import.meta.url);
    const jsUrl = new URL('pdf-worker.js', here);
    const tsUrl = new URL('pdf-worker.ts', here);
    const resourceLimits = { maxOldGenerationSizeMb: this.#maxHeapMb };
    let w: Worker;
    if (!existsSync(jsUrl) && existsSync(tsUrl)) {
      const api = import.meta.resolve('tsx/esm/api');
      const code = `import(${JSON.stringify(api)}).then((m) => { m.register(); return import(${JSON.stringify(tsUrl.href)}); })`;
      w = new Worker(code, { eval: true, resourceLimits });
    } else {
      w = new Worker(jsUrl, { resourceLimits });
    }
    w.unref();
    this.#worker = w;
    this.#ready = new Promise<Worker>((resolve, reject) => {
      const onMsg = (m: { ready?: boolean }): void => {
        if (m?.ready) {
          w.off('message', onMsg);
          w.off('error', onErr);
          resolve(w);
        }
      };
      const onErr = (err: Error): void => {
        this.#drop(w);
        reject(err);
      };
      w.on('message', onMsg);
      w.once('error', onErr);
    });
    // Any later exit (crash, heap cap, terminate) makes the next document start a fresh worker.
    w.once('exit', () => this.#drop(w));
    return this.#ready;
  }

  #drop(w: Worker): void {
    if (this.#worker === w) {
      this.#worker = null;
      this.#ready = null;
    }
  }

  async #run(bytes: Uint8Array, headers: Readonly<Record<string, string>>): Promise<PdfResult> {
    let w: Worker;
    try {
      w = await this.#spawn();
    } catch (err) {
      return { ok: false, reason: 'parse_error', detail: `worker failed to start: ${(err as Error).message}`.slice(0, 200) };
    }
    const id = this.#nextId++;
    // A copy the worker owns (transferred, not cloned): the caller's buffer stays intact. Copied element-wise: a
    // Buffer's .slice() shares memory, and its .buffer may be a pool holding other data around it.
    const copy = new Uint8Array(bytes.byteLength);
    copy.set(bytes);
    const data = copy.buffer;
    return new Promise<PdfResult>((resolve) => {
      const done = (r: PdfResult): void => {
        clearTimeout(timer);
        w.off('message', onMsg);
        w.off('exit', onExit);
        w.off('error', onError);
        resolve(r);
      };
      const onMsg = (m: PdfWorkerReply): void => {
        if (m?.id !== id) return;
        const { id: _id, ...rest } = m;
        done(rest);
      };
      const onExit = (): void => done({ ok: false, reason: 'parse_error', detail: 'worker exited (memory cap or crash)' });
      const onError = (err: Error): void =>
        done({ ok: false, reason: 'parse_error', detail: `worker error: ${err.message}`.slice(0, 200) });
      const timer = setTimeout(() => {
        this.#drop(w);
        void w.terminate();
        done({ ok: false, reason: 'parse_error', detail: `timeout after ${this.#timeoutMs} ms` });
      }, this.#timeoutMs);
      w.on('message', onMsg);
      w.once('exit', onExit);
      w.once('error', onError);
      w.postMessage({ id, data, maxPages: this.maxPages, headers: { ...headers } } satisfies PdfWorkerRequest, [data]);
    });
  }
}

/** A PDF turned into what the index stores. */
export interface PdfDocument {
  readonly title: string;
  readonly lang: string | null;
  readonly publishedAt: string | null;
  readonly modifiedAt: string | null;
  readonly dateSource: DateSource;
  /** All extracted text (content hash, recall measurements). */
  readonly mainText: string;
  /** Passages in reading order, each on one PDF page (`page`). */
  readonly passages: PassageInput[];
  /** Pages in the file, and pages read (≤ maxPages). */
  readonly numPages: number;
  readonly pagesRead: number;
}

/**
 * "D:YYYYMMDDHHmmSSOHH'mm'" (PDF 32000-1 §7.9.4; every part after the year optional) → ISO 8601, or null.
 * Years outside 1990–2100 are ignored, like page dates (producers write 1970 or 0000 for "unknown").
 */
export function parsePdfDate(s: string | null): string | null {
  if (!s) return null;
  const m = /^(?:D:)?(\d{4})(\d{2})?(\d{2})?(\d{2})?(\d{2})?(\d{2})?\s*(?:([Zz])|([+-])(\d{2})'?(\d{2})?'?)?/.exec(s.trim());
  if (!m) return null;
  const year = Number(m[1]);
  if (year < 1990 || year > 2100) return null;
  const [mo, d, h, mi, se] = [m[2] ?? '01', m[3] ?? '01', m[4] ?? '00', m[5] ?? '00', m[6] ?? '00'].map(Number) as [
    number,
    number,
    number,
    number,
    number,
  ];
  if (mo < 1 || mo > 12 || d < 1 || d > 31 || h > 23 || mi > 59 || se > 59) return null;
  let t = Date.UTC(year, mo - 1, d, h, mi, se);
  if (m[8]) t -= (m[8] === '-' ? -1 : 1) * (Number(m[9]) * 60 + Number(m[10] ?? 0)) * 60_000;
  const date = new Date(t);
  return Number.isNaN(date.getTime()) ? null : date.toISOString();
}

/** Titles producers write that are not titles ("untitled", "Microsoft Word - report.docx", a file name). */
function usableTitle(t: string | null): string | null {
  if (!t) return null;
  const s = t.replace(/\s+/g, ' ').trim();
  if (
    s === '' ||
    /^untitled\b/i.test(s) ||
    /^microsoft (word|powerpoint|excel)\s*-/i.test(s) ||
    /^[\w ()-]+\.(docx?|pdf|odt|rtf|pptx?|xlsx?)$/i.test(s)
  )
    return null;
  return s;
}

function median(xs: readonly number[]): number {
  if (xs.length === 0) return 0;
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.floor(s.length / 2)]!;
}

/** A bare page number: "12", "- 12 -", "Page 12", "p. 12", "12 of 40", "Page 12 / 40". */
const PAGE_NUMBER = /^(?:[-–—]\s*)?(?:(?:page|p\.|pg\.?)\s*)?\d{1,4}(?:\s*(?:of|\/|de|sur)\s*\d{1,4})?(?:\s*[-–—])?$/i;

/**
 * Running headers and footers: a line among the first or last two of a page whose exact text recurs there on at
 * least half of the pages (three at least) is page furniture, as are bare page numbers. Dropped so they neither
 * repeat in every passage nor pass for headings. Exact text, not digits ignored: "Section 3" on page 3 is a heading.
 */
function dropFurniture(pages: readonly PdfRawPage[]): PdfRawPage[] {
  const key = (l: PdfLine): string => l.text.replace(/\s+/g, ' ').trim().toLowerCase();
  const edges = (p: PdfRawPage): PdfLine[] => (p.lines.length <= 4 ? [...p.lines] : [...p.lines.slice(0, 2), ...p.lines.slice(-2)]);
  const seen = new Map<string, number>();
  for (const p of pages) for (const k of new Set(edges(p).map(key))) seen.set(k, (seen.get(k) ?? 0) + 1);
  const minPages = Math.max(3, Math.ceil(pages.length / 2));
  return pages.map((p) => {
    const edge = new Set(edges(p));
    return {
      number: p.number,
      lines: p.lines.filter((l) => !(PAGE_NUMBER.test(l.text.trim()) || (edge.has(l) && (seen.get(key(l)) ?? 0) >= minPages))),
    };
  });
}

/**
 * Lines → blocks: a line clearly larger than the body text (at least 1.25 times the median size) and short is a heading (level 1
 * for the largest size in the document, else 2); body lines join into paragraphs until the vertical gap grows
 * beyond 1.8 lines or the size changes. Each block carries its page.
 */
function toBlocks(allPages: readonly PdfRawPage[]): (TextBlock & { page: number })[] {
  const pages = dropFurniture(allPages);
  const sizes = pages.flatMap((p) =>
    p.lines.flatMap((l) => Array<number>(Math.min(50, Math.max(1, Math.round(l.text.length / 20)))).fill(l.size)),
  );
  const body = median(sizes);
  const maxSize = Math.max(0, ...pages.flatMap((p) => p.lines.map((l) => l.size)));
  const isHeading = (l: PdfLine): boolean => body > 0 && l.size >= body * 1.25 && l.text.length <= 150;
  const out: (TextBlock & { page: number })[] = [];
  for (const p of pages) {
    let para: string[] = [];
    let prev: PdfLine | null = null;
    const flush = (): void => {
      const t = para.join(' ').replace(/\s+/g, ' ').trim();
      if (t !== '') out.push({ kind: 'text', text: t, snippetText: t, page: p.number });
      para = [];
    };
    for (const l of p.lines) {
      if (isHeading(l)) {
        flush();
        const level = l.size >= maxSize * 0.95 ? 1 : 2;
        out.push({ kind: 'heading', level, text: l.text, snippetText: l.text, page: p.number });
        prev = null;
        continue;
      }
      if (prev && (Math.abs(prev.y - l.y) > Math.max(prev.size, l.size) * 1.8 || Math.abs(prev.size - l.size) > 0.5)) flush();
      // A word hyphenated at the end of a line joins the next line's first part.
      if (para.length > 0 && /[a-zà-ÿ]-$/i.test(para[para.length - 1]!) && /^[a-zà-ÿ]/.test(l.text)) {
        para[para.length - 1] = para[para.length - 1]!.slice(0, -1) + l.text;
      } else para.push(l.text);
      prev = l;
    }
    flush();
  }
  return out;
}

/** Primary language subtag of a declared language, or null. */
function primaryLang(v: string | null | undefined): string | null {
  const p =
    (v ?? '')
      .trim()
      .toLowerCase()
      .split(/[-_,;\s]/, 1)[0] ?? '';
  return /^[a-z]{2,3}$/.test(p) ? p : null;
}

/**
 * Builds the indexable document from what the worker read. `no_text_layer` when no page had any text.
 * Title: the document's metadata title when it is a real title, else the first heading, else the first line.
 * Dates: CreationDate (published) and ModDate (modified) with source `pdf-metadata`, else Last-Modified (modified).
 * Language: the catalog's /Lang, else the Content-Language header (declarations, as for HTML pages).
 */
export function pdfDocument(
  raw: Extract<PdfRawResult, { ok: true }>,
  ctx: { headers: Readonly<Record<string, string>> },
): PdfDocument | { excluded: 'no_text_layer' } {
  let blocks = toBlocks(raw.pages);
  if (blocks.length === 0) return { excluded: 'no_text_layer' };
  // Only large type (a poster, a one-line notice): its lines are the text, not headings of nothing.
  if (!blocks.some((b) => b.kind === 'text'))
    blocks = blocks.map((b) => ({ kind: 'text', text: b.text, snippetText: b.snippetText, page: b.page }));
  const passages = buildPassages(blocks);
  const firstHeading = blocks.find((b) => b.kind === 'heading')?.text ?? null;
  const firstLine = raw.pages.flatMap((p) => p.lines)[0]?.text ?? '';
  const title = usableTitle(raw.info.title) ?? firstHeading ?? firstLine.slice(0, 200);
  const publishedAt = parsePdfDate(raw.info.creationDate);
  let modifiedAt = parsePdfDate(raw.info.modDate);
  let dateSource: DateSource = publishedAt || modifiedAt ? 'pdf-metadata' : 'none';
  if (dateSource === 'none') {
    const lm = ctx.headers['last-modified'] ? Date.parse(ctx.headers['last-modified']) : NaN;
    if (Number.isFinite(lm)) {
      modifiedAt = new Date(lm).toISOString();
      dateSource = 'http-last-modified';
    }
  }
  return {
    title,
    lang: primaryLang(raw.info.language) ?? primaryLang(ctx.headers['content-language']),
    publishedAt,
    modifiedAt,
    dateSource,
    mainText: blocks.map((b) => b.text).join('\n\n'),
    passages,
    numPages: raw.numPages,
    pagesRead: raw.pages.length,
  };
}
