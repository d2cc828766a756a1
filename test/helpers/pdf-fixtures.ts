/**
 * PDFs for tests and benchmarks, written at run time from known text with pdf-lib (so recall can be measured
 * against exactly what the generator put in). Nothing here is stored in the repository.
 */
import { randomBytes } from 'node:crypto';
import { PDFDocument, PDFName, PDFHexString, PDFNumber, StandardFonts, rgb, type PDFFont, type PDFPage } from 'pdf-lib';

/** What a generated page holds. */
export interface GenPage {
  readonly heading?: string;
  readonly paragraphs: readonly string[];
}

/** Options of {@link makePdf}. */
export interface GenOptions {
  readonly title?: string;
  readonly author?: string;
  readonly language?: string;
  readonly created?: Date;
  readonly modified?: Date;
}

/** Greedy word wrap at a width in points. */
function wrap(text: string, font: PDFFont, size: number, width: number): string[] {
  const lines: string[] = [];
  let cur = '';
  for (const w of text.split(/\s+/)) {
    const next = cur === '' ? w : `${cur} ${w}`;
    if (cur !== '' && font.widthOfTextAtSize(next, size) > width) {
      lines.push(cur);
      cur = w;
    } else cur = next;
  }
  if (cur !== '') lines.push(cur);
  return lines;
}

function drawPage(page: PDFPage, p: GenPage, font: PDFFont, bold: PDFFont): void {
  let y = 780;
  if (p.heading) {
    page.drawText(p.heading, { x: 50, y, size: 18, font: bold });
    y -= 36;
  }
  for (const para of p.paragraphs) {
    for (const line of wrap(para, font, 11, 495)) {
      if (y < 40) return;
      page.drawText(line, { x: 50, y, size: 11, font });
      y -= 14;
    }
    y -= 10;
  }
}

/** A text PDF: one page per entry (text that does not fit a page is cut), with the given metadata. */
export async function makePdf(pages: readonly GenPage[], opts: GenOptions = {}): Promise<Uint8Array> {
  const doc = await PDFDocument.create();
  // pdf-lib stamps "now" unless told otherwise; a fixed date keeps outputs reproducible.
  doc.setCreationDate(opts.created ?? new Date('2020-01-01T00:00:00Z'));
  doc.setModificationDate(opts.modified ?? opts.created ?? new Date('2020-01-01T00:00:00Z'));
  if (opts.title) doc.setTitle(opts.title);
  if (opts.author) doc.setAuthor(opts.author);
  if (opts.language) doc.setLanguage(opts.language);
  const font = await doc.embedFont(StandardFonts.Helvetica);
  const bold = await doc.embedFont(StandardFonts.HelveticaBold);
  for (const p of pages) drawPage(doc.addPage([595, 842]), p, font, bold);
  return doc.save();
}

/** A PDF without a text layer: pages of drawn shapes only, as a scan without OCR looks to a text extractor. */
export async function makeScannedPdf(pageCount = 2): Promise<Uint8Array> {
  const doc = await PDFDocument.create();
  doc.setTitle('Scanned notice');
  for (let i = 0; i < pageCount; i++) {
    const page = doc.addPage([595, 842]);
    for (let r = 0; r < 30; r++)
      page.drawRectangle({ x: 50, y: 780 - r * 24, width: 300 + ((r * 37) % 190), height: 9, color: rgb(0.1, 0.1, 0.1) });
  }
  return doc.save();
}

/**
 * A PDF encrypted for a user password (Standard security handler, RC4 40-bit, R2): the /Encrypt dictionary's U
 * entry does not verify against the empty password, so a reader must ask for one. The content is left as written,
 * which is what a reader without the password sees: nothing it may decrypt.
 */
export async function makeEncryptedPdf(): Promise<Uint8Array> {
  const doc = await PDFDocument.create();
  doc.setTitle('Confidential minutes');
  const font = await doc.embedFont(StandardFonts.Helvetica);
  doc.addPage().drawText('Confidential minutes of the closed session.', { x: 50, y: 700, size: 12, font });
  const ctx = doc.context;
  const encrypt = ctx.obj({
    Filter: PDFName.of('Standard'),
    V: PDFNumber.of(1),
    R: PDFNumber.of(2),
    Length: PDFNumber.of(40),
    P: PDFNumber.of(-44),
    O: PDFHexString.of(randomBytes(32).toString('hex')),
    U: PDFHexString.of(randomBytes(32).toString('hex')),
  });
  ctx.trailerInfo.Encrypt = ctx.register(encrypt);
  ctx.trailerInfo.ID = ctx.obj([PDFHexString.of(randomBytes(16).toString('hex')), PDFHexString.of(randomBytes(16).toString('hex'))]);
  // Object streams would themselves need decrypting to find the Encrypt dictionary: write a classic xref table.
  return doc.save({ useObjectStreams: false });
}

/** Deterministic filler words (seeded), so recall can be checked against the exact text. */
export function fillerText(seed: number, words: number): string {
  const vocab = [
    'council',
    'bylaw',
    'water',
    'budget',
    'municipal',
    'report',
    'school',
    'health',
    'notice',
    'permit',
    'road',
    'park',
    'service',
    'resident',
    'committee',
    'meeting',
    'zoning',
    'library',
    'transit',
    'waste',
    'recycling',
    'tax',
    'fire',
    'police',
    'housing',
    'grant',
    'program',
    'survey',
    'annual',
    'quarterly',
    'provincial',
    'federal',
    'regional',
  ];
  let x = seed * 2654435761 + 1;
  const out: string[] = [];
  for (let i = 0; i < words; i++) {
    x = (x * 1103515245 + 12345) & 0x7fffffff;
    out.push(vocab[x % vocab.length]!);
  }
  return out.join(' ');
}
