/**
 * Search operators (spec §1.1): user text → AST → typed clauses.
 *
 * The parser never throws: every input, however hostile, yields an AST. Operator values are normalised into
 * closed shapes (a host name, a file extension, a folded phrase) and compiled into LanceDB query objects
 * (MatchQuery / PhraseQuery / BooleanQuery, which tokenize their text themselves and have no query syntax) and
 * into code predicates. No user text is ever concatenated into a where/SQL string: the store only turns site:
 * values into integer host ids it already knows (see store.ts).
 */
import { BooleanQuery, MatchQuery, Occur, Operator, type FullTextQuery } from '@lancedb/lancedb';
import { domainToASCII } from 'node:url';

/** The parsed query. Every list is deduplicated and in first-seen order. */
export interface QueryAst {
  /** Bare words that must all match (or, in `any` mode, that rank). Raw (unfolded) text. */
  readonly words: readonly string[];
  /** Exact phrases that must match, each as its folded tokens. */
  readonly phrases: readonly (readonly string[])[];
  /** Excluded words (-word / --word), folded. */
  readonly excludedWords: readonly string[];
  /** Excluded phrases (-"…"), folded tokens. */
  readonly excludedPhrases: readonly (readonly string[])[];
  /** intitle:"…" phrases (folded tokens) the title must contain. */
  readonly inTitle: readonly (readonly string[])[];
  /** -intitle:"…": phrases the title must not contain. */
  readonly notInTitle: readonly (readonly string[])[];
  /** Positive site: domains (normalised ASCII host names); alternatives. A value that is not a host name is kept as
   *  `null`, which matches nothing (so `site:<junk>` returns nothing instead of being ignored). */
  readonly sites: readonly (string | null)[];
  /** Negated site: domains; `null` entries exclude nothing. */
  readonly notSites: readonly (string | null)[];
  /** inurl: texts (lower-case) the URL must contain. */
  readonly inUrl: readonly string[];
  readonly notInUrl: readonly string[];
  /** Positive filetype: extensions (alternatives); `null` = not an extension, matches nothing. */
  readonly filetypes: readonly (string | null)[];
  readonly notFiletypes: readonly (string | null)[];
}

/** The row fields a compiled predicate looks at. */
export interface MatchableRow {
  readonly host: string;
  readonly title: string;
  /** The optional fields are read only when `CompiledQuery.hitColumns` names them (their absence then is a
   *  programming error, and throws). */
  readonly text?: string;
  readonly url?: string;
  readonly filetype?: string;
}

/** The optional MatchableRow fields. */
export type MatchColumn = 'text' | 'url' | 'filetype';

function need<T>(v: T | undefined, what: MatchColumn): T {
  if (v === undefined) throw new Error(`compiled query: the candidate was fetched without its ${what}`);
  return v;
}

/** How bare words combine: `all` (spec §1.1, search) or `any` (bag of words, e.g. BEIR natural-language claims). */
export type TermMode = 'all' | 'any';

/** Typed clauses compiled from an AST. */
export interface CompiledQuery {
  readonly ast: QueryAst;
  /**
   * Full-text query of the BM25 arm (first stage): what must match, scored on `search_text` (title + passage).
   * Null when the query has no positive text (operators only): then the store scans with filters only. Kept to
   * one MatchQuery whenever the query allows it, because LanceDB answers a single match query with top-k WAND
   * pruning, where a BooleanQuery scores every posting of every clause (docs/bench-index.md).
   */
  readonly fts: FullTextQuery | null;
  /** Query terms for the title boost (`titleTerms` of the words and phrase words; scored by index/title-stats.ts). */
  readonly titleTerms: readonly string[];
  /** Text the vector arm embeds (words + phrases + intitle phrases); empty when nothing positive. */
  readonly semanticText: string;
  /** Terms and phrases for query-biased excerpts and highlights. */
  readonly highlightTerms: readonly string[];
  /** Whether a positive site: is present (host-diversity exemption). */
  readonly hasPositiveSite: boolean;
  /**
   * The code predicate every candidate passes, whichever arm found it. `strictWords` also checks bare words
   * (used for vector-arm candidates; BM25 candidates already matched them through the stemming analyzer).
   */
  matches(row: MatchableRow, opts: { strictWords: boolean }): boolean;
  /** The optional row fields `matches` reads for candidates of the full-text or vector arm (`strictWords: false`);
   *  candidates are fetched with these only. */
  readonly hitColumns: readonly MatchColumn[];
  /**
   * LanceDB's AND match ignores a query token the index has never seen (lancedb 0.31: "cells zzzq" matches every
   * passage with "cells"), so an all-terms query could return rows missing a word. Every word the index knows is in
   * every candidate; so, given text seen in candidates, this returns the required word tokens it does not visibly
   * contain (usually none), each to be checked with `wordProbe`. Always empty when the AND query has a single token
   * (then LanceDB's answer is already right).
   */
  unseenWords(seenText: string): string[];
  /** A single-token query for one word of `unseenWords`: finding nothing means the word is absent from the index
   *  and the query matches nothing. */
  wordProbe(word: string): FullTextQuery;
}

/** The FTS column holding "title + passage" for every passage. */
export const SEARCH_COLUMN = 'search_text';

/**
 * Weight of the title-field score added to a BM25 candidate (on top of the title words already inside
 * `search_text`). A short field's BM25 is inflated by length normalisation, so a full weight over-counts titles;
 * see docs/bench-index.md for the comparison.
 */
export const TITLE_BOOST = 0.5;

const MAX_ITEMS = 32;

/** Case- and diacritic-insensitive form used for every code-side comparison. */
export function fold(s: string): string {
  return s.normalize('NFKD').replace(/\p{M}+/gu, '').toLowerCase();
}

/** Folded word tokens (letters and digits). */
export function wordTokens(s: string): string[] {
  return fold(s).match(/[\p{L}\p{N}]+/gu) ?? [];
}

/**
 * The index analyzer's stop words (Lucene's English list, which LanceDB's `removeStopWords` applies): a query word
 * among them produces no token, so it neither matches nor excludes anything. A test checks the list against a
 * real index.
 */
export const INDEX_STOP_WORDS: ReadonlySet<string> = new Set(
  'a an and are as at be but by for if in into is it no not of on or such that the their then there these they this to was will with'.split(' '),
);

/** Longest token the index keeps (FTS_OPTIONS.maxTokenLength in store.ts). */
export const INDEX_MAX_TOKEN_LENGTH = 40;

/**
 * A light suffix stripper so the code-side check of bare words agrees with the index's stemming analyzer on the
 * common cases (plural, -ing, -ed). It only needs to be conservative: it decides inclusion for vector candidates.
 */
export function lightStem(w: string): string {
  if (w.length <= 3) return w;
  for (const suf of ['ingly', 'edly', 'ing', 'ies', 'ied', 'es', 'ed', 's']) {
    if (w.endsWith(suf) && w.length - suf.length >= 3) {
      const base = w.slice(0, -suf.length);
      return suf === 'ies' || suf === 'ied' ? `${base}y` : base;
    }
  }
  return w;
}

/** The terms of a title or query as the title statistics count them (index/title-stats.ts): the index's tokens and
 *  stop words, light stemming. */
export function titleTerms(text: string): string[] {
  return wordTokens(text)
    .filter((w) => !INDEX_STOP_WORDS.has(w) && w.length <= INDEX_MAX_TOKEN_LENGTH)
    .map(lightStem);
}

/** Normalises a site: value to an ASCII host name, or null when it is not one. */
export function normaliseSite(raw: string): string | null {
  let v = raw.trim().toLowerCase();
  v = v.replace(/^[a-z][a-z0-9+.-]*:\/\//, '');
  v = v.split(/[/?#]/, 1)[0] ?? '';
  v = v.replace(/:\d+$/, '');
  v = v.replace(/^\*?\.+/, '').replace(/\.+$/, '');
  if (v.length === 0 || v.length > 253) return null;
  const ascii = domainToASCII(v);
  if (!ascii || !/^[a-z0-9-]+(\.[a-z0-9-]+)*$/.test(ascii)) return null;
  if (ascii.split('.').some((l) => l.length === 0 || l.length > 63 || l.startsWith('-') || l.endsWith('-'))) return null;
  return ascii;
}

/** Normalises a filetype: value ("PDF", ".pdf") to a lower-case extension, or null. */
export function normaliseFiletype(raw: string): string | null {
  const v = raw.trim().toLowerCase().replace(/^\.+/, '');
  return /^[a-z0-9]{1,10}$/.test(v) ? v : null;
}

/** Whether `host` is `domain` or one of its subdomains. */
export function hostMatchesSite(host: string, domain: string): boolean {
  const h = host.toLowerCase();
  return h === domain || h.endsWith(`.${domain}`);
}

type Raw = { neg: boolean; op: string | null; value: string; quoted: boolean };

/** Splits the query into raw items: [-|--][op:]("…"|word). Unbalanced quotes run to the end. */
function lex(input: string): Raw[] {
  const out: Raw[] = [];
  const s = input.slice(0, 2000);
  let i = 0;
  const isSpace = (c: string | undefined) => c !== undefined && /\s/u.test(c);
  while (i < s.length && out.length < 4 * MAX_ITEMS) {
    while (i < s.length && isSpace(s[i])) i++;
    if (i >= s.length) break;
    let neg = false;
    if (s[i] === '-') {
      let j = i;
      while (s[j] === '-') j++;
      // "-" or "--" directly followed by something is a negation; a lone dash is noise.
      if (j - i <= 2 && j < s.length && !isSpace(s[j])) {
        neg = true;
        i = j;
      } else {
        i = j;
        continue;
      }
    }
    let op: string | null = null;
    const m = /^(intitle|site|inurl|filetype):/i.exec(s.slice(i, i + 10));
    if (m) {
      op = m[1]!.toLowerCase();
      i += m[0].length;
    }
    let value = '';
    let quoted = false;
    if (s[i] === '"' || s[i] === '\u201c' || s[i] === '\u201d') {
      quoted = true;
      i++;
      const start = i;
      while (i < s.length && s[i] !== '"' && s[i] !== '\u201d' && s[i] !== '\u201c') i++;
      value = s.slice(start, i);
      i++; // closing quote (or past the end)
    } else {
      const start = i;
      while (i < s.length && !isSpace(s[i])) i++;
      value = s.slice(start, i);
    }
    out.push({ neg, op, value, quoted });
  }
  return out;
}

function pushUnique<T>(list: T[], v: T, key: (x: T) => string = (x) => JSON.stringify(x)): void {
  if (list.length >= MAX_ITEMS) return;
  const k = key(v);
  if (!list.some((x) => key(x) === k)) list.push(v);
}

/** Parses a query. Never throws; unknown `x:y` tokens are ordinary words. */
export function parseQuery(input: string): QueryAst {
  const words: string[] = [];
  const phrases: string[][] = [];
  const excludedWords: string[] = [];
  const excludedPhrases: string[][] = [];
  const inTitle: string[][] = [];
  const notInTitle: string[][] = [];
  const sites: (string | null)[] = [];
  const notSites: (string | null)[] = [];
  const inUrl: string[] = [];
  const notInUrl: string[] = [];
  const filetypes: (string | null)[] = [];
  const notFiletypes: (string | null)[] = [];
  for (const r of lex(typeof input === 'string' ? input : '')) {
    switch (r.op) {
      case 'site':
        pushUnique(r.neg ? notSites : sites, normaliseSite(r.value));
        break;
      case 'filetype':
        pushUnique(r.neg ? notFiletypes : filetypes, normaliseFiletype(r.value));
        break;
      case 'inurl': {
        const v = r.value.trim().toLowerCase().slice(0, 200);
        if (v) pushUnique(r.neg ? notInUrl : inUrl, v);
        break;
      }
      case 'intitle': {
        const toks = wordTokens(r.value);
        if (toks.length) pushUnique(r.neg ? notInTitle : inTitle, toks);
        break;
      }
      default: {
        const toks = wordTokens(r.value);
        if (toks.length === 0) break;
        if (r.quoted && toks.length > 1) pushUnique(r.neg ? excludedPhrases : phrases, toks);
        else if (r.neg) {
          if (toks.length === 1) pushUnique(excludedWords, toks[0]!, (x) => x);
          else pushUnique(excludedPhrases, toks); // -e-mail: exclude the hyphenated sequence
        } else for (const t of toks) pushUnique(words, t, (x) => x);
      }
    }
  }
  return { words, phrases, excludedWords, excludedPhrases, inTitle, notInTitle, sites, notSites, inUrl, notInUrl, filetypes, notFiletypes };
}

function containsSeq(hay: readonly string[], needle: readonly string[]): boolean {
  if (needle.length === 0) return true;
  outer: for (let i = 0; i + needle.length <= hay.length; i++) {
    for (let j = 0; j < needle.length; j++) if (hay[i + j] !== needle[j]) continue outer;
    return true;
  }
  return false;
}

/** Compiles an AST into typed clauses. */
export function compileQuery(ast: QueryAst, opts: { termMode?: TermMode } = {}): CompiledQuery {
  const mode = opts.termMode ?? 'all';
  // `search_text` is the page title followed by the passage (each passage carries its page's title, like a
  // title+body "contents" field), so a word may match either; the title boost is a second stage (`titleFts`).
  // Phrases: every word must occur (index side); word order and adjacency are then checked exactly in code
  // (`matches`). The FTS index is built without positions: see FTS_OPTIONS in store.ts for why.
  // Excluded words are not index clauses: a MustNot clause makes LanceDB evaluate the whole posting list of the
  // excluded word (≈ 30× the cost of the query at 1M passages); `matches` drops them, from a deeper candidate list.
  const required = [...(mode === 'all' ? ast.words : []), ...ast.phrases.flat()];
  const clauses: [Occur, FullTextQuery][] = [];
  if (required.length > 0) clauses.push([Occur.Must, new MatchQuery(required.join(' '), SEARCH_COLUMN, { operator: Operator.And })]);
  if (mode === 'any' && ast.words.length > 0) clauses.push([Occur.Should, new MatchQuery(ast.words.join(' '), SEARCH_COLUMN, { operator: Operator.Or })]);
  for (const p of ast.inTitle) clauses.push([Occur.Must, new MatchQuery(p.join(' '), 'title', { operator: Operator.And })]);
  const fts = clauses.length === 0 ? null : clauses.length === 1 ? clauses[0]![1] : new BooleanQuery(clauses);
  const titleText = [...ast.words, ...ast.phrases.flat()].join(' ');
  const titleQueryTerms = fts ? titleTerms(titleText) : [];

  const semanticText = [...ast.words, ...ast.phrases.map((p) => p.join(' ')), ...ast.inTitle.map((p) => p.join(' '))].join(' ');
  const highlightTerms = [...ast.phrases.map((p) => p.join(' ')), ...ast.inTitle.map((p) => p.join(' ')), ...ast.words];
  const sites = ast.sites;
  const notSites = ast.notSites.filter((s): s is string => s !== null);
  const filetypes = ast.filetypes;
  const notFiletypes = ast.notFiletypes.filter((s): s is string => s !== null);
  const wordStems = ast.words.map(lightStem);
  const excludedStems = new Set(ast.excludedWords.map(lightStem));

  const checksFiletype = filetypes.length > 0 || notFiletypes.length > 0;
  const checksUrl = ast.inUrl.length > 0 || ast.notInUrl.length > 0;
  const bodyChecks = ast.phrases.length > 0 || ast.excludedPhrases.length > 0 || excludedStems.size > 0;
  const checksTitle = ast.inTitle.length > 0 || ast.notInTitle.length > 0 || bodyChecks;
  const hitColumns: MatchColumn[] = [
    ...(bodyChecks ? (['text'] as const) : []),
    ...(checksUrl ? (['url'] as const) : []),
    ...(checksFiletype ? (['filetype'] as const) : []),
  ];

  const matches = (row: MatchableRow, o: { strictWords: boolean }): boolean => {
    const host = row.host.toLowerCase();
    if (sites.length > 0 && !sites.some((d) => d !== null && hostMatchesSite(host, d))) return false;
    if (notSites.some((d) => hostMatchesSite(host, d))) return false;
    if (checksFiletype) {
      const ft = need(row.filetype, 'filetype').toLowerCase();
      if (filetypes.length > 0 && !filetypes.some((f) => f !== null && f === ft)) return false;
      if (notFiletypes.includes(ft)) return false;
    }
    if (checksUrl) {
      const url = need(row.url, 'url').toLowerCase();
      if (!ast.inUrl.every((u) => url.includes(u))) return false;
      if (ast.notInUrl.some((u) => url.includes(u))) return false;
    }
    const strictBody = o.strictWords && mode === 'all' && wordStems.length > 0;
    if (!checksTitle && !strictBody) return true;
    const titleToks = wordTokens(row.title);
    if (!ast.inTitle.every((p) => containsSeq(titleToks, p))) return false;
    if (ast.notInTitle.some((p) => containsSeq(titleToks, p))) return false;
    if (!bodyChecks && !strictBody) return true;
    const bodyToks = wordTokens(need(row.text, 'text'));
    const all = [...bodyToks, '\u0000', ...titleToks];
    if (!ast.phrases.every((p) => containsSeq(bodyToks, p) || containsSeq(titleToks, p))) return false;
    if (ast.excludedPhrases.some((p) => containsSeq(bodyToks, p) || containsSeq(titleToks, p))) return false;
    if (excludedStems.size > 0 && all.some((t) => excludedStems.has(lightStem(t)))) return false;
    if (strictBody) {
      const stems = new Set(all.map(lightStem));
      if (!wordStems.every((w) => stems.has(w))) return false;
    }
    return true;
  };

  const requiredTokens =
    mode === 'all' ? [...new Set(ast.words.flatMap(wordTokens))].filter((w) => !INDEX_STOP_WORDS.has(w) && w.length <= INDEX_MAX_TOKEN_LENGTH) : [];
  const andTokens = requiredTokens.length + ast.phrases.flat().filter((w) => !INDEX_STOP_WORDS.has(w)).length;
  const unseenWords = (seenText: string): string[] => {
    if (andTokens < 2 || requiredTokens.length === 0) return [];
    const seen = new Set(wordTokens(seenText).map(lightStem));
    return requiredTokens.filter((w) => !seen.has(lightStem(w)));
  };

  return {
    ast,
    fts,
    titleTerms: titleQueryTerms,
    unseenWords,
    wordProbe: (word: string) => new MatchQuery(word, SEARCH_COLUMN),
    hitColumns,
    semanticText,
    highlightTerms,
    hasPositiveSite: sites.some((s) => s !== null),
    matches,
  };
}

/** Whether the AST has anything positive to look for (text or at least one include operator). */
export function hasPositiveConstraint(ast: QueryAst): boolean {
  return (
    ast.words.length + ast.phrases.length + ast.inTitle.length + ast.sites.length + ast.inUrl.length + ast.filetypes.length > 0
  );
}
