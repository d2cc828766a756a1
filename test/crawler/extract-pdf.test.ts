/**
 * The PDF extractor (issue 16): pdf.js in a worker thread with caps, then the passage model with page numbers.
 * PDFs are generated here from known text (test/helpers/pdf-fixtures.ts).
 */
import { monitorEventLoopDelay } from 'node:perf_hooks';
import t from 'tap';
import { PdfExtractor, parsePdfDate, pdfDocument } from '../../crawler/extract-pdf.js';
import { plainDocument } from '../../crawler/extract-plain.js';
import { documentType } from '../../crawler/pipeline.js';
import { fillerText, makeEncryptedPdf, makePdf, makeScannedPdf } from '../helpers/pdf-fixtures.js';

const extractor = new PdfExtractor({ maxBytes: 2 * 1024 * 1024, maxPages: 200, timeoutMs: 60_000 });
t.teardown(() => extractor.close());

t.test('issue 16: a PDF with metadata: title, dates (pdf-metadata), language, text', async (t) => {
  const bytes = await makePdf(
    [
      {
        heading: 'Drinking water',
        paragraphs: ['Turbidity stayed below the limit all year in every district.', 'Chlorine residuals were measured weekly.'],
      },
    ],
    {
      title: 'Annual Water Quality Report 2025',
      author: 'Water Services',
      language: 'fr-CA',
      created: new Date('2025-02-03T04:05:06Z'),
      modified: new Date('2025-03-04T00:00:00Z'),
    },
  );
  const got = await extractor.extract(bytes);
  if (!got.ok) throw new Error(`expected ok, got ${got.reason}`);
  const doc = got.doc;
  t.equal(doc.numPages, 1);
  t.equal(doc.title, 'Annual Water Quality Report 2025', 'title from the metadata');
  t.equal(doc.publishedAt, '2025-02-03T04:05:06.000Z');
  t.equal(doc.modifiedAt, '2025-03-04T00:00:00.000Z');
  t.equal(doc.dateSource, 'pdf-metadata');
  t.equal(doc.lang, 'fr');
  t.equal(doc.passages.length, 1);
  t.same(doc.passages[0]!.headingPath, ['Drinking water']);
  t.equal(doc.passages[0]!.page, 1);
  t.equal(
    doc.passages[0]!.text,
    'Turbidity stayed below the limit all year in every district.\n\nChlorine residuals were measured weekly.',
  );
});

t.test('issue 16: without a metadata title the first heading is the title; no dates → Last-Modified', async (t) => {
  // A document claiming 1970 (as some producers do) has no usable date.
  const doc = pdfDocument(
    {
      ok: true,
      numPages: 1,
      info: {
        title: 'Microsoft Word - notice.docx',
        author: null,
        creationDate: 'D:19700101000000Z',
        modDate: null,
        language: null,
        encrypted: false,
      },
      pages: [
        {
          number: 1,
          lines: [
            { text: 'Notice of public hearing', size: 18, y: 780 },
            { text: 'The hearing is on March 3.', size: 11, y: 744 },
          ],
        },
      ],
    },
    { headers: { 'last-modified': 'Tue, 10 Feb 2026 08:00:00 GMT', 'content-language': 'en-CA' } },
  );
  if ('excluded' in doc) throw new Error('expected a document');
  t.equal(doc.title, 'Notice of public hearing', "a producer's file name is not a title");
  t.equal(doc.publishedAt, null);
  t.equal(doc.modifiedAt, '2026-02-10T08:00:00.000Z');
  t.equal(doc.dateSource, 'http-last-modified');
  t.equal(doc.lang, 'en', 'Content-Language when the document declares none');
  // The same fallbacks through the worker, which gets the response headers.
  const got = await extractor.extract(await makePdf([{ heading: 'Notice', paragraphs: ['Text.'] }]), { 'content-language': 'fr-CA' });
  t.match(got, { ok: true, doc: { lang: 'fr', title: 'Notice', dateSource: 'pdf-metadata' } });
});

t.test('issue 16: a multi-page PDF: passages stay on one page and keep its number, in order', async (t) => {
  const pages = Array.from({ length: 12 }, (_, i) => ({
    heading: `Section ${i + 1}`,
    paragraphs: [`Clause ${i + 1} marker${i + 1}.`, fillerText(i, 220)],
  }));
  const got = await extractor.extract(await makePdf(pages, { title: 'Zoning bylaw' }));
  if (!got.ok) throw new Error('expected ok');
  const doc = got.doc;
  t.equal(doc.numPages, 12);
  const pagesSeen = doc.passages.map((p) => p.page);
  t.same(
    [...new Set(pagesSeen)],
    Array.from({ length: 12 }, (_, i) => i + 1),
    'every page, in order',
  );
  t.same(
    pagesSeen,
    [...pagesSeen].sort((a, b) => a! - b!),
    'page numbers never go back',
  );
  t.same(
    doc.passages.map((p) => p.ordinal),
    [...doc.passages.keys()],
  );
  for (let i = 1; i <= 12; i++) {
    const holder = doc.passages.filter((p) => p.text.includes(`marker${i}.`));
    t.equal(holder.length, 1, `marker${i} in one passage`);
    t.equal(holder[0]!.page, i, `marker${i} on page ${i}`);
    t.same(holder[0]!.headingPath, [`Section ${i}`]);
  }
});

t.test('issue 16: running headers, footers and page numbers are page furniture, not text', async (t) => {
  const pages = Array.from({ length: 4 }, (_, i) => ({
    number: i + 1,
    lines: [
      { text: 'Town of Example — Annual Report 2025', size: 9, y: 820 },
      { text: `Body text of page ${i + 1} about the budget.`, size: 11, y: 700 },
      { text: `Page ${i + 1} of 4`, size: 9, y: 30 },
    ],
  }));
  const doc = pdfDocument(
    {
      ok: true,
      numPages: 4,
      info: { title: 'Report', author: null, creationDate: null, modDate: null, language: null, encrypted: false },
      pages,
    },
    { headers: {} },
  );
  if ('excluded' in doc) throw new Error('expected a document');
  t.same(
    doc.passages.map((p) => [p.page, p.text]),
    [1, 2, 3, 4].map((n) => [n, `Body text of page ${n} about the budget.`]),
  );
});

t.test('issue 16: a document in large type only is text, not headings of nothing', async (t) => {
  const doc = pdfDocument(
    {
      ok: true,
      numPages: 1,
      info: { title: null, author: null, creationDate: null, modDate: null, language: null, encrypted: false },
      pages: [{ number: 1, lines: [{ text: 'Road closed on Sunday', size: 40, y: 500 }] }],
    },
    { headers: {} },
  );
  if ('excluded' in doc) throw new Error('expected a document');
  t.same(
    doc.passages.map((p) => [p.page, p.text]),
    [[1, 'Road closed on Sunday']],
  );
  t.equal(doc.title, 'Road closed on Sunday');
});

t.test('issue 16: pages past maxPages are not read', async (t) => {
  const small = new PdfExtractor({ maxPages: 3 });
  t.teardown(() => small.close());
  const got = await small.extract(await makePdf(Array.from({ length: 6 }, (_, i) => ({ paragraphs: [`Page ${i + 1} text.`] }))));
  if (!got.ok) throw new Error('expected ok');
  t.equal(got.doc.numPages, 6);
  t.equal(got.doc.pagesRead, 3);
  t.same(
    got.doc.passages.map((p) => [p.page, p.text]),
    [
      [1, 'Page 1 text.'],
      [2, 'Page 2 text.'],
      [3, 'Page 3 text.'],
    ],
  );
});

t.test('issue 16: encrypted, no text layer, truncated, oversized → their reasons, and the worker goes on', async (t) => {
  const enc = await extractor.extract(await makeEncryptedPdf());
  t.match(enc, { ok: false, reason: 'encrypted' });
  t.match(await extractor.extract(await makeScannedPdf()), { ok: false, reason: 'no_text_layer' });
  const good = await makePdf([{ paragraphs: ['Intact text.'] }]);
  const truncated = await extractor.extract(good.slice(0, Math.floor(good.byteLength * 0.6)));
  t.match(truncated, { ok: false, reason: 'parse_error' });
  const garbage = await extractor.extract(new TextEncoder().encode('%PDF-1.7\nthis is not a PDF body'));
  t.match(garbage, { ok: false, reason: 'parse_error' });
  const tiny = new PdfExtractor({ maxBytes: 100 });
  t.teardown(() => tiny.close());
  t.match(await tiny.extract(good), { ok: false, reason: 'too_large' });
  const after = await extractor.extract(good);
  t.match(after, { ok: true, doc: { passages: [{ text: 'Intact text.', page: 1 }] } }, 'the next document parses normally');
});

t.test('issue 16: over the time cap → parse_error, the worker is replaced and the next document parses', async (t) => {
  const hasty = new PdfExtractor({ timeoutMs: 1 });
  t.teardown(() => hasty.close());
  const big = await makePdf(Array.from({ length: 60 }, (_, i) => ({ paragraphs: [fillerText(i, 300)] })));
  t.match(await hasty.extract(big), { ok: false, reason: 'parse_error', detail: /timeout/ });
  const patient = new PdfExtractor({ timeoutMs: 60_000 });
  t.teardown(() => patient.close());
  t.match(await patient.extract(await makePdf([{ paragraphs: ['Still fine.'] }])), { ok: true });
});

t.test('issue 16: the event loop keeps ticking while a 200-page PDF parses (off-thread)', async (t) => {
  const pages = Array.from({ length: 200 }, (_, i) => ({ heading: `Part ${i + 1}`, paragraphs: [fillerText(i, 280)] }));
  const bytes = await makePdf(pages);
  let ticks = 0;
  let running = true;
  const spin = (): void => {
    ticks++;
    if (running) setImmediate(spin);
  };
  const delay = monitorEventLoopDelay({ resolution: 1 });
  delay.enable();
  const started = performance.now();
  setImmediate(spin);
  const got = await extractor.extract(bytes);
  running = false;
  delay.disable();
  const ms = performance.now() - started;
  if (!got.ok) throw new Error(`expected ok, got ${got.reason}`);
  t.equal(got.doc.pagesRead, 200);
  t.comment(
    `200 pages (${(bytes.byteLength / 1024).toFixed(0)} KiB) parsed in ${ms.toFixed(0)} ms; meanwhile the main loop ran ${ticks} setImmediate ` +
      `turns, event-loop delay max ${(delay.max / 1e6).toFixed(1)} ms, p99 ${(delay.percentile(99) / 1e6).toFixed(1)} ms`,
  );
  // Parsing on this thread would give the loop a turn only between pdf.js's awaits (a few hundred at most for 200
  // pages); off-thread the loop is free the whole time and spins thousands of turns.
  t.ok(ticks >= 2000, `the loop kept ticking: ${ticks} turns`);
});

t.test('PDF dates parse to UTC, malformed or absent ones to null (#16)', async (t) => {
  t.equal(parsePdfDate("D:20250301103000+05'30'"), '2025-03-01T05:00:00.000Z');
  t.equal(parsePdfDate('D:2025'), '2025-01-01T00:00:00.000Z');
  t.equal(parsePdfDate('D:20251301'), null, 'month 13');
  t.equal(parsePdfDate('garbage'), null);
  t.equal(parsePdfDate(null), null);
});

t.test('issue 16: document type from Content-Type first, URL extension as fallback', async (t) => {
  t.same(documentType('application/pdf', 'http://a.test/download?id=3'), { mime: 'application/pdf', indexed: 'pdf', filetype: 'pdf' });
  t.same(documentType('application/octet-stream', 'http://a.test/r.PDF'), {
    mime: 'application/octet-stream',
    indexed: 'pdf',
    filetype: 'pdf',
  });
  t.same(documentType('', 'http://a.test/notes.txt'), { mime: '', indexed: 'txt', filetype: 'txt' });
  t.same(documentType('text/html; charset=utf-8', 'http://a.test/page.php'), { mime: 'text/html', indexed: 'html', filetype: 'html' });
  t.same(documentType('text/markdown', 'http://a.test/readme'), { mime: 'text/markdown', indexed: 'md', filetype: 'md' });
  t.same(
    documentType('text/plain', 'http://a.test/x.md'),
    { mime: 'text/plain', indexed: 'txt', filetype: 'txt' },
    "the server's type wins",
  );
  t.same(documentType('application/zip', 'http://a.test/a.zip'), { mime: 'application/zip', indexed: null, filetype: 'zip' });
  t.same(documentType('', 'http://a.test/page'), { mime: '', indexed: 'html', filetype: 'html' });
});

t.test('issue 16: plain text and Markdown documents', async (t) => {
  const md = plainDocument(
    '# Composting guide\n\nA short guide to **backyard composting**.\n\n## Green bin\n\nPut peels in the [green bin](/x).\n\n- dry leaves\n- cardboard\n',
    true,
  );
  t.equal(md.title, 'Composting guide');
  t.same(
    md.passages.map((p) => [p.headingPath, p.text]),
    [
      [['Composting guide'], 'A short guide to backyard composting.'],
      [['Composting guide', 'Green bin'], 'Put peels in the green bin.\n\ndry leaves\n\ncardboard'],
    ],
  );
  const txt = plainDocument('Snow removal notes\n\nPlows clear\narterial roads first.\n', false);
  t.equal(txt.title, 'Snow removal notes');
  t.same(
    txt.passages.map((p) => p.text),
    ['Snow removal notes\n\nPlows clear arterial roads first.'],
  );
  t.equal(txt.passages[0]!.page, undefined, 'no page numbers outside paged documents');
});
