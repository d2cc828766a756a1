/**
 * Each text is analysed in its own language, through the real index: SciFact abstracts (English, no declared language)
 * beside the fixture web's pages (French and English, declared), read by the crawler's own extractor. A query whose
 * language is unclear is read in every language, each reading with its own statistics; a French reading never matches
 * an English word, and the reverse.
 */
import t from 'tap';
import { readFileSync, readdirSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { corpusPage, readCorpus } from '../../cli/ingest.js';
import { extractPage } from '../../crawler/extract.js';
import { analyze, passageAnalyses, queryTerms, stem, wordTokens, STOP_WORDS } from '../../index/retrieval/analyzer.js';
import { retrieve } from '../../index/retrieval/retrieval.js';
import { PassageIndex } from '../../index/engines/lance/store.js';
import type { PageInput } from '../../page-model.js';
import { makePage } from '../helpers/page-input.js';

const CORPUS = fileURLToPath(new URL('../../../shared/data/beir/scifact/corpus.jsonl.gz', import.meta.url));
const SITES = fileURLToPath(new URL('../../fixtures/test-web/sites/', import.meta.url));
/** Fixture web pages get refs from here up; SciFact abstracts below. */
const WEB_REF = 100_000;

function htmlFiles(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const p = join(dir, name);
    return statSync(p).isDirectory() ? htmlFiles(p) : p.endsWith('.html') ? [p] : [];
  });
}

/** The fixture web's pages as the crawler's extractor reads them (declared languages kept). */
function webPages(): PageInput[] {
  return htmlFiles(SITES).flatMap((file, i) => {
    const rel = file.slice(SITES.length);
    const host = rel.split('/')[0]!;
    const url = `https://${rel}`;
    const x = extractPage(readFileSync(file, 'utf8'), { url });
    if (x.passages.length === 0) return [];
    return [
      makePage(
        WEB_REF + i,
        host,
        x.passages.map((p) => p.text),
        { title: x.title, lang: x.lang, url },
      ),
    ];
  });
}

/** SciFact: the first 600 abstracts, and every one that says "collect…" (the English stem French "collectes" shares). */
async function scifactPages(): Promise<PageInput[]> {
  const pages: PageInput[] = [];
  let i = 0;
  for await (const doc of readCorpus(CORPUS)) {
    i++;
    if (i <= 600 || /\bcollect/i.test(`${doc.title} ${doc.text}`)) pages.push(corpusPage(doc, i, 'scifact', '2026-11-20T00:00:00Z'));
  }
  return pages;
}

t.test('languages through the real index: SciFact beside the fixture web', async (t) => {
  const web = webPages();
  const scifact = await scifactPages();
  const quebec = web.find((p) => p.url.endsWith('/services/collectes.html'));
  t.ok(quebec, 'the fixture web has the Québec collection page');
  t.ok(
    scifact.some((p) => p.title.startsWith('BMP receptor ALK3 controls collecting system')),
    'the English abstract the French word used to find first is in the corpus',
  );
  const idx = await PassageIndex.open({ dir: t.testdir(), embedder: null });
  t.teardown(() => idx.close());
  await idx.upsertPages([...scifact, ...web]);
  await idx.optimize();
  const refs = async (q: string) => (await retrieve(idx, { query: q, mode: 'bm25' })).passages.map((p) => p.row.page_ref);
  const isWeb = (ref: number) => ref >= WEB_REF;
  const frenchRefs = new Set(web.filter((p) => p.lang?.startsWith('fr')).map((p) => p.pageRef));

  const collectes = await refs('collectes');
  t.equal(collectes[0], quebec!.pageRef, '"collectes" puts the Québec page first');
  t.ok(collectes.filter((r) => !isWeb(r)).length > 0, 'read both ways, it still finds English "collect…" abstracts, below');

  // A French reading never matches an English word that stems alike, and the reverse.
  const french = await refs('les collectes des ordures');
  t.ok(french.length > 0 && french.every((r) => frenchRefs.has(r)), 'a French query: only French pages');
  const frenchExpression = await refs("l'expression des cellules");
  t.ok(
    frenchExpression.every((r) => frenchRefs.has(r)),
    'French "expression", "cellules" do not match English abstracts',
  );
  const english = await refs('the collection of cells in the collecting system');
  t.ok(english.length > 0, 'an English query finds English abstracts');
  t.notOk(
    english.some((r) => frenchRefs.has(r)),
    'and never a French page, though "collection" and "collectes" share a stem',
  );
  t.equal(english[0], scifact.find((p) => p.title.startsWith('BMP receptor ALK3'))!.pageRef, 'the collecting-system abstract first');
});

t.test('English text is analysed as before: detected English, the same stems, English queries unaffected', async (t) => {
  const scifact = (await scifactPages()).slice(0, 300);
  const passages = scifact.flatMap((p) =>
    passageAnalyses(
      p.lang,
      p.title,
      p.passages.map((s) => s.text),
    ),
  );
  const english = passages.filter((a) => a === 'en').length;
  t.ok(english >= 0.99 * passages.length, `${english} of ${passages.length} SciFact passages detected English`);
  // The English analysis is the plain pipeline: fold, English stop words out, Snowball English, no tag.
  const texts = scifact.slice(0, 50).map((p) => p.passages[0]!.text);
  const plain = texts.map((text) =>
    wordTokens(text)
      .filter((w) => w.length <= 40 && !STOP_WORDS.en.has(w))
      .map((w) => stem(w, 'en')),
  );
  t.same(
    texts.map((text) => analyze(text, 'en')),
    plain,
    'untagged English stems',
  );
  t.same(queryTerms('expression', ['en']), ['express', '=:expression'], 'an English query word: its English stem first');
});
