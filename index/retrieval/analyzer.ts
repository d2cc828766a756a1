/**
 * The text analyzer: one function turns text into index terms at index time, query time and in-code checks, so what
 * the index matched and what the code verifies never disagree. NFKD fold, then each passage in its own language
 * (declared, else detected): its stop words and Snowball stems, tagged by language so languages never match each
 * other; stemming runs on the folded word so unaccented queries match (docs/api-search.md, Text analysis).
 */
import { createRequire } from 'node:module';
import type snowballModule from 'snowball-stemmers';

/** Languages with their own stemmer and stop words; any other language is analysed as neutral (`Analysis`). */
export const ANALYZER_LANGS = ['en', 'fr'] as const;
export type AnalyzerLang = (typeof ANALYZER_LANGS)[number];

/** Longest term the index keeps (longer runs are identifiers, hashes or garbage). */
export const MAX_TERM_LENGTH = 40;

/** Lucene's English stop list (EnglishAnalyzer), plus the fragments left by splitting at apostrophes. */
const EN_STOP =
  'a an and are as at be but by for if in into is it no not of on or such that the their then there these they this to was will with s t'.split(
    ' ',
  );

/**
 * Lucene's French stop list (FrenchAnalyzer's snowball list, folded), plus the elided articles and pronouns left by
 * splitting at apostrophes (l', d', qu', …).
 */
const FR_STOP = (
  'au aux avec ce ces dans de des du elle en et eux il je la le leur lui ma mais me meme mes moi mon ne nos notre nous on ou par ' +
  'pas pour qu que qui sa se ses son sur ta te tes toi ton tu un une vos votre vous c d j l m n s t y ete etee etees etes etant ' +
  'suis es est sommes etes sont serai seras sera serons serez seront serais serait serions seriez seraient etais etait etions ' +
  'etiez etaient fus fut fumes futes furent sois soit soyons soyez soient fusse fusses fut fussions fussiez fussent ayant eu ' +
  'eue eues eus ai as avons avez ont aurai auras aura aurons aurez auront aurais aurait aurions auriez auraient avais avait ' +
  'avions aviez avaient eut eumes eutes eurent aie aies ait ayons ayez aient eusse eusses eussions eussiez eussent ceci cela ' +
  'celui ces cet cette ici ils les leurs quel quels quelle quelles sans soi'
).split(' ');

/** Stop words by language (folded forms). */
export const STOP_WORDS: Readonly<Record<AnalyzerLang, ReadonlySet<string>>> = { en: new Set(EN_STOP), fr: new Set(FR_STOP) };

/**
 * Words that make a sentence a question but say nothing about its subject (English and French). In a
 * natural-language query they do not drive the ranking (docs/api-search.md); they still match when they are all the
 * query has. The asker's own pronouns (I, my, you, we) are among them, as their French forms are French stop words;
 * not "us", which is also the country.
 */
export const QUESTION_WORDS: ReadonlySet<string> = new Set(
  (
    'what whats which who whom whose when where why how does do did doing done can could should would may might must shall ' +
    'has have had having am been being get gets got tell explain describe find show give list about any some there here ' +
    'please vs versus much many i me my you your we our ' +
    'quoi quel quelle quels quelles lequel laquelle lesquels lesquelles ou quand comment pourquoi combien est ce sont ' +
    'peut peuvent faut dois doit doivent existe y a il elle'
  ).split(' '),
);

const NON_ASCII = /[^\p{ASCII}]/u;

/** Case- and diacritic-insensitive form used for every comparison. */
export function fold(s: string): string {
  if (!NON_ASCII.test(s)) return s.toLowerCase(); // NFKD leaves ASCII as it is and it has no marks
  return s
    .normalize('NFKD')
    .replace(/\p{M}+/gu, '')
    .toLowerCase();
}

/** Folded word tokens (runs of letters and digits), stop words included. */
export function wordTokens(s: string): string[] {
  // ASCII text (most of it, on the English web) takes the plain class: the same tokens, without Unicode tables.
  if (!NON_ASCII.test(s)) return s.toLowerCase().match(/[a-z0-9]+/g) ?? [];
  return fold(s).match(/[\p{L}\p{N}]+/gu) ?? [];
}

/**
 * How a text is analysed: in a stemmed language, or `neutral` (a language without a stemmer here, or one that cannot
 * be told): folded words kept whole, no stop words.
 */
export type Analysis = AnalyzerLang | 'neutral';

/**
 * The tag an analysis puts before its terms, so the postings keep each language's terms apart: a French stem never
 * meets an English word that happens to stem alike, and each keeps its own document frequency. English terms carry
 * none (an English index's terms are the words' stems as before). A tag holds a character no word token has.
 */
export const TERM_TAGS: Readonly<Record<Analysis, string>> = { en: '', fr: 'fr:', neutral: '=:' };

/** The analysis a declared page language asks for: null when none is declared (the text then tells). */
export function declaredAnalysis(lang: string | null | undefined): Analysis | null {
  const l = lang?.trim().toLowerCase();
  if (!l) return null;
  if (/^fr(?:[-_]|$)/.test(l)) return 'fr';
  if (/^en(?:[-_]|$)/.test(l)) return 'en';
  return 'neutral';
}

/**
 * Function words that say which language a text is in: each list's own words minus the other's, minus single
 * letters and words common in the other language's running text ("me", "a" from a folded "à").
 */
const EVIDENCE: Readonly<Record<AnalyzerLang, ReadonlySet<string>>> = (() => {
  const en = new Set(EN_STOP);
  const fr = new Set(FR_STOP);
  const weak = new Set(['a', 'me', 'son', 'on', 'as', 'en']);
  const only = (a: Set<string>, b: Set<string>) => new Set([...a].filter((w) => !b.has(w) && w.length > 1 && !weak.has(w)));
  return { en: only(en, fr), fr: only(fr, en) };
})();

/** Letters French writes and English does not (outside borrowed names): evidence of French. */
const FRENCH_LETTERS = /[àâçéèêëîïôœùûüÿ]/i;

/**
 * The language of a text from its function words, or null when it does not tell: a cheap stop-word count (a language
 * must show two of its words or more, and twice the other's); French-only letters count as one French word.
 */
export function detectLang(text: string): AnalyzerLang | null {
  let en = 0;
  let fr = FRENCH_LETTERS.test(text) ? 1 : 0;
  for (const t of wordTokens(text)) {
    if (EVIDENCE.en.has(t)) en++;
    else if (EVIDENCE.fr.has(t)) fr++;
  }
  if (en >= 2 && en >= 2 * fr) return 'en';
  if (fr >= 2 && fr >= 2 * en) return 'fr';
  return null;
}

/**
 * The analysis of each passage of a page: the declared language first; else each passage's own text, and a passage
 * whose text does not tell takes the page's (title and every passage); neutral when nothing tells.
 */
export function passageAnalyses(lang: string | null | undefined, title: string, texts: readonly string[]): Analysis[] {
  const declared = declaredAnalysis(lang);
  if (declared) return texts.map(() => declared);
  let page: Analysis | undefined;
  return texts.map((text) => detectLang(text) ?? (page ??= detectLang([title, ...texts].join('\n')) ?? 'neutral'));
}

/**
 * The analysis of a page title (the title boost's field): the declared language, else the title's own words, else
 * English. The title statistics see only a page's title and language, so the title alone must tell; a short title
 * rarely does, and most undeclared pages are English, whose stems the boost needs (a neutral title loses them).
 */
export function titleAnalysis(title: string, lang: string | null | undefined): Analysis {
  return declaredAnalysis(lang) ?? detectLang(title) ?? 'en';
}

type Stemmer = { stem(w: string): string };
// Required, not imported: an ESM import of this one large CommonJS file first scans it all for its export names,
// most of the package's load time at each start of the process and of each search thread.
const snowball = createRequire(import.meta.url)('snowball-stemmers') as typeof snowballModule;
const stemmers: Record<AnalyzerLang, Stemmer> = { en: snowball.newStemmer('english'), fr: snowball.newStemmer('french') };

/** Stems are cached (word frequencies are Zipfian: a small cache answers most words of a corpus). */
const CACHE_LIMIT = 200_000;
const caches: Record<AnalyzerLang, Map<string, string>> = { en: new Map(), fr: new Map() };

/** The stem of one folded word (no stop-word check). Digits-only tokens are kept as they are. */
export function stem(word: string, lang: AnalyzerLang): string {
  if (word.length <= 2 || /^\p{N}+$/u.test(word)) return word;
  const cache = caches[lang];
  let s = cache.get(word);
  if (s === undefined) {
    s = fold(stemmers[lang].stem(word));
    if (cache.size >= CACHE_LIMIT) cache.clear();
    cache.set(word, s);
  }
  return s;
}

/** The index term of one folded word token, or null when the analyzer drops it (stop word, too long). */
export function termOf(token: string, analysis: Analysis): string | null {
  const tag = TERM_TAGS[analysis];
  // The tagged term stays within the postings' term length.
  if (token.length + tag.length > MAX_TERM_LENGTH) return null;
  if (analysis === 'neutral') return tag + token;
  if (STOP_WORDS[analysis].has(token)) return null;
  return tag + stem(token, analysis);
}

/** Index terms of a text, in order (repeats kept: term frequency counts). */
export function analyze(text: string, analysis: Analysis): string[] {
  const out: string[] = [];
  for (const t of wordTokens(text)) {
    const term = termOf(t, analysis);
    if (term !== null) out.push(term);
  }
  return out;
}

/** The text the index stores for a passage (`search_text`, what the postings index): its page title and its text, analysed, space-separated. */
export function indexText(title: string, text: string, analysis: Analysis): string {
  return analyze(title ? `${title}\n${text}` : text, analysis).join(' ');
}

/**
 * Which languages a query is read in: the one its function words show (a French query is analysed as French only,
 * an English one as English only); when they do not tell (a name, a few nouns), every language the analyzer has, so
 * "collectes" finds the French stem and "collecting" the English one, each with its own statistics. Letters alone do
 * not decide: an English page names Montréal too.
 */
export function queryLangs(query: string): AnalyzerLang[] {
  let en = 0;
  let fr = 0;
  for (const t of wordTokens(query)) {
    if (EVIDENCE.en.has(t) || QUESTION_EVIDENCE.en.has(t)) en++;
    else if (EVIDENCE.fr.has(t) || QUESTION_EVIDENCE.fr.has(t)) fr++;
  }
  if (fr > en) return ['fr'];
  if (en > fr) return ['en'];
  return [...ANALYZER_LANGS];
}

/** Question words that tell a query's language (a question is often all a query says about it). */
const QUESTION_EVIDENCE: Readonly<Record<AnalyzerLang, ReadonlySet<string>>> = {
  en: new Set('what which who whom whose when where why how does did should would'.split(' ')),
  fr: new Set('quoi quel quelle quels quelles quand comment pourquoi combien'.split(' ')),
};

/**
 * The index terms one query word may match: its term in each of the query's languages, and its neutral term (the
 * whole word, as a passage of no known language holds it), deduplicated. Empty when every language of the query
 * drops it (a stop word); a word only one reading drops ("d" of "vitamin D", a French stop word) is kept. A word
 * every stemmer leaves whole (a name such as Montréal, a number, a word both languages write alike) is looked for in
 * every language: it is the same word on a page of either.
 */
export function queryTerms(token: string, langs: readonly AnalyzerLang[]): string[] {
  const out: string[] = [];
  const whole = ANALYZER_LANGS.every((l) => termOf(token, l) === TERM_TAGS[l] + token);
  for (const l of whole ? ANALYZER_LANGS : langs) {
    const t = termOf(token, l);
    if (t !== null && !out.includes(t)) out.push(t);
  }
  if (out.length === 0) return [];
  const neutral = termOf(token, 'neutral');
  if (neutral !== null && !out.includes(neutral)) out.push(neutral);
  return out;
}
