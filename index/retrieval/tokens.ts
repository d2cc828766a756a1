/**
 * Token estimates for budgets (svc_context `max_tokens`) without loading a vocabulary: text is segmented like the
 * o200k_base pre-tokenizer and each piece priced by its shape. Price tables are fitted against real o200k counts;
 * accuracy is in docs/bench-context.md, and gpt-tokenizer is a dev dependency only to check it.
 */

// Expected o200k tokens for a Latin-script word piece by letter count 1..18, fitted and made non-decreasing so a longer
// word never costs less. Separate profiles for English-like and accented text, because o200k splits French words
// of a given length more often.
const EN_LOWER = [1, 1, 1, 1.01, 1.03, 1.07, 1.11, 1.15, 1.25, 1.31, 1.49, 1.61, 1.74, 2.06, 2.33, 2.89, 3.52, 4.2];
const EN_CAPITAL = [1, 1.02, 1.16, 1.26, 1.28, 1.36, 1.4, 1.53, 1.7, 1.81, 2.11, 2.21, 2.7, 2.95, 3, 3.65, 4.3, 4.8];
const EN_LOWER_ACCENTED = [1.05, 1.25, 1.25, 1.25, 1.39, 1.46, 1.69, 1.8, 1.85, 2.06, 2.26, 2.33, 2.9, 2.95, 3, 3.3, 3.6, 4];
const FR_LOWER = [1, 1, 1.01, 1.03, 1.09, 1.22, 1.3, 1.4, 1.48, 1.71, 1.79, 1.85, 1.95, 2.2, 2.35, 2.9, 3.5, 4.2];
const FR_CAPITAL = [1, 1, 1.05, 1.22, 1.31, 1.57, 1.63, 1.76, 1.95, 1.98, 2.11, 2.21, 2.7, 2.95, 3, 3.65, 4.3, 4.8];
const FR_LOWER_ACCENTED = [1, 1.02, 1.13, 1.13, 1.26, 1.45, 1.68, 1.68, 1.83, 1.85, 2.13, 2.32, 2.35, 2.46, 2.71, 2.96, 3.21, 3.46];
const CAPITAL_ACCENTED = [1.05, 1.6, 1.9, 1.9, 2, 2.2, 2.3, 2.4, 2.5, 2.6, 3, 3.3, 3.6, 3.9, 4.2, 4.5, 4.8, 5.1];
const UPPER_CASE = [1, 1.07, 1.55, 2.05, 2.45, 2.5, 2.5, 2.6, 2.7, 2.8, 3, 3.2, 3.5, 3.8, 4.1, 4.4, 4.7, 5];
/** Extra tokens per letter beyond Latin-1 (Latin Extended: Polish, Czech, Hungarian, Vietnamese…). */
const EXTENDED_LETTER_COST = 1.2;
/** Extra tokens per combining mark (decomposed accents, stacked diacritics). */
const MARK_COST = 1;
/** Share of accented letters above which a text is priced with the accented-language profile. */
const ACCENTED_SHARE = 0.005;
// Mixed punctuation runs by length 1..6; longer ones add 0.7 per symbol. (A run of one repeated symbol, emoji and
// swallowed newlines are priced separately in the scanner.)
const PUNCT_COST = [1, 1.02, 1.3, 1.9, 2.5, 3];

/** Letters of scripts other than Latin (checked only for characters the range tests below leave open). */
const OTHER_LETTER = /\p{L}/u;

// Character classes of the scanner.
const LOWER = 1;
const UPPER = 2;
/** Letters without case (CJK, most other scripts) and combining marks: they continue any word. */
const CASELESS = 3;
const DIGIT = 4;
const NEWLINE = 5;
const SPACE = 6;
const PUNCT = 7;

function isCjk(c: number): boolean {
  return (c >= 0x3040 && c <= 0x30ff) || (c >= 0x3400 && c <= 0x9fff) || (c >= 0xac00 && c <= 0xd7af) || (c >= 0xf900 && c <= 0xfaff);
}

function isSpaceCode(c: number): boolean {
  return (
    c === 0x20 ||
    (c >= 9 && c <= 13) ||
    c === 0xa0 ||
    c === 0x1680 ||
    (c >= 0x2000 && c <= 0x200a) ||
    c === 0x2028 ||
    c === 0x2029 ||
    c === 0x202f ||
    c === 0x205f ||
    c === 0x3000 ||
    c === 0xfeff
  );
}

/** Class of the UTF-16 unit at `i` (a surrogate pair is PUNCT: emoji and rare symbols). */
function classAt(text: string, i: number): number {
  const c = text.charCodeAt(i);
  if (c < 128) {
    if (c >= 97 && c <= 122) return LOWER;
    if (c >= 65 && c <= 90) return UPPER;
    if (c >= 48 && c <= 57) return DIGIT;
    if (c === 10 || c === 13) return NEWLINE;
    if (c === 32 || (c >= 9 && c <= 12)) return SPACE;
    return PUNCT;
  }
  if (isSpaceCode(c)) return SPACE;
  if ((c >= 0xc0 && c <= 0x24f && c !== 0xd7 && c !== 0xf7) || (c >= 0x1e00 && c <= 0x1eff)) {
    const ch = text[i] ?? '';
    return ch === ch.toLowerCase() ? LOWER : UPPER;
  }
  if (c >= 0x300 && c <= 0x36f) return CASELESS; // combining marks
  if (c < 0x370) {
    // The rest of Latin-1 and the IPA/modifier blocks: a few letters (µ, ª, º, ɛ…) among symbols.
    const ch = text[i] ?? '';
    if (!OTHER_LETTER.test(ch)) return PUNCT;
    return ch === ch.toLowerCase() ? LOWER : UPPER;
  }
  if ((c >= 0x2000 && c <= 0x2bff) || (c >= 0x3000 && c <= 0x303f) || (c >= 0xd800 && c <= 0xdfff) || c >= 0xfe00) return PUNCT;
  if (isCjk(c)) return CASELESS;
  return OTHER_LETTER.test(text[i] ?? '') ? CASELESS : PUNCT;
}

function isLetterClass(k: number): boolean {
  return k === LOWER || k === UPPER || k === CASELESS;
}

function lookup(table: readonly number[], n: number): number {
  const last = table[table.length - 1] ?? 1;
  if (n <= 0) return 1;
  if (n > table.length) return last + (n - table.length) / 3;
  return table[n - 1] ?? last;
}

/** Price of a punctuation/symbol piece with `visible` non-space characters. */
function punctCost(visible: number): number {
  return visible <= PUNCT_COST.length ? (PUNCT_COST[visible - 1] ?? 1) : 3 + (visible - PUNCT_COST.length) * 0.7;
}

/**
 * The estimator never prices more than this many UTF-16 units as one token (every piece costs at least its length
 * / 24), so `24 · estimateTokens(s) + 12 ≥ s.length`: callers can reject a text as too long for a budget without
 * estimating it (tested as a property).
 */
export const MAX_CHARS_PER_TOKEN = 24;

/**
 * Estimated o200k_base token count of `text` (integer, ≥ 0; 0 only for the empty string).
 * One pass segmenting like o200k's pre-tokenizer regex, pricing each piece: no vocabulary, regex or substrings.
 */
export function estimateTokens(text: string): number {
  if (text.length === 0) return 0;
  return Math.max(1, Math.round(scanPieces(text, Infinity).sum));
}

/**
 * Scanner state at the start of the last piece of a text: enough to price a longer text that begins with the same
 * text without rescanning it. Opaque to callers.
 */
export interface TokenScanState {
  readonly offset: number;
  readonly sum: number;
  readonly sumFr: number;
  readonly common: number;
  readonly latinLetters: number;
  readonly accentedLetters: number;
}

/**
 * {@link estimateTokens} of `text`, resuming from `resume` (from a call on a prefix of `text`), plus the state to
 * resume from next. Exactly `estimateTokens(text)`, scanning only from the previous last piece, which alone can change.
 */
export function estimateTokensIncremental(text: string, resume?: TokenScanState): { tokens: number; state: TokenScanState } {
  const r = scanPieces(text, Infinity, resume);
  return { tokens: text.length === 0 ? 0 : Math.max(1, Math.round(r.sum)), state: r.last };
}

/**
 * The scanner behind {@link estimateTokens}: prices pieces left to right and stops before the piece that would
 * take the rounded total above `stopAbove`; `end` is where the pieces it priced end.
 */
function scanPieces(text: string, stopAbove: number, resume?: TokenScanState): { sum: number; end: number; last: TokenScanState } {
  const n = text.length;
  // Latin words are priced in both profiles; the share of accented letters seen so far picks one.
  let sum = resume?.sum ?? 0;
  let sumFr = resume?.sumFr ?? 0;
  let common = resume?.common ?? 0; // pieces priced the same in both profiles
  let latinLetters = resume?.latinLetters ?? 0;
  let accentedLetters = resume?.accentedLetters ?? 0;
  const current = () => (accentedLetters > latinLetters * ACCENTED_SHARE ? sumFr : sum) + common;
  let i = Math.min(resume?.offset ?? 0, n);
  // State at the start of the current piece (for TokenScanState).
  let at = i;
  let atSum = sum;
  let atSumFr = sumFr;
  let atCommon = common;
  let atLatin = latinLetters;
  let atAccented = accentedLetters;
  let prevSpace = false;
  while (i < n) {
    const k = classAt(text, i);
    // How a whitespace run splits depends on all of it (a later newline changes the pieces before it), so the
    // resume point is the start of the run when the last pieces are whitespace, else the start of the last piece.
    let spacePiece = k === NEWLINE;
    if (k === SPACE) {
      const next = i + 1 < n ? classAt(text, i + 1) : 0;
      spacePiece = !(isLetterClass(next) || (next === PUNCT && text.charCodeAt(i) === 32));
    }
    if (!(spacePiece && prevSpace)) {
      at = i;
      atSum = sum;
      atSumFr = sumFr;
      atCommon = common;
      atLatin = latinLetters;
      atAccented = accentedLetters;
    }
    prevSpace = spacePiece;
    // 1. A word, possibly with one leading non-letter, non-digit, non-newline character.
    let w = -1;
    if (isLetterClass(k)) w = i;
    else if ((k === SPACE || k === PUNCT) && i + 1 < n) {
      const step = k === PUNCT && text.charCodeAt(i) >= 0xd800 && text.charCodeAt(i) <= 0xdbff ? 2 : 1;
      if (i + step < n && isLetterClass(classAt(text, i + step))) w = i + step;
    }
    if (w >= 0) {
      let letters = 0;
      let upper = 0;
      let accented = false;
      let cjk = 0;
      let other = 0;
      let seenLower = false;
      let accentedHere = 0;
      let marks = 0;
      let extended = 0; // letters beyond Latin-1 (ł, ś, č, ő…): rare in the vocabulary, they split words
      let j = w;
      for (; j < n; j++) {
        const kj = classAt(text, j);
        const c = text.charCodeAt(j);
        if (kj === LOWER) {
          seenLower = true;
          letters++;
          if (c >= 128) {
            accented = true;
            accentedHere++;
            if (c >= 0x100) extended++;
          }
        } else if (kj === UPPER) {
          if (seenLower) break; // "camelCase" → "camel" + "Case"
          letters++;
          upper++;
          if (c >= 128) {
            accented = true;
            accentedHere++;
            if (c >= 0x100) extended++;
          }
        } else if (kj === CASELESS) {
          if (c >= 0x300 && c <= 0x36f) {
            marks++; // a combining mark stays with its letter, but decomposed text costs more
            continue;
          }
          letters++;
          if (isCjk(c)) cjk++;
          else other++;
        } else break;
      }
      // English contractions ('s 't 're 've 'm 'll 'd) stay on the word.
      if (text.charCodeAt(j) === 39) {
        const a = (text[j + 1] ?? '').toLowerCase();
        const b = (text[j + 2] ?? '').toLowerCase();
        const len =
          a === 's' || a === 't' || a === 'm' || a === 'd'
            ? 1
            : (a === 'r' && b === 'e') || (a === 'v' && b === 'e') || (a === 'l' && b === 'l')
              ? 2
              : 0;
        if (len > 0) {
          letters += len;
          j += 1 + len;
        }
      }
      let cost: number;
      let costFr: number;
      if (cjk > 0 || other > 0) {
        // Other scripts: o200k has many CJK tokens (about one per character); alphabetic scripts such as
        // Cyrillic, Greek or Arabic merge into roughly one token per three characters.
        cost = costFr = Math.max(1, cjk * 0.9 + (letters - cjk) / 3);
      } else if (upper === 0) {
        cost = lookup(accented ? EN_LOWER_ACCENTED : EN_LOWER, letters);
        costFr = lookup(accented ? FR_LOWER_ACCENTED : FR_LOWER, letters);
      } else if (letters > 1 && upper === letters) cost = costFr = lookup(UPPER_CASE, letters) + (accented ? 0.2 : 0);
      else {
        cost = lookup(accented ? CAPITAL_ACCENTED : EN_CAPITAL, letters);
        costFr = lookup(accented ? CAPITAL_ACCENTED : FR_CAPITAL, letters);
      }
      if (extended > 0 || marks > 0) {
        const extra = EXTENDED_LETTER_COST * extended + MARK_COST * marks;
        cost += extra;
        costFr += extra;
      }
      if (cjk === 0 && other === 0) {
        latinLetters += letters;
        accentedLetters += accentedHere;
      }
      const fr = accentedLetters > latinLetters * ACCENTED_SHARE;
      if (Math.round((fr ? sumFr + costFr : sum + cost) + common) > stopAbove) break;
      sum += cost;
      sumFr += costFr;
      i = j;
      continue;
    }
    // 2. Digits, in groups of at most three.
    if (k === DIGIT) {
      let j = i + 1;
      while (j < n && j < i + 3 && classAt(text, j) === DIGIT) j++;
      if (Math.round(current() + 1) > stopAbove) break;
      common += 1;
      i = j;
      continue;
    }
    // 3. Punctuation run, with an optional leading space, swallowing following newlines and slashes.
    if (k === PUNCT || (text.charCodeAt(i) === 32 && i + 1 < n && classAt(text, i + 1) === PUNCT)) {
      let j = k === PUNCT ? i : i + 1;
      let visible = 0; // BMP symbols
      let astral = 0; // emoji and other symbols outside the BMP: about one token each
      const first = text.charCodeAt(j);
      let same = true; // one character repeated ("-----", "====="): o200k has long tokens for those
      while (j < n && classAt(text, j) === PUNCT) {
        const c = text.charCodeAt(j);
        if (c >= 0xd800 && c <= 0xdbff) astral++;
        else if (!(c >= 0xdc00 && c <= 0xdfff)) visible++;
        if (c !== first) same = false;
        j++;
      }
      const runEnd = j;
      while (j < n && (classAt(text, j) === NEWLINE || text.charCodeAt(j) === 47)) j++;
      const symbols = visible === 0 ? 0 : same && visible >= 4 ? 1 + visible / 24 : punctCost(visible);
      const cost = Math.max(1, symbols + astral + (j - runEnd) / 8);
      if (Math.round(current() + cost) > stopAbove) break;
      common += cost;
      i = j;
      continue;
    }
    // 4. Whitespace (k is SPACE or NEWLINE).
    let end = i;
    let lastNewline = -1;
    while (end < n) {
      const ke = classAt(text, end);
      if (ke === NEWLINE) lastNewline = end;
      else if (ke !== SPACE) break;
      end++;
    }
    let stop: number;
    if (lastNewline >= 0)
      stop = lastNewline + 1; // \s*[\r\n]+
    else if (end === n || end - i === 1)
      stop = end; // trailing run, or a lone space before a digit etc.
    else stop = end - 1; // the last space goes with what follows
    const cost = 1 + Math.floor((stop - i - 1) / 24);
    if (Math.round(current() + cost) > stopAbove) break;
    common += cost;
    i = stop;
  }
  const last = { offset: at, sum: atSum, sumFr: atSumFr, common: atCommon, latinLetters: atLatin, accentedLetters: atAccented };
  return { sum: current(), end: i, last };
}

const SENTENCE_END = /[.!?…。！？](?:["'’”»)\]]*)(?=\s)|\n/gu;

/** Largest index ≤ `at` that does not split a surrogate pair. */
function codePointSafe(text: string, at: number): number {
  if (at > 0 && at < text.length) {
    const c = text.charCodeAt(at);
    if (c >= 0xdc00 && c <= 0xdfff) return at - 1;
  }
  return at;
}

/**
 * The longest prefix of `text` whose estimate is ≤ `maxTokens`, cut at a sentence end (if it keeps half), else a word,
 * else a character; trailing whitespace removed, nothing appended, so it stays quotable. `text` if it fits; '' if < 1.
 */
export function truncateToTokens(text: string, maxTokens: number): string {
  if (!(maxTokens >= 1)) return '';
  if (estimateTokens(text) <= maxTokens) return text;
  // One scan finds where the pieces that fit end. A prefix can segment its last piece differently from the whole
  // text, so the final choice is re-checked below.
  let limit = scanPieces(text, maxTokens).end;
  if (limit === 0) {
    // The first piece alone is over budget (one giant word or symbol run): binary search a raw prefix of it.
    let lo = 0;
    let hi = text.length;
    while (lo < hi) {
      const mid = Math.ceil((lo + hi) / 2);
      if (estimateTokens(text.slice(0, mid)) <= maxTokens) lo = mid;
      else hi = mid - 1;
    }
    limit = lo;
  }
  for (let attempt = 0; ; attempt++) {
    const cut = boundaryCut(text, limit);
    const out = text.slice(0, cut).trimEnd();
    if (out.length === 0 || estimateTokens(out) <= maxTokens) return out;
    // Rarely needed; step back faster after a few tries so this stays linear-ish on hostile input.
    limit = attempt < 4 ? cut - 1 : Math.floor(cut * 0.9);
  }
}

/** Where to cut a prefix of at most `limit` characters: sentence end, word boundary, or a code-point boundary. */
function boundaryCut(text: string, limit: number): number {
  if (limit >= text.length) return text.length;
  const head = text.slice(0, limit + 1); // +1: a boundary right at `limit` counts
  let sentence = -1;
  SENTENCE_END.lastIndex = 0;
  for (const m of head.matchAll(SENTENCE_END)) {
    const end = (m.index ?? 0) + m[0].length;
    if (end <= limit) sentence = end;
  }
  if (sentence >= limit / 2) return sentence;
  for (let i = limit; i > 0; i--) {
    if (/\s/u.test(text[i] ?? '')) return i;
  }
  return codePointSafe(text, limit);
}
