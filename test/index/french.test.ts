/**
 * Issue 15: French pages and queries are analysed as French (accents folded, French stemming and stop words)
 * without hurting English. Real French text: trafilatura's evaluation pages (../shared/data/web/trafilatura-eval)
 * through our own extractor, and French facility names from the ODCAF open data.
 */
import t from 'tap';
import { readFileSync } from 'node:fs';
import { gunzipSync } from 'node:zlib';
import { fileURLToPath } from 'node:url';
import {
  analyze,
  declaredAnalysis,
  detectLang,
  passageAnalyses,
  queryLangs,
  queryTerms,
  titleAnalysis,
} from '../../index/retrieval/analyzer.js';
import { extractPage } from '../../crawler/extract.js';
import { hydrate, retrieve } from '../../index/retrieval/retrieval.js';
import { PassageIndex } from '../../index/engines/lance/store.js';
import type { PageInput } from '../../page-model.js';
import { makePage } from '../helpers/page-input.js';

const SHARED = fileURLToPath(new URL('../../../shared/data/', import.meta.url));

t.test('analyzer: folding, French stop words and stems, English untouched, each language its own terms', async (t) => {
  t.same(analyze("Les écoles de l'Outaouais", 'fr'), ['fr:ecol', 'fr:outaou']);
  t.same(analyze('Les ECOLES', 'fr'), analyze('les écoles', 'fr'), 'accents and case fold');
  t.same(analyze('hôpitaux hôpital', 'fr'), ['fr:hopital', 'fr:hopital']);
  t.same(analyze('Collectes', 'fr'), ['fr:collect']);
  t.same(analyze('The libraries of the city', 'en'), ['librari', 'citi']);
  t.same(analyze('collecting', 'en'), ['collect'], 'the English stem of "collecting" is not the French one of "collectes"');
  t.same(analyze('Die Stadtbibliothek und die Schulen', 'neutral'), ['=:die', '=:stadtbibliothek', '=:und', '=:die', '=:schulen']);
  t.equal(declaredAnalysis('fr-CA'), 'fr');
  t.equal(declaredAnalysis('en'), 'en');
  t.equal(declaredAnalysis('de'), 'neutral', 'a language without a stemmer here: neutral');
  t.equal(declaredAnalysis(null), null, 'none declared: the text tells');
  t.same(queryLangs('les collectes des ordures'), ['fr']);
  t.same(queryLangs('when are the garbage collections'), ['en']);
  t.same(queryLangs('quand passe le camion'), ['fr'], 'a French question word');
  t.same(queryLangs('collectes'), ['en', 'fr'], 'no signal: read both ways');
  t.same(queryLangs('école Montréal'), ['en', 'fr'], 'letters alone do not decide: English pages name Montréal too');
  t.same(queryTerms('collectes', ['en', 'fr']), ['collect', 'fr:collect', '=:collectes']);
  t.same(queryTerms('collectes', ['fr']), ['fr:collect', '=:collectes']);
  t.same(queryTerms('montreal', ['en']), ['montreal', 'fr:montreal', '=:montreal'], 'a name no stemmer changes: every language');
  t.same(queryTerms('2019', ['fr']), ['2019', 'fr:2019', '=:2019'], 'a number too');
  t.same(queryTerms('on', ['en', 'fr']), [], 'a stop word of every reading');
  t.same(queryTerms('d', ['en', 'fr']), ['d', '=:d'], 'a word only French drops ("vitamin D") is kept');
});

t.test('language detection of a passage: declared language first, then its text, then its page', async (t) => {
  t.equal(detectLang('Les collectes des matières résiduelles ont lieu le lundi.'), 'fr');
  t.equal(detectLang('The collection of residual materials takes place on Monday.'), 'en');
  t.equal(detectLang('BMP receptor ALK3 controls collecting system development'), null, 'no function words: unknown');
  t.equal(detectLang('Montréal, Québec'), null, 'letters alone are not enough');
  t.same(
    passageAnalyses(null, 'Horaire', ['Lundi, mardi', 'La collecte des ordures a lieu le lundi dans le quartier.']),
    ['fr', 'fr'],
    'a passage that does not tell takes its page language',
  );
  t.same(passageAnalyses('en', 'Horaire', ['La collecte des ordures a lieu le lundi.']), ['en'], 'the declared language first');
  t.same(passageAnalyses(null, 'ALK3', ['BMP ALK3 Wnt']), ['neutral'], 'nothing tells: neutral');
  t.equal(titleAnalysis('BMP receptor ALK3 controls collecting system development', null), 'en', 'a title that does not tell: English');
  t.equal(titleAnalysis('Collectes des matières résiduelles', null), 'fr');
});

function frenchPage(path: string, ref: number, url: string): PageInput {
  const html = gunzipSync(readFileSync(`${SHARED}web/trafilatura-eval/${path}`)).toString('utf8');
  const x = extractPage(html, { url });
  t.equal(x.lang, 'fr', `${path} is detected as French`);
  return makePage(
    ref,
    new URL(url).host,
    x.passages.map((p) => p.text),
    { title: x.title, lang: 'fr', url },
  );
}

t.test('issue 15: French queries on real French pages, beside English pages', async (t) => {
  const idx = await PassageIndex.open({ dir: t.testdir(), embedder: null });
  t.teardown(() => idx.close());
  const trott = frenchPage(
    'html/eval/ledevoir.com.trottinettes.html.gz',
    1,
    'https://www.ledevoir.com/politique/montreal/573258/la-fin-des-trottinettes',
  );
  const glypho = frenchPage('html/eval/lopinion.fr.glyphosate.html.gz', 2, 'https://www.lopinion.fr/edition/economie/glyphosate');
  const pages: PageInput[] = [
    trott,
    glypho,
    makePage(
      3,
      'www.ville.gatineau.qc.ca',
      ['Les collectes des matières résiduelles ont lieu le lundi. Le calendrier des collectes de recyclage et de compost est en ligne.'],
      {
        title: 'Collectes des matières résiduelles',
        lang: 'fr',
      },
    ),
    makePage(
      4,
      'www.example.com',
      [
        'Our volunteers spent the weekend collecting signatures downtown, then went home to watch the game and talk about scooters and the city council.',
      ],
      {
        title: 'Weekend notes',
        lang: 'en',
      },
    ),
    makePage(
      5,
      'www.ottawa.ca',
      ['Garbage and recycling collection schedules for every Ottawa neighbourhood, and what goes in the green bin.'],
      {
        title: 'Garbage and recycling collection',
        lang: 'en',
      },
    ),
  ];
  await idx.upsertPages(pages);
  await idx.optimize();
  const top = async (q: string) => (await retrieve(idx, { query: q, mode: 'bm25' })).passages.map((p) => p.row.page_ref);

  // A word that tells no language is read both ways; which page wins then rests on each reading's statistics
  // (test/index/language-analysis.test.ts, on a corpus of real size). Read as French, it never meets English stems.
  t.ok((await top('collectes')).includes(3), 'collectes: the French page is found');
  const french = await top('les collectes');
  t.equal(french[0], 3, 'read as French: the page about Collectes first');
  t.notOk(french.includes(4) || french.includes(5), 'and the English pages that hold "collecting" or "collection" do not match at all');
  t.equal((await top('calendrier des collectes'))[0], 3, 'French question form');
  t.equal((await top('trottinettes Montréal'))[0], 1, 'real French article: plural and accented');
  t.equal((await top('trottinette montreal'))[0], 1, 'singular and without the accent: the same page');
  t.equal((await top('glyphosate Monsanto'))[0], 2);
  t.equal((await top('quand sont les collectes de recyclage?'))[0], 3, 'French stop and question words do not drive the ranking');
  t.equal((await top('garbage collection schedule'))[0], 5, 'English still ranks English pages by English stems');
  t.equal((await top('recycling collections'))[0], 5, 'English plural: English stemming');
  // Operators stay exact in French too.
  const rows = await hydrate(idx, (await retrieve(idx, { query: '"matières résiduelles" -recyclage', mode: 'bm25' })).passages);
  t.same(
    rows.map((r) => r.row.page_ref),
    [],
    'the only page with the phrase also says recyclage: excluded',
  );
  t.same(await top('"matieres residuelles"'), [3], 'a phrase typed without accents matches the accented text');
});

t.test('issue 15: French facility names from ODCAF (real open data) are found by French and unaccented queries', async (t) => {
  const lines = gunzipSync(readFileSync(`${SHARED}ca-open-data/odcaf/ODCAF_v1.0.utf8.csv.gz`))
    .toString('utf8')
    .split('\n');
  const header = lines[0]!.split(',');
  const col = (name: string) => header.indexOf(name);
  const rows = lines
    .slice(1)
    .map((l) => l.split(','))
    .filter((c) => c[col('Prov_Terr')] === 'qc' && /^Biblioth[eè]que /i.test(c[col('Facility_Name')] ?? ''))
    .slice(0, 30);
  t.ok(rows.length >= 10, `${rows.length} Quebec libraries named "Bibliothèque …"`);
  const english = lines
    .slice(1)
    .map((l) => l.split(','))
    .filter((c) => c[col('Prov_Terr')] === 'on' && /library/i.test(c[col('Facility_Name')] ?? ''))
    .slice(0, 30);
  const idx = await PassageIndex.open({ dir: t.testdir(), embedder: null });
  t.teardown(() => idx.close());
  const pages = [
    ...rows.map((c, i) =>
      makePage(i + 1, 'donnees.example.qc.ca', [`${c[col('Facility_Name')]}, ${c[col('City')]}.`], {
        title: c[col('Facility_Name')]!,
        lang: 'fr',
      }),
    ),
    ...english.map((c, i) =>
      makePage(100 + i, 'data.example.on.ca', [`${c[col('Facility_Name')]}, ${c[col('City')]}.`], {
        title: c[col('Facility_Name')]!,
        lang: 'en',
      }),
    ),
  ];
  await idx.upsertPages(pages);
  await idx.optimize();
  const refs = async (q: string) => (await retrieve(idx, { query: q, mode: 'bm25' })).passages.map((p) => p.row.page_ref);
  const accented = await refs('bibliothèques');
  t.equal(accented.filter((r) => r <= rows.length).length, rows.length, 'every "Bibliothèque …" page for the plural query');
  t.same(await refs('bibliotheque'), accented, 'the same without the accent');
  const inGatineau = new Set(rows.flatMap((c, i) => (c[col('City')] === 'gatineau' ? [i + 1] : [])));
  t.ok(inGatineau.size > 0, 'the sample holds Gatineau libraries');
  const withCity = await refs('bibliothèque gatineau');
  t.ok(
    withCity.slice(0, inGatineau.size).every((r) => inGatineau.has(r)),
    'with the city: the Gatineau libraries first',
  );
  const libraries = await refs('libraries');
  t.ok(
    libraries.length >= english.length && libraries.slice(0, english.length).every((r) => r >= 100),
    'English "libraries" finds the English library pages',
  );
});
