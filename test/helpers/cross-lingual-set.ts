/**
 * The French and cross-lingual checks (issue 45): real French and English pages, and questions in the other language
 * (and a few in the page's own French) whose answer is one known page. Shared by test/tools/search-cross-lingual.test.ts
 * and bench/cross-lingual.ts, so the test and the per-model figures ask the same questions.
 *
 * Pages: trafilatura's evaluation pages (../shared/data/web/trafilatura-eval) through our own extractor, and facility
 * names from ODCAF (../shared/data/ca-open-data).
 */
import { readFileSync } from 'node:fs';
import { gunzipSync } from 'node:zlib';
import { fileURLToPath } from 'node:url';
import { extractPage } from '../../crawler/extract.js';
import type { PageInput } from '../../page-model.js';
import { makePage } from './page-input.js';

const SHARED = fileURLToPath(new URL('../../../shared/data/', import.meta.url));

/** A real page through svc's extractor: its title and first passages (enough to answer, few to embed). */
function webPage(ref: number, path: string, url: string, lang: 'fr' | 'en'): { page: PageInput; detected: string | null } {
  const x = extractPage(gunzipSync(readFileSync(`${SHARED}web/trafilatura-eval/${path}`)).toString('utf8'), { url });
  const page = makePage(
    ref,
    new URL(url).host,
    x.passages.slice(0, 2).map((p) => p.text),
    { title: x.title, lang, url },
  );
  return { page, detected: x.lang };
}

/** ODCAF rows by their Index column: each a page titled with the facility's own name. */
function facilityPages(firstRef: number, indexes: readonly string[]): Map<string, PageInput> {
  const lines = gunzipSync(readFileSync(`${SHARED}ca-open-data/odcaf/ODCAF_v1.0.utf8.csv.gz`))
    .toString('utf8')
    .split('\n');
  const header = lines[0]!.split(',');
  const col = (name: string) => header.indexOf(name);
  const out = new Map<string, PageInput>();
  for (const line of lines.slice(1)) {
    const c = line.split(',');
    const at = indexes.indexOf(c[0]!);
    if (at < 0) continue;
    const name = c[col('Facility_Name')]!;
    const ref = firstRef + at;
    out.set(
      c[0]!,
      makePage(ref, 'donnees.example.qc.ca', [`${name}, ${c[col('City')]}.`], {
        title: name,
        lang: 'fr',
        url: `https://donnees.example.qc.ca/odcaf/${c[0]}`,
      }),
    );
  }
  return out;
}

/** One question and the URL of the one page that answers it. */
export type Check = readonly [question: string, url: string];

export interface CrossLingualSet {
  /** The real web pages, in order: three French, four English. */
  readonly web: readonly PageInput[];
  /** Each web page's language as the extractor detects it, and the language it should be. */
  readonly detected: readonly { readonly path: string; readonly detected: string | null; readonly want: 'fr' | 'en' }[];
  /** ODCAF facilities by Index: Québec archives (the answer and two distractors), an amphitheatre, a sugar shack, two archives with English names. */
  readonly facilities: ReadonlyMap<string, PageInput>;
  /** English questions answered by a French page. */
  readonly enToFr: readonly Check[];
  /** French questions answered by an English page. */
  readonly frToEn: readonly Check[];
  /** French questions answered by a French page. */
  readonly frToFr: readonly Check[];
}

/** Reads the pages and builds the questions. */
export function crossLingualSet(): CrossLingualSet {
  const sources: [number, string, string, 'fr' | 'en'][] = [
    [1, 'html/eval/ledevoir.com.trottinettes.html.gz', 'https://www.ledevoir.com/politique/montreal/573258/trottinettes', 'fr'],
    [2, 'html/eval/lopinion.fr.glyphosate.html.gz', 'https://www.lopinion.fr/edition/economie/glyphosate', 'fr'],
    [3, 'html/eval/sciencesetavenir.fr.rumeur.html.gz', 'https://www.sciencesetavenir.fr/sante/rumeur', 'fr'],
    [4, 'html/eval/japantimes.co.jp.surgical.html.gz', 'https://www.japantimes.co.jp/news/surgical', 'en'],
    [5, 'html/eval/timesofisrael.com.washington.html.gz', 'https://www.timesofisrael.com/washington', 'en'],
    [6, 'html/eval/thelocal.se.tattooed.html.gz', 'https://www.thelocal.se/tattooed', 'en'],
    [7, 'html/eval/tofugu.com.dezuka-suisan.html.gz', 'https://www.tofugu.com/travel/dezuka-suisan', 'en'],
  ];
  const built = sources.map(([ref, path, url, lang]) => ({ path, lang, ...webPage(ref, path, url, lang) }));
  const web = built.map((b) => b.page);
  const facilities = facilityPages(20, ['350', '351', '355', '274', '83', '363', '367']);
  const fac = (i: string) => facilities.get(i)?.url ?? `missing ODCAF row ${i}`;
  return {
    web,
    detected: built.map((b) => ({ path: b.path, detected: b.detected, want: b.lang })),
    facilities,
    enToFr: [
      ['Why did Montreal stop allowing shared electric scooters?', web[0]!.url],
      ['How did an environmental group turn a weed killer into a symbol of evil?', web[1]!.url],
      ['How did a false claim about ibuprofen and the coronavirus spread?', web[2]!.url],
      ['municipal archives of Quebec City', fac('350')],
      ['sugar shack with a museum of animals', fac('83')],
      ['outdoor concert amphitheatre in Joliette', fac('274')],
    ],
    frToEn: [
      ['Combien de masques chirurgicaux ont été volés dans un hôpital de Kobe ?', web[3]!.url],
      ["Qui est la première juge amérindienne de la Cour suprême de l'État de Washington ?", web[4]!.url],
      ["Un Suédois s'est fait tatouer le visage de l'épidémiologiste d'État sur le bras", web[5]!.url],
      ['usine de galettes de poisson frites à Hokkaido', web[6]!.url],
      ['archives du diocèse anglican de Montréal', fac('363')],
      ['archives des Sœurs Grises de Montréal', fac('367')],
    ],
    frToFr: [
      ['Pourquoi Montréal a-t-elle mis fin aux trottinettes électriques en libre-service ?', web[0]!.url],
      ['Comment un herbicide est-il devenu un symbole du mal pour les écologistes ?', web[1]!.url],
      ["Comment s'est propagée la fausse information sur l'ibuprofène et le coronavirus ?", web[2]!.url],
      ['archives municipales de la ville de Québec', fac('350')],
      ['cabane à sucre avec un musée des animaux', fac('83')],
      ['amphithéâtre de concerts en plein air à Joliette', fac('274')],
    ],
  };
}
