/**
 * The text analyzer: one function turns text into index terms at index time, query time and in-code checks, so what
 * the index matched and what the code verifies never disagree. NFKD fold, stop words and Snowball stemming per
 * language (English default, French for `fr`); stemming runs on the folded word so unaccented queries match.
 */
import snowball from 'snowball-stemmers';

/** Languages with their own stemmer and stop words; any other language is analysed as English. */
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
 * query has.
 */
export const QUESTION_WORDS: ReadonlySet<string> = new Set(
  (
    'what whats which who whom whose when where why how does do did doing done can could should would may might must shall ' +
    'has have had having am been being get gets got tell explain describe find show give list about any some there here ' +
    'please vs versus ' +
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

/** The analyzer language of a page language (BCP 47 or null). */
export function analyzerLang(lang: string | null | undefined): AnalyzerLang {
  return lang && /^fr(?:[-_]|$)/i.test(lang.trim()) ? 'fr' : 'en';
}

type Stemmer = { stem(w: string): string };
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
export function termOf(token: string, lang: AnalyzerLang): string | null {
  if (token.length > MAX_TERM_LENGTH || STOP_WORDS[lang].has(token)) return null;
  return stem(token, lang);
}

/** Index terms of a text, in order (repeats kept: term frequency counts). */
export function analyze(text: string, lang: AnalyzerLang): string[] {
  const out: string[] = [];
  for (const t of wordTokens(text)) {
    const term = termOf(t, lang);
    if (term !== null) out.push(term);
  }
  return out;
}

/** The text the index stores for a passage (`search_text`, what the postings index): its page title and its text, analysed, space-separated. */
export function indexText(title: string, text: string, lang: AnalyzerLang): string {
  return analyze(title ? `${title}\n${text}` : text, lang).join(' ');
}

/**
 * Which analyzer languages a query is read in. A query with French function words or French-only letters is read as
 * French, one with English function words as English; a query that shows neither (a name, a single word) is read in
 * both, so "collectes" finds the French stem and "collecting" the English one.
 */
export function queryLangs(query: string): AnalyzerLang[] {
  const raw = query.toLowerCase();
  const toks = wordTokens(query);
  const frOnly = /[àâçéèêëîïôœùûüÿ]/.test(raw) ? 2 : 0;
  const fr = toks.filter((t) => STOP_WORDS.fr.has(t) && !STOP_WORDS.en.has(t)).length + frOnly;
  const en = toks.filter((t) => STOP_WORDS.en.has(t) && !STOP_WORDS.fr.has(t)).length;
  if (fr > en) return ['fr'];
  if (en > fr) return ['en'];
  return ['en', 'fr'];
}

/**
 * The index terms one query word may match: its term in each of the query's languages (deduplicated). Empty when the
 * analyzer drops it in every language (a stop word).
 */
export function queryTerms(token: string, langs: readonly AnalyzerLang[]): string[] {
  const out: string[] = [];
  for (const l of langs) {
    const t = termOf(token, l);
    if (t !== null && !out.includes(t)) out.push(t);
  }
  return out;
}
