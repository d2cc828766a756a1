/**
 * Worker thread of the PDF extractor (extract-pdf.ts): parses one document with pdf.js and posts back its passages.
 * Off the main thread because pdf.js parses synchronously and a long PDF would hold the crawler's loop for seconds;
 * the parent caps time and memory, this side pages, and pdf.js may not eval code, load fonts or fetch.
 */
import { parentPort } from 'node:worker_threads';
import {
  pdfDocument,
  type PdfLine,
  type PdfRawPage,
  type PdfRawResult,
  type PdfWorkerReply,
  type PdfWorkerRequest,
} from './extract-pdf.js';

// pdf.js warns on stderr about fonts it cannot load; verbosity 0 keeps the crawler's output its own.
const { getDocument, VerbosityLevel } = await import('pdfjs-dist/legacy/build/pdf.mjs');

interface TextItemLike {
  str?: string;
  hasEOL?: boolean;
  transform?: number[];
  height?: number;
}

/** pdf.js text items → lines (a line ends at hasEOL or when the baseline moves). */
function toLines(items: readonly TextItemLike[]): PdfLine[] {
  const lines: PdfLine[] = [];
  let text = '';
  let size = 0;
  let y: number | null = null;
  const flush = (): void => {
    const t = text.replace(/\s+/g, ' ').trim();
    if (t !== '') lines.push({ text: t, size: Math.round(size * 10) / 10, y: y ?? 0 });
    text = '';
    size = 0;
  };
  for (const it of items) {
    if (typeof it.str !== 'string') continue; // marked-content markers
    const tr = it.transform ?? [];
    const itemY: number = tr[5] ?? y ?? 0;
    const itemSize: number = Math.abs(tr[3] ?? 0) || Math.abs(tr[0] ?? 0) || it.height || 0;
    if (text !== '' && y !== null && Math.abs(itemY - y) > Math.max(1, itemSize * 0.5)) flush();
    if (it.str !== '') {
      if (text === '') y = itemY;
      text += it.str;
      size = Math.max(size, itemSize);
    }
    if (it.hasEOL) {
      if (text !== '') flush();
      else text += ' ';
    }
  }
  flush();
  return lines;
}

async function parse(req: PdfWorkerRequest): Promise<PdfRawResult> {
  let doc;
  try {
    doc = await getDocument({
      data: new Uint8Array(req.data),
      isEvalSupported: false,
      disableFontFace: true,
      useSystemFonts: false,
      useWorkerFetch: false,
      disableAutoFetch: true,
      disableStream: true,
      stopAtErrors: false,
      verbosity: VerbosityLevel.ERRORS,
    }).promise;
  } catch (err) {
    const name = (err as Error)?.name ?? '';
    // A PasswordException: the document needs a user password (its text is encrypted for us).
    if (name === 'PasswordException') return { ok: false, reason: 'encrypted', detail: 'password required' };
    return { ok: false, reason: 'parse_error', detail: `${name}: ${(err as Error)?.message ?? String(err)}`.slice(0, 200) };
  }
  try {
    const meta = await doc.getMetadata().catch(() => null);
    const info = (meta?.info ?? {}) as Record<string, unknown>;
    const str = (k: string): string | null =>
      typeof info[k] === 'string' && (info[k] as string).trim() !== '' ? (info[k] as string).trim() : null;
    const pages: PdfRawPage[] = [];
    const n = Math.min(doc.numPages, req.maxPages);
    for (let i = 1; i <= n; i++) {
      const page = await doc.getPage(i);
      const content = await page.getTextContent();
      pages.push({ number: i, lines: toLines(content.items as TextItemLike[]) });
      page.cleanup();
    }
    return {
      ok: true,
      numPages: doc.numPages,
      info: {
        title: str('Title'),
        author: str('Author'),
        creationDate: str('CreationDate'),
        modDate: str('ModDate'),
        language: str('Language'),
        encrypted: str('EncryptFilterName') !== null,
      },
      pages,
    };
  } catch (err) {
    const name = (err as Error)?.name ?? '';
    return { ok: false, reason: 'parse_error', detail: `${name}: ${(err as Error)?.message ?? String(err)}`.slice(0, 200) };
  } finally {
    await doc.destroy().catch(() => undefined);
  }
}

async function handle(req: PdfWorkerRequest): Promise<PdfWorkerReply> {
  const raw = await parse(req);
  if (!raw.ok) return { id: req.id, ...raw };
  try {
    const doc = pdfDocument(raw, { headers: req.headers });
    if ('excluded' in doc) return { id: req.id, ok: false, reason: doc.excluded, detail: `${raw.numPages} page(s) without text` };
    return { id: req.id, ok: true, doc };
  } catch (err) {
    return { id: req.id, ok: false, reason: 'parse_error', detail: `passages: ${(err as Error)?.message ?? String(err)}`.slice(0, 200) };
  }
}

parentPort?.on('message', (req: PdfWorkerRequest) => {
  void handle(req).then((reply) => parentPort?.postMessage(reply));
});
parentPort?.postMessage({ ready: true });
