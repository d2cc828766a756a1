/**
 * Issue 16: the crawler pipeline with PDFs — a long extraction and index write keep the item's frontier lease, so
 * the URL is fetched once and completes (without the renewals it was handed out again and failed with a lost lease).
 */
import t from 'tap';
import { join } from 'node:path';
import { loadConfig } from '../../config.js';
import { createCrawler, type Crawler } from '../../crawler/crawler.js';
import type { ItemOutcome } from '../../crawler/pipeline.js';
import { PassageIndex } from '../../index/engines/lance/store.js';
import { openStateDb } from '../../state/db.js';
import { Documents } from '../../state/documents.js';
import { EntityStore } from '../../state/entities.js';
import { startTestWeb } from '../../fixtures/test-web/index.js';
import { fillerText, makePdf } from '../helpers/pdf-fixtures.js';
import { PdfExtractor } from '../../crawler/extract-pdf.js';
import { sqliteRepositories } from '../../state/repos/sqlite.js';

t.test('issue 16: a PDF whose extraction outlasts the lease is fetched once and completes', async (t) => {
  const long = await makePdf(
    Array.from({ length: 100 }, (_, i) => ({ heading: `Chapter ${i + 1}`, paragraphs: [fillerText(i, 300)] })),
    { title: 'Long plan' },
  );
  const web = await startTestWeb({ generatedHosts: 0, documents: { '/plan.pdf': { type: 'application/pdf', body: Buffer.from(long) } } });
  t.teardown(() => web.close());
  const dir = t.testdir();
  const config = loadConfig({ env: {}, flags: { dataDir: dir, resolve: web.pins, crawlAllowLoopback: true, crawlGapMs: 10 } });
  const db = openStateDb(join(dir, 'state.sqlite'));
  const index = await PassageIndex.open({ dir: join(dir, 'lance'), embedder: null });
  const documents = new Documents(db);
  // A lease much shorter than the extraction of 100 pages : only renewals keep the item.
  const crawler: Crawler = createCrawler({
    config,
    repos: sqliteRepositories(db, { defaultGapMs: config.crawlGapMs }),
    sink: index,
    entities: new EntityStore(db),
    frontier: { leaseMs: 600 },
    // The extraction cap is not what is tested: a loaded machine must not turn a slow parse into a parse_error.
    pdf: new PdfExtractor({ timeoutMs: 120_000 }),
  });
  t.teardown(async () => {
    await crawler.stop();
    await index.close();
    db.close();
  });
  const outcomes: ItemOutcome[] = [];
  crawler.onItem((o) => outcomes.push(o));
  const url = web.url('docs.test', '/plan.pdf');
  await crawler.enqueue(url, { priority: 'submitted', reason: 'seed' });
  const started = Date.now();
  await crawler.runUntilIdle({ timeoutMs: 120_000 });
  t.comment(`extraction and indexing took ${Date.now() - started} ms against a 600 ms lease`);
  t.equal(web.requests('docs.test', '/plan.pdf').length, 1, 'fetched once');
  t.same(
    outcomes.filter((o) => o.url === url).map((o) => o.outcome),
    ['indexed'],
  );
  const doc = documents.byUrl(url)!;
  t.equal(doc.status, 'indexed');
  t.equal(doc.title, 'Long plan');
  const passages = await index.pagePassages(doc.pageRef, 0, 1000);
  t.equal(passages?.passages.at(-1)?.page, 100, 'the last passage is on page 100');
});
