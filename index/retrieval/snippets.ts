/**
 * Query-biased excerpts for search results: the window covering the most (and rarest) query terms, with highlights.
 * Snippet rules (nosnippet, max-snippet) apply, and callers pass snippetText with data-nosnippet parts removed, so
 * nothing the page hides can leak into an excerpt.
 */
import type { SnippetPolicy } from '../../page-model.js';

/** Default excerpt length in characters (UTF-16 code units, ellipses included). */
export const DEFAULT_EXCERPT_CHARS = 240;

const ELLIPSIS = '…';

/** A built excerpt. `highlights` are [start, end) offsets into `text`, sorted and non-overlapping. */
export interface Excerpt {
  readonly text: string;
  readonly highlights: [number, number][];
}

/** Options of {@link buildExcerpt}. */
export interface ExcerptOptions {
  /**
   * Longest excerpt in characters, ellipses included; the page's max-snippet, when smaller, wins.
   * @default 240
   */
  readonly maxChars?: number;
}

/** Words too common to steer the window (English and French); they still get highlighted when matched. */
const STOPWORDS = new Set(
  (
    'a an and are as at be by for from has have in is it its of on or that the this to was were will with ' +
    'au aux avec ce ces dans de des du elle en est et il ils la le les leur mais ne ou par pas pour qui que sa se ses son sur un une'
  ).split(' '),
);

/**
 * Text folded for matching (NFD without marks, lower case) and where each folded unit came from. ASCII maps unit for
 * unit, so only other characters are recorded (`anchors`): a few numbers per passage, not two arrays of its length.
 */
interface Folded {
  readonly text: string;
  /**
   * Per non-ASCII source character, in order, four numbers: the folded offset of its first unit, how many units it
   * folded to (0 for a lone combining mark), and its [start, end) in the source. Empty for ASCII text.
   */
  readonly anchors: readonly number[];
}

/** A unit outside ASCII. */
const NON_ASCII = /[\u0080-\uffff]/;

/**
 * Only ASCII: folding is lower-casing, unit for unit. One regex test (the engine's native scan, a few times faster than a
 * loop over the units here).
 */
function asciiOnly(src: string): boolean {
  return !NON_ASCII.test(src);
}

const MARKS = /\p{M}/gu;

/** Typographic apostrophes fold to ASCII so "l’école" matches "l'ecole". */
const APOSTROPHES = /[’‘ʼ´`]/gu;

function foldChar(ch: string): string {
  return ch.normalize('NFD').replace(MARKS, '').replace(APOSTROPHES, "'").toLowerCase();
}

const NO_ANCHORS: readonly number[] = [];

function foldWithMap(src: string): Folded {
  if (asciiOnly(src)) return { text: src.toLowerCase(), anchors: NO_ANCHORS };
  const parts: string[] = [];
  const anchors: number[] = [];
  let folded = 0; // folded units so far
  let run = 0; // start of the current ASCII run, copied in one slice (lower-cased) for speed
  const flush = (to: number) => {
    if (to > run) {
      parts.push(src.slice(run, to).toLowerCase());
      folded += to - run;
    }
  };
  for (let i = 0; i < src.length; ) {
    const c = src.charCodeAt(i);
    if (c < 128) {
      i++;
      continue;
    }
    flush(i);
    const ch = String.fromCodePoint(src.codePointAt(i) ?? c);
    const f = foldChar(ch);
    anchors.push(folded, f.length, i, i + ch.length);
    parts.push(f);
    folded += f.length;
    i += ch.length;
    run = i;
  }
  flush(src.length);
  return { text: parts.join(''), anchors };
}

/** The source range of the character folded unit `f` came from. */
function sourceOf(folded: Folded, f: number): [number, number] {
  const a = folded.anchors;
  // The last anchor whose first folded unit is at or before f (binary search over anchors of 4 numbers).
  let lo = 0;
  let hi = a.length / 4 - 1;
  let k = -1;
  while (lo <= hi) {
    const mid = (lo + hi) >>> 1;
    if (a[mid * 4]! <= f) {
      k = mid;
      lo = mid + 1;
    } else hi = mid - 1;
  }
  if (k < 0) return [f, f + 1]; // ASCII before any other character
  const at = a[k * 4]!;
  const units = a[k * 4 + 1]!;
  if (f < at + units) return [a[k * 4 + 2]!, a[k * 4 + 3]!];
  const s = a[k * 4 + 3]! + (f - at - units); // ASCII after anchor k
  return [s, s + 1];
}

function foldTerm(term: string): string {
  return term.normalize('NFD').replace(MARKS, '').replace(APOSTROPHES, "'").toLowerCase().replace(/\s+/gu, ' ').trim();
}

const WORD_CHAR = /[\p{L}\p{N}]/u;

/** Whether the UTF-16 unit at `i` is a letter or digit (`WORD_CHAR`), without a regex for ASCII. */
function wordUnitAt(text: string, i: number): boolean {
  return i >= 0 && i < text.length && wordUnit(text, i, text.charCodeAt(i));
}

/** Per ASCII unit, 1 for a letter or digit. */
const WORD_ASCII = Uint8Array.from({ length: 128 }, (_, c) =>
  (c >= 48 && c <= 57) || (c >= 65 && c <= 90) || (c >= 97 && c <= 122) ? 1 : 0,
);

/** `wordUnitAt` for a position in range whose unit `c` the caller has read. */
function wordUnit(text: string, i: number, c: number): boolean {
  return c < 128 ? WORD_ASCII[c] === 1 : WORD_CHAR.test(text[i]!);
}

interface Match {
  /** Offsets in the normalised source text. */
  readonly start: number;
  readonly end: number;
  /** Index of the term in the deduplicated term list. */
  readonly term: number;
}

/** Matches any whitespace `\s+` → ' ' would change: a run of two or more, or one other than a plain space. */
const UNCOLLAPSED_SPACE = /[^\S ]| {2}/u;

/** `text` with its whitespace runs collapsed to one space, trimmed; most passages have none to collapse. */
function collapseSpaces(text: string): string {
  return (UNCOLLAPSED_SPACE.test(text) ? text.replace(/\s+/gu, ' ') : text).trim();
}

/**
 * Term weights in integer units of 1/120: a stop word 0.1 (12), any other term 1 + min(length, 12) / 24 (120 + 5 per
 * character up to 12), so that a window's score is an exact integer.
 */
const WEIGHT_UNITS = 120;

/**
 * The folded, deduplicated terms of a query, their weights, and the terms by the UTF-16 unit they start with: the
 * same for each result of the query (memoised).
 */
interface PreparedTerms {
  readonly uniq: string[];
  readonly weight: number[];
  /** Term indexes by first unit: indexed by the unit below 128 (an array read per position), else by a map. */
  readonly byFirstAscii: readonly (readonly number[] | undefined)[];
  readonly byFirstOther: ReadonlyMap<number, readonly number[]>;
}
const prepared = new WeakMap<readonly string[], PreparedTerms>();
function preparedTerms(terms: readonly string[]): PreparedTerms {
  let p = prepared.get(terms);
  if (!p) {
    const uniq = [...new Set(terms.map(foldTerm).filter((t) => t !== '' && WORD_CHAR.test(t)))];
    const weight = uniq.map((t) => (STOPWORDS.has(t) ? WEIGHT_UNITS / 10 : WEIGHT_UNITS + (Math.min(t.length, 12) * WEIGHT_UNITS) / 24));
    const byFirstAscii: (number[] | undefined)[] = new Array<number[] | undefined>(128).fill(undefined);
    const byFirstOther = new Map<number, number[]>();
    uniq.forEach((t, i) => {
      const u = t.charCodeAt(0);
      if (u < 128) (byFirstAscii[u] ??= []).push(i);
      else {
        const list = byFirstOther.get(u);
        if (list) list.push(i);
        else byFirstOther.set(u, [i]);
      }
    });
    prepared.set(terms, (p = { uniq, weight, byFirstAscii, byFirstOther }));
  }
  return p;
}

/** Matches collected per text at most: enough to choose a window; bounds the work on huge passages. */
const MAX_MATCHES = 5000;

/**
 * Whole-word (or, for 4+ character terms, word-prefix) occurrences of every term, sorted by position, overlaps
 * dropped. One pass comparing only terms that start with the unit found; finds exactly what per-term `indexOf`
 * finds (the tests' reference), faster.
 */
function termMatches(folded: Folded, terms: PreparedTerms): Match[] {
  const out: Match[] = [];
  const ft = folded.text;
  const uniq = terms.uniq;
  const ascii = terms.byFirstAscii;
  const other = terms.byFirstOther;
  const n = ft.length;
  // `at` is always a position a term may start at: the text's start, or after a unit that is not a letter or digit.
  for (let at = 0; at < n && out.length <= MAX_MATCHES; ) {
    const c = ft.charCodeAt(at);
    const candidates = c < 128 ? ascii[c] : other.get(c);
    if (candidates !== undefined)
      for (const ti of candidates) {
        const term = uniq[ti]!;
        // (Compared unit by unit: a `startsWith` call per position was most of the pass.)
        const len = term.length;
        if (at + len > n) continue;
        let j = 1; // the first unit matched already
        while (j < len && ft.charCodeAt(at + j) === term.charCodeAt(j)) j++;
        if (j < len) continue;
        let stop = at + len;
        if (wordUnitAt(ft, stop)) {
          // A prefix of a longer word ("vaccin" in "vaccination") counts for longer terms; the whole word is marked.
          if (term.length < 4) continue;
          while (wordUnitAt(ft, stop)) stop++;
        }
        const s = folded.anchors.length === 0 ? at : sourceOf(folded, at)[0];
        const e = folded.anchors.length === 0 ? stop : sourceOf(folded, stop - 1)[1];
        out.push({ start: s, end: e, term: ti });
      }
    // Past a letter or digit, the rest of its word (no term starts inside a word) and the unit after it, which follows
    // a word unit; past any other unit, the next position.
    if (wordUnit(ft, at, c)) {
      at++;
      while (at < n && wordUnit(ft, at, ft.charCodeAt(at))) at++;
    }
    at++;
  }
  out.sort((a, b) => a.start - b.start || b.end - a.end);
  // Drop overlaps (a phrase and one of its words): keep the earlier/longer one.
  const kept: Match[] = [];
  for (const m of out) {
    const last = kept[kept.length - 1];
    if (last && m.start < last.end) continue;
    kept.push(m);
  }
  return kept;
}

/**
 * The term occurrences an excerpt of `text` is chosen by and highlights (`buildExcerpt`'s matching, exposed for its
 * tests): [start, end) in `text` with its whitespace runs collapsed and trimmed, and the folded term found there.
 */
export function excerptMatches(text: string, terms: readonly string[]): { start: number; end: number; term: string }[] {
  const src = collapseSpaces(text);
  const prep = preparedTerms(terms);
  return termMatches(foldWithMap(src), prep).map((m) => ({ start: m.start, end: m.end, term: prep.uniq[m.term]! }));
}

/** Start of the sentence containing `at`, if it begins at or after `floor`; -1 otherwise (or at text start: 0). */
function lastSentenceStart(src: string, at: number, floor: number): number {
  for (let i = at - 1; i >= Math.max(1, floor); i--) {
    if (src[i] === ' ' && /[.!?…]/u.test(src[i - 1] ?? '')) return i + 1;
  }
  return floor <= 0 ? 0 : -1;
}

/** Cuts [from, to) of `src` inward to word boundaries; returns the adjusted range (may be empty). */
function snapInward(src: string, from: number, to: number): [number, number] {
  let s = from;
  if (s > 0 && WORD_CHAR.test(src[s - 1] ?? '') && WORD_CHAR.test(src[s] ?? '')) {
    const sp = src.indexOf(' ', s);
    s = sp < 0 || sp >= to ? s : sp + 1;
  }
  let e = to;
  if (e < src.length && WORD_CHAR.test(src[e] ?? '') && WORD_CHAR.test(src[e - 1] ?? '')) {
    const sp = src.lastIndexOf(' ', e - 1);
    e = sp <= s ? e : sp;
  }
  // Never split a surrogate pair when a hard cut was unavoidable.
  const cs = src.charCodeAt(s);
  if (cs >= 0xdc00 && cs <= 0xdfff) s++;
  const ce = src.charCodeAt(e - 1);
  if (ce >= 0xd800 && ce <= 0xdbff) e--;
  while (s < e && src[s] === ' ') s++;
  while (e > s && src[e - 1] === ' ') e--;
  return [s, Math.max(s, e)];
}

/**
 * Builds the excerpt of `text` for `terms` under `policy`, or null when the page forbids excerpts or the text is empty.
 * The window maximises weighted distinct terms (case- and diacritic-insensitive), then occurrences, then earliness;
 * ellipses count toward the length bound; with no match the excerpt is the text's start.
 */
export function buildExcerpt(text: string, terms: readonly string[], policy: SnippetPolicy, opts: ExcerptOptions = {}): Excerpt | null {
  if (policy.nosnippet || policy.maxSnippet === 0) return null;
  let limit = Math.floor(opts.maxChars ?? DEFAULT_EXCERPT_CHARS);
  if (policy.maxSnippet !== null && policy.maxSnippet > 0) limit = Math.min(limit, Math.floor(policy.maxSnippet));
  if (!(limit >= 1)) return null;
  const src = collapseSpaces(text);
  if (src.length === 0) return null;

  const folded = foldWithMap(src);
  const prep = preparedTerms(terms);
  const { uniq, weight } = prep;
  const matches = termMatches(folded, prep);

  if (src.length <= limit) return { text: src, highlights: matches.map((m) => [m.start, m.end]) };

  // Choose the anchor: for each match as the first one in the window, score what fits within `limit`.
  const budget = Math.max(1, limit - 2); // room for both ellipses
  let bestI = -1;
  let bestJ = -1;
  let bestScore = -1;
  // A sliding window over the matches, scored incrementally: per distinct term in the window 100 times its weight, plus its
  // weight once per occurrence (repeats help a little). Weights are in integer units (`WEIGHT_UNITS`), so every sum
  // is exact and a tie keeps the earliest window.
  const count = new Uint32Array(uniq.length);
  let distinct = 0;
  let occurrences = 0;
  const add = (t: number) => {
    if (count[t]!++ === 0) distinct += 100 * weight[t]!;
    occurrences += weight[t]!;
  };
  for (let i = 0, j = -1; i < matches.length; i++) {
    const first = matches[i]!;
    while (j < i) add(matches[++j]!.term);
    while (j + 1 < matches.length && matches[j + 1]!.end - first.start <= budget) add(matches[++j]!.term);
    const score = distinct + occurrences;
    // Match i leaves the window before the next one starts.
    if (--count[first.term]! === 0) distinct -= 100 * weight[first.term]!;
    occurrences -= weight[first.term]!;
    if (first.end - first.start > budget) continue;
    if (score > bestScore) {
      bestScore = score;
      bestI = i;
      bestJ = j;
    }
  }

  let from: number;
  let mustEnd = 0; // the window has to reach past this offset (end of its last chosen match)
  if (bestI < 0) {
    from = 0;
  } else {
    const first = matches[bestI]!;
    const last = matches[bestJ]!;
    const spare = budget - (last.end - first.start);
    // Lead with some context, preferring a sentence start within reach.
    let lead = Math.min(Math.floor(spare / 3), first.start);
    const sentenceStart = lastSentenceStart(src, first.start, first.start - spare);
    if (sentenceStart >= 0) lead = first.start - sentenceStart;
    from = first.start - lead;
    mustEnd = last.end;
  }

  // Ellipsis accounting: both ends are known only after snapping, so size for the worst case, then re-fit.
  const lead = from > 0 ? ELLIPSIS.length : 0;
  let to = Math.min(src.length, from + limit - lead - ELLIPSIS.length);
  if (to >= src.length) to = src.length;
  else {
    // End on a sentence when one closes in the last third of the window after the last match.
    const floor = Math.max(mustEnd, from + Math.floor(((limit - lead) * 2) / 3));
    const dot = src.lastIndexOf('. ', to - 1);
    if (dot >= floor && dot + 1 <= to) to = dot + 1;
  }
  const [s, e] = snapInward(src, from, to);
  let start = s;
  let stop = e;
  if (stop <= start) {
    // A single word longer than the budget: hard cut.
    start = from;
    stop = Math.min(src.length, from + Math.max(1, limit - (from > 0 ? 1 : 0) - (from + limit < src.length ? 1 : 0)));
    if (limit <= 2) stop = Math.min(src.length, from + limit); // no room for ellipses at all
    const ce = src.charCodeAt(stop - 1);
    if (ce >= 0xd800 && ce <= 0xdbff && stop - 1 > start) stop--;
  }
  const pre = start > 0 && limit > 2 ? ELLIPSIS : '';
  const post = stop < src.length && limit > 2 ? ELLIPSIS : '';
  let body = src.slice(start, stop);
  if (pre.length + body.length + post.length > limit) body = body.slice(0, Math.max(0, limit - pre.length - post.length));
  const out = pre + body + post;
  const highlights: [number, number][] = [];
  for (const m of matches) {
    if (m.start >= start && m.end <= start + body.length) highlights.push([m.start - start + pre.length, m.end - start + pre.length]);
  }
  return { text: out, highlights };
}
