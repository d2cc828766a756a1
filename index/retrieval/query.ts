/**
 * Queries: parses user text into an AST and compiles typed clauses checked on each candidate (docs/api-search.md).
 * Ranked (no operator) vs strict (any operator) is decided by the text alone; strict constraints are verified in
 * code, never trusted to the engine, and no user text reaches a where string (see docs/architecture.md#query-semantics).
 */
import { domainToASCII } from 'node:url';
import { QUESTION_WORDS, queryLangs, queryTerms, wordTokens, type AnalyzerLang } from './analyzer.js';
import type { MatchColumn, PASSAGE_COLUMNS, RowOf } from '../engines/lance/columns.js';
import type { TextQuery } from './engine-seam.js';

export { fold, wordTokens } from './analyzer.js';

/** The FTS column: the analysed terms of "title + passage" (analyzer.ts `indexText`). */
export const SEARCH_COLUMN = 'search_text' satisfies MatchColumn;

/**
 * Weight of the title-field BM25 added to a BM25 candidate: a short field's BM25 is inflated by length
 * normalisation, so full weight over-counts titles. Chosen on SciFact's train split (docs/bench-index.md).
 */
export const TITLE_BOOST = 0.25;

/** Most items of one kind a query keeps; input beyond 2,000 characters is ignored. */
const MAX_ITEMS = 32;

/** The row fields a compiled predicate may read. Which optional ones it needs: `CompiledQuery.hitColumns`. */
export type MatchableRow = Pick<PassageHitRow, 'host' | 'title'> &
  Partial<Pick<PassageHitRow, 'lang'>> &
  Partial<RowOf<typeof PASSAGE_COLUMNS, 'match'>> & {
    /**
     * Which of the query's probe terms (`TextQuery.probe`, the order `TermPresence` answers in) the row holds, set on
     * the candidates the in-process postings build for that query: they know it from the search, so no `search_text`
     * is built for them and read again here. Bit i of a number (up to 31 terms), else one byte per term.
     */
    readonly _present?: number | Uint8Array;
  };

type PassageHitRow = RowOf<typeof PASSAGE_COLUMNS, 'hit'>;

function need<T>(v: T | undefined, what: MatchColumn): T {
  if (v === undefined) throw new Error(`compiled query: the candidate was fetched without its ${what}`);
  return v;
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

function containsSeq(hay: readonly string[], needle: readonly string[]): boolean {
  if (needle.length === 0) return true;
  outer: for (let i = 0; i + needle.length <= hay.length; i++) {
    for (let j = 0; j < needle.length; j++) if (hay[i + j] !== needle[j]) continue outer;
    return true;
  }
  return false;
}

/** The prefix operators. */
export const PREFIX_OPS = ['intitle', 'site', 'inurl', 'filetype'] as const;
export type PrefixOp = (typeof PREFIX_OPS)[number];

/** A normalised operator value: a host name, a lower-case text, an extension, or a phrase's folded words. */
type OpValue = string | readonly string[];

/** One prefix operator: everything about it in one place. */
interface OperatorDef {
  /** How it is written (API text). */
  readonly syntax: string;
  /** What it does (API text: the `q` description and docs/api-search.md). */
  readonly description: string;
  /** Several positive values are alternatives (any holds) rather than all required. */
  readonly alternatives: boolean;
  /** The normalised value; `null`: not understood (a positive one matches nothing, a negated one is ignored, both
   *  warn); `undefined`: empty, dropped silently. */
  normalise(raw: string): OpValue | null | undefined;
  /** The candidate column the test reads (title and host are always fetched). */
  readonly column: 'title' | 'host' | 'url' | 'filetype';
  /** Whether the value holds for the row's column value. */
  test(field: string, value: OpValue): boolean;
  /** Terms the full-text query must hold for the operator to possibly match (intitle: its words). */
  readonly indexWords: boolean;
}

export const OPERATORS: Readonly<Record<PrefixOp, OperatorDef>> = {
  intitle: {
    syntax: 'intitle:"phrase"',
    description: 'the page title contains the phrase',
    alternatives: false,
    normalise: (raw) => {
      const toks = wordTokens(raw);
      return toks.length ? toks : undefined;
    },
    column: 'title',
    test: (title, v) => containsSeq(wordTokens(title), v as readonly string[]),
    indexWords: true,
  },
  site: {
    syntax: 'site:domain',
    description: 'the host is the domain or one of its subdomains (several positive site: are alternatives)',
    alternatives: true,
    normalise: (raw) => normaliseSite(raw),
    column: 'host',
    test: (host, v) => hostMatchesSite(host, v as string),
    indexWords: false,
  },
  inurl: {
    syntax: 'inurl:text',
    description: 'the URL contains the text (case-insensitive)',
    alternatives: false,
    normalise: (raw) => {
      const v = raw.trim().toLowerCase().slice(0, 200);
      return v || undefined;
    },
    column: 'url',
    test: (url, v) => url.toLowerCase().includes(v as string),
    indexWords: false,
  },
  filetype: {
    syntax: 'filetype:ext',
    description: "the document's type is ext, e.g. pdf, html, txt (several positive filetype: are alternatives)",
    alternatives: true,
    normalise: (raw) => normaliseFiletype(raw),
    column: 'filetype',
    test: (ft, v) => ft.toLowerCase() === v,
    indexWords: false,
  },
};

/** The rule an agent reads in the `q` description (built from the operator table). */
export const QUERY_RULE =
  'Without operators the query is ranked: any word may match, pages with more of its words rank higher, question ' +
  'words do not count. Operators: "exact phrase", -word or --word (exclude), +word or "word" (require), ' +
  PREFIX_OPS.map((op) => OPERATORS[op].syntax).join(', ') +
  '; prefix an operator with - to exclude it; several positive site: or filetype: are alternatives. With any ' +
  'operator, every bare word must match too.';

/** Values of one prefix operator: positive and negated. `null` = a value not understood. */
export interface OpValues {
  readonly include: readonly (OpValue | null)[];
  readonly exclude: readonly (OpValue | null)[];
}

/** The parsed query. Lists are deduplicated, in first-seen order, at most 32 items each. */
export interface QueryAst {
  /** Bare word tokens (folded), in order, repeats kept (a repeated word weighs more in a ranked query). */
  readonly words: readonly string[];
  /** Words that must occur: +word, "word", and every bare word of a strict query. */
  readonly required: readonly string[];
  /** Exact phrases ("a b"), as folded tokens. */
  readonly phrases: readonly (readonly string[])[];
  /** -word / --word (folded). */
  readonly excludedWords: readonly string[];
  /** -"a b" (folded tokens). */
  readonly excludedPhrases: readonly (readonly string[])[];
  /** Prefix operators' values. */
  readonly ops: Readonly<Record<PrefixOp, OpValues>>;
  /** `strict` when the query has any operator (bare words become required), else `ranked`. */
  readonly kind: 'ranked' | 'strict';
}

type Raw = { neg: boolean; plus: boolean; op: PrefixOp | null; value: string; quoted: boolean };

const OP_PREFIX = new RegExp(`^(${PREFIX_OPS.join('|')}):`, 'i');

/** Splits the query into raw items: [-|--|+][op:]("…"|word). Unbalanced quotes run to the end. */
function lex(input: string): Raw[] {
  const out: Raw[] = [];
  const s = input.slice(0, 2000);
  let i = 0;
  const isSpace = (c: string | undefined) => c !== undefined && /\s/u.test(c);
  const isQuote = (c: string | undefined) => c === '"' || c === '\u201c' || c === '\u201d';
  while (i < s.length && out.length < 4 * MAX_ITEMS) {
    while (i < s.length && isSpace(s[i])) i++;
    if (i >= s.length) break;
    let neg = false;
    let plus = false;
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
    } else if (s[i] === '+' && /^[\p{L}"\u201c\u201d]/u.test(s[i + 1] ?? '')) {
      // +word requires the word; "+1" or "C++" stay plain text.
      plus = true;
      i++;
    }
    let op: PrefixOp | null = null;
    const m = OP_PREFIX.exec(s.slice(i, i + 10));
    if (m) {
      op = m[1]!.toLowerCase() as PrefixOp;
      i += m[0].length;
    }
    let value = '';
    let quoted = false;
    if (isQuote(s[i])) {
      quoted = true;
      i++;
      const start = i;
      while (i < s.length && !isQuote(s[i])) i++;
      value = s.slice(start, i);
      i++; // closing quote (or past the end)
    } else {
      const start = i;
      while (i < s.length && !isSpace(s[i])) i++;
      value = s.slice(start, i);
    }
    out.push({ neg, plus, op, value, quoted });
  }
  return out;
}

const same = (a: unknown, b: unknown) => JSON.stringify(a) === JSON.stringify(b);

function pushUnique<T>(list: T[], v: T): void {
  if (list.length < MAX_ITEMS && !list.some((x) => same(x, v))) list.push(v);
}

/** Parses a query. Never throws; unknown `x:y` tokens are ordinary words. */
export function parseQuery(input: string): QueryAst {
  const words: string[] = [];
  const required: string[] = [];
  const phrases: string[][] = [];
  const excludedWords: string[] = [];
  const excludedPhrases: string[][] = [];
  const ops = Object.fromEntries(
    PREFIX_OPS.map((op) => [op, { include: [] as (OpValue | null)[], exclude: [] as (OpValue | null)[] }]),
  ) as Record<PrefixOp, { include: (OpValue | null)[]; exclude: (OpValue | null)[] }>;
  let operators = 0;
  for (const r of lex(typeof input === 'string' ? input : '')) {
    if (r.op) {
      operators++;
      const v = OPERATORS[r.op].normalise(r.value);
      if (v !== undefined) pushUnique(r.neg ? ops[r.op].exclude : ops[r.op].include, v);
      continue;
    }
    const toks = wordTokens(r.value);
    if (toks.length === 0) continue;
    if (r.neg) {
      operators++;
      if (toks.length === 1) pushUnique(excludedWords, toks[0]!);
      else pushUnique(excludedPhrases, toks); // -e-mail, -"a b": exclude the sequence
    } else if (r.quoted && toks.length > 1) {
      operators++;
      pushUnique(phrases, toks);
    } else if (r.quoted || r.plus) {
      for (const t of toks) pushUnique(required, t);
    } else {
      for (const t of toks) if (words.length < 4 * MAX_ITEMS) words.push(t);
    }
  }
  const kind = operators > 0 ? 'strict' : 'ranked';
  if (kind === 'strict') for (const w of words) pushUnique(required, w);
  return { words, required, phrases, excludedWords, excludedPhrases, ops, kind };
}

/** One query word as the index sees it: the terms it may match (one per query language where they differ). */
interface WordTerms {
  readonly word: string;
  readonly terms: readonly string[];
}

/** A query word relevance weighs: its terms in every reading, and how many times the query gives it. */
export interface CoverageWord extends WordTerms {
  readonly n: number;
}

/** Typed clauses compiled from an AST. */
export interface CompiledQuery {
  readonly ast: QueryAst;
  /**
   * The BM25 arm's query for the in-process postings (postings.ts): required groups (a word's analyses) and ranked
   * terms, each weighted by how many query words hold it (a word given twice counts twice, as Lucene scores a repeated
   * clause). Null when the query has no positive text (operators only: the postings' filter-only scan answers).
   */
  readonly text: TextQuery | null;
  /** Query terms of the title boost (index/engines/memory/title-stats.ts), repeats kept. */
  readonly titleTerms: readonly string[];
  /** Text the vector arm embeds (the words, required words, phrases and intitle phrases); empty when none. */
  readonly semanticText: string;
  /** Terms and phrases for query-biased excerpts and highlights. */
  readonly highlightTerms: readonly string[];
  /** Whether a positive site: is present (host-diversity exemption). */
  readonly hasPositiveSite: boolean;
  /** Operator values that could not be understood: positive ones (match nothing), negated ones (ignored). */
  readonly invalid: { readonly positive: number; readonly negated: number };
  /** Every strict constraint holds for the row (required words, phrases, exclusions, prefix operators). */
  matches(row: MatchableRow): boolean;
  /** The optional row fields `matches` and `coordination` read: BM25 candidates are fetched with these. */
  readonly hitColumns: readonly MatchColumn[];
  /**
   * The optional row fields `matches` alone reads: candidates that are only verified, not coordinated (vector arm,
   * filter scans), are fetched with these. A ranked natural-language query needs none (reading 300 passages'
   * `search_text` for nothing was ≈ a third of the vector arm at 1M).
   */
  readonly matchColumns: readonly MatchColumn[];
  /**
   * The coordination weight of a ranked query for a row: ½ + ½ × the share of query words (repeats counted) it
   * holds; 1 with no ranked words. The halved form, because Lucene's plain share ranked worse (docs/bench-index.md).
   */
  coordination(row: MatchableRow): number;
  /**
   * The words relevance weighs (relevance.ts): the ranked words (with their repeats) and the required ones not ranked,
   * each with its terms in every reading.
   */
  readonly coverageWords: readonly CoverageWord[];
  /** Which of `coverageWords` a candidate holds (1 at a word's position), in a fresh array per call. */
  wordsHeld(row: MatchableRow): Uint8Array;
  /** Whether code-side checks may reject many candidates (the arms then fetch deeper lists). */
  readonly selective: boolean;
  /**
   * Whether they may reject many of the full-text arm's own candidates. Required words alone do not: the full-text
   * query requires each of them (`textCoversMatches`), so a BM25-only query of required words reads the ranked depth.
   */
  readonly textSelective: boolean;
  /**
   * Every row `matches` accepts is matched by `text` (the query has required words, and `text` requires each of them):
   * an exhaustive answer to it then holds every passage either arm could return.
   */
  readonly textCoversMatches: boolean;
}

/**
 * Which of a query's terms a candidate's analysed text holds, in one pass of hash lookups over `search_text`
 * (hits confirmed by characters), allocating nothing per token; per-term scans cost milliseconds per query.
 */
export class TermPresence {
  readonly #terms: readonly string[];
  readonly #byHash = new Map<number, number[]>();
  /**
   * Per candidate row (a compiled query lives as long as its request, and so do its candidates): a Map, not a
   * WeakMap, whose entries V8 must treat as ephemerons in every collection (hundreds per query).
   */
  readonly #cache = new Map<MatchableRow, Uint8Array>();
  /** The answer for a row whose `_present` is a number (filled per call). */
  readonly #scratch: Uint8Array;

  constructor(terms: readonly string[]) {
    this.#terms = [...new Set(terms)];
    this.#scratch = new Uint8Array(this.#terms.length);
    this.#terms.forEach((t, i) => {
      const h = TermPresence.#hash(t, 0, t.length);
      const list = this.#byHash.get(h);
      if (list) list.push(i);
      else this.#byHash.set(h, [i]);
    });
  }

  static #hash(s: string, from: number, to: number): number {
    let h = 0;
    for (let i = from; i < to; i++) h = (Math.imul(h, 31) + s.charCodeAt(i)) | 0;
    return h;
  }

  /** The position of `term` (one of the terms given at construction) in `present`'s answer. */
  slot(term: string): number {
    const i = this.#terms.indexOf(term);
    if (i < 0) throw new Error(`TermPresence: ${term} is not a query term`);
    return i;
  }

  /**
   * For each term given at construction (at its `slot`), 1 when the row's analysed text holds it, else 0. For a row
   * whose `_present` is a number, the answer is this presence's one scratch array: read it before the next call.
   */
  present(row: MatchableRow): Uint8Array {
    const given = row._present;
    if (typeof given === 'number') {
      const out = this.#scratch;
      for (let i = 0; i < out.length; i++) out[i] = (given >>> i) & 1;
      return out;
    }
    if (given !== undefined && given.length === this.#terms.length) return given;
    let present = this.#cache.get(row);
    if (present) return present;
    present = new Uint8Array(this.#terms.length);
    const text = need(row.search_text, 'search_text');
    const n = text.length;
    let i = 0;
    while (i < n) {
      while (i < n && text.charCodeAt(i) === 32) i++;
      let j = i;
      let h = 0;
      for (; j < n; j++) {
        const c = text.charCodeAt(j);
        if (c === 32) break;
        h = (Math.imul(h, 31) + c) | 0;
      }
      const hits = j > i ? this.#byHash.get(h) : undefined;
      if (hits) for (const k of hits) if (this.#terms[k]!.length === j - i && text.startsWith(this.#terms[k]!, i)) present[k] = 1;
      i = j;
    }
    this.#cache.set(row, present);
    return present;
  }
}

/**
 * Compiles an AST into typed clauses, each step its own function: one huge inlined function was costly for V8 to
 * re-optimise each time a new query shape deoptimised it, on the cores the searches use.
 */
export function compileQuery(ast: QueryAst): CompiledQuery {
  const langs: AnalyzerLang[] = queryLangs(positiveText(ast));
  const { ranked, mustWords, excluded } = analyseWords(ast, langs);
  const noText = mustWords.length === 0 && ranked.length === 0;
  const probe = probeTerms(mustWords, excluded, ranked);
  const checks = buildChecks(ast, { ranked, mustWords, excluded }, probe);
  return {
    ast,
    text: noText ? null : textQuery(mustWords, ranked, probe),
    titleTerms: titleTermsOf(ranked, mustWords),
    semanticText: semanticTextOf(ast),
    highlightTerms: highlightTermsOf(ast),
    hasPositiveSite: ast.ops.site.include.some((v) => v !== null),
    invalid: invalidValues(ast),
    matches: checks.matches,
    hitColumns: checks.hitColumns,
    matchColumns: checks.matchColumns,
    coordination: checks.coordination,
    coverageWords: checks.coverageWords,
    wordsHeld: checks.wordsHeld,
    selective: checks.codeChecks || mustWords.length > 1,
    textSelective: checks.codeChecks || (mustWords.length > 1 && noText),
    textCoversMatches: !noText && mustWords.length > 0,
  };
}

/** A query's words as the index sees them. */
interface AnalysedWords {
  /** Ranked words: bare words of a ranked query, question words left out while other words remain. */
  readonly ranked: readonly WordTerms[];
  /** Required words, phrase words and intitle words (deduplicated): the index must hold each (any of its terms). */
  readonly mustWords: readonly WordTerms[];
  readonly excluded: readonly WordTerms[];
}

/** The words of intitle: values (null: a value that could not be understood). */
function intitleWords(ast: QueryAst): string[] {
  return ast.ops.intitle.include.flatMap((v) => (v === null ? [] : [...(v as string[])]));
}

/** The intitle: values as phrases. */
function intitlePhrases(ast: QueryAst): string[] {
  return ast.ops.intitle.include.flatMap((v) => (v === null ? [] : [(v as string[]).join(' ')]));
}

/** Every positive word of the query in one string (what its languages are told from). */
function positiveText(ast: QueryAst): string {
  return [...ast.words, ...ast.required, ...ast.phrases.flat(), ...intitleWords(ast)].join(' ');
}

function analyseWords(ast: QueryAst, langs: readonly AnalyzerLang[]): AnalysedWords {
  const toTerms = (word: string): WordTerms => ({ word, terms: queryTerms(word, langs) });
  const indexed = (list: readonly WordTerms[]) => list.filter((w) => w.terms.length > 0);
  const bare = ast.kind === 'ranked' ? indexed(ast.words.map(toTerms)) : [];
  const content = bare.filter((w) => !QUESTION_WORDS.has(w.word));
  // Phrase and intitle words are required too (their order is checked in code).
  const requiredWords = indexed(ast.required.map(toTerms));
  const phraseWords = indexed([...ast.phrases.flat(), ...intitleWords(ast)].map(toTerms));
  return {
    ranked: content.length > 0 ? content : bare,
    mustWords: dedupeWords([...requiredWords, ...phraseWords]),
    excluded: indexed(ast.excludedWords.map(toTerms)),
  };
}

/** Query terms of the title boost, repeats kept. */
function titleTermsOf(ranked: readonly WordTerms[], mustWords: readonly WordTerms[]): string[] {
  return [...ranked, ...mustWords].flatMap((w) => w.terms);
}

/** The distinct terms whose presence in a candidate the checks and coordination read. */
function probeTerms(mustWords: readonly WordTerms[], excluded: readonly WordTerms[], ranked: readonly WordTerms[]): string[] {
  return [...new Set([...mustWords, ...excluded, ...ranked].flatMap((w) => w.terms))];
}

function semanticTextOf(ast: QueryAst): string {
  return [
    ...ast.words,
    ...ast.required.filter((w) => !ast.words.includes(w)),
    ...ast.phrases.map((p) => p.join(' ')),
    ...intitlePhrases(ast),
  ].join(' ');
}

function highlightTermsOf(ast: QueryAst): string[] {
  return [...ast.phrases.map((p) => p.join(' ')), ...intitlePhrases(ast), ...new Set([...ast.required, ...ast.words])];
}

function invalidValues(ast: QueryAst): CompiledQuery['invalid'] {
  const o = ast.ops;
  return {
    positive: PREFIX_OPS.reduce((s, op) => s + o[op].include.filter((v) => v === null).length, 0),
    negated: PREFIX_OPS.reduce((s, op) => s + o[op].exclude.filter((v) => v === null).length, 0),
  };
}

/** A compiled query's checks of a candidate, and the row fields they read. */
interface QueryChecks {
  readonly matches: CompiledQuery['matches'];
  readonly coordination: CompiledQuery['coordination'];
  readonly coverageWords: CompiledQuery['coverageWords'];
  readonly wordsHeld: CompiledQuery['wordsHeld'];
  readonly matchColumns: MatchColumn[];
  readonly hitColumns: MatchColumn[];
  /** Checks only code can make (prefixes, exclusions, phrases): they may reject many candidates of either arm. */
  readonly codeChecks: boolean;
}

function buildChecks(ast: QueryAst, words: AnalysedWords, probe: readonly string[]): QueryChecks {
  const o = ast.ops;
  const { ranked, mustWords, excluded } = words;
  const presence = new TermPresence(probe);
  // Plain loops: these run for every word of every candidate of both arms (thousands per query), where a closure and
  // an iterator per call were a large share of a hybrid query's allocations.
  // Each word's terms as positions in the presence answer, found once per query (not once per word of each candidate).
  const slots = new Map<WordTerms, Int32Array>();
  const slotsOf = (w: WordTerms): Int32Array => {
    let s = slots.get(w);
    if (!s) slots.set(w, (s = Int32Array.from(w.terms, (t) => presence.slot(t))));
    return s;
  };
  const held = (present: Uint8Array, s: Int32Array): boolean => {
    for (let i = 0; i < s.length; i++) if (present[s[i]!] === 1) return true;
    return false;
  };
  const mustSlots = mustWords.map(slotsOf);
  const excludedSlots = excluded.map(slotsOf);

  const bodyTextChecks = ast.phrases.length > 0 || ast.excludedPhrases.length > 0;
  const termChecks = mustWords.length > 0 || excluded.length > 0;
  const prefixChecks = PREFIX_OPS.filter((op) => o[op].include.length > 0 || o[op].exclude.some((v) => v !== null));
  const matchColumns: MatchColumn[] = [
    ...(termChecks ? (['search_text'] as const) : []),
    ...(bodyTextChecks ? (['text'] as const) : []),
    ...prefixChecks.flatMap((op) => (OPERATORS[op].column === 'url' || OPERATORS[op].column === 'filetype' ? [OPERATORS[op].column] : [])),
  ];
  // Coordination reads the candidate's terms when the query has two ranked words or more.
  const hitColumns: MatchColumn[] = !termChecks && ranked.length > 1 ? ['search_text', ...matchColumns] : matchColumns;

  const matches = (row: MatchableRow): boolean => {
    for (const op of prefixChecks) {
      const def = OPERATORS[op];
      const field = def.column === 'title' ? row.title : def.column === 'host' ? row.host : need(row[def.column], def.column);
      const inc = o[op].include;
      if (inc.length > 0) {
        const ok = def.alternatives
          ? inc.some((v) => v !== null && def.test(field, v))
          : inc.every((v) => v !== null && def.test(field, v));
        if (!ok) return false;
      }
      if (o[op].exclude.some((v) => v !== null && def.test(field, v))) return false;
    }
    if (mustSlots.length > 0 || excludedSlots.length > 0) {
      const present = presence.present(row);
      for (let i = 0; i < mustSlots.length; i++) if (!held(present, mustSlots[i]!)) return false;
      for (let i = 0; i < excludedSlots.length; i++) if (held(present, excludedSlots[i]!)) return false;
    }
    if (bodyTextChecks) {
      const body = wordTokens(need(row.text, 'text'));
      const title = wordTokens(row.title);
      if (!ast.phrases.every((p) => containsSeq(body, p) || containsSeq(title, p))) return false;
      if (ast.excludedPhrases.some((p) => containsSeq(body, p) || containsSeq(title, p))) return false;
    }
    return true;
  };

  const weights = new Map<string, { w: WordTerms; n: number }>();
  for (const w of ranked) {
    const cur = weights.get(w.word);
    if (cur) cur.n++;
    else weights.set(w.word, { w, n: 1 });
  }
  const weightList = [...weights.values()].map((x) => ({ slots: slotsOf(x.w), n: x.n }));
  const totalWeight = weightList.reduce((s, x) => s + x.n, 0);
  const coordination = (row: MatchableRow): number => {
    if (weightList.length < 2) return 1;
    const present = presence.present(row);
    let got = 0;
    for (let i = 0; i < weightList.length; i++) if (held(present, weightList[i]!.slots)) got += weightList[i]!.n;
    return 0.5 + (0.5 * got) / totalWeight;
  };

  // Relevance weighs the ranked words and the required ones not ranked too.
  const covered = [...weights.values()].map((x) => ({ w: x.w, slots: slotsOf(x.w), n: x.n }));
  for (const w of mustWords) if (!covered.some((c) => same(c.w.terms, w.terms))) covered.push({ w, slots: slotsOf(w), n: 1 });
  const coverageWords = covered.map((c) => ({ word: c.w.word, terms: c.w.terms, n: c.n }));
  const wordsHeld = (row: MatchableRow): Uint8Array => {
    const present = presence.present(row);
    const out = new Uint8Array(covered.length);
    for (let i = 0; i < covered.length; i++) if (held(present, covered[i]!.slots)) out[i] = 1;
    return out;
  };

  const codeChecks = prefixChecks.length > 0 || excluded.length > 0 || ast.excludedPhrases.length > 0 || ast.phrases.length > 0;
  return { matches, coordination, coverageWords, wordsHeld, matchColumns, hitColumns, codeChecks };
}

function dedupeWords(list: readonly WordTerms[]): WordTerms[] {
  const out: WordTerms[] = [];
  for (const w of list) if (!out.some((x) => same(x.terms, w.terms))) out.push(w);
  return out;
}

/** The BM25 arm's query (`CompiledQuery.text`): required groups, ranked terms weighted by their repeats. */
function textQuery(must: readonly WordTerms[], ranked: readonly WordTerms[], probe: readonly string[]): TextQuery {
  const weights = new Map<string, number>();
  for (const w of ranked) for (const t of new Set(w.terms)) weights.set(t, (weights.get(t) ?? 0) + 1);
  return { must: must.map((w) => [...new Set(w.terms)]), should: [...weights].map(([term, weight]) => ({ term, weight })), probe };
}

/** Whether the AST has anything positive to look for (text or at least one include operator). */
export function hasPositiveConstraint(ast: QueryAst): boolean {
  return ast.words.length + ast.required.length + ast.phrases.length + PREFIX_OPS.reduce((s, op) => s + ast.ops[op].include.length, 0) > 0;
}

/**
 * What an empty strict query's answer should say: which operators made it strict and that bare words became required,
 * so a question that merely contains operator syntax is not mistaken for one nothing answers. Empty when nothing was required.
 */
export function strictQueryHint(ast: QueryAst): string {
  if (ast.kind !== 'strict' || ast.words.length === 0) return '';
  const used = [
    ...(ast.phrases.length > 0 ? ['a quoted phrase'] : []),
    ...(ast.excludedWords.length + ast.excludedPhrases.length > 0 ? ['a -word exclusion'] : []),
    ...PREFIX_OPS.filter((op) => ast.ops[op].include.length + ast.ops[op].exclude.length > 0).map((op) => `${op}:`),
  ];
  return (
    ` The query has operators (${used.join(', ')}), so each of its other words had to match as well; ` +
    'without operators any of the words may match and pages are ranked by how many they hold.'
  );
}
