/**
 * A page's near-duplicate fingerprint: a 64-bit simhash over the word shingles of its main text, computed when the
 * page is written and stored with it (`near_print`). Two pages whose prints differ in at most `NEAR_PRINT_MAX_BITS`
 * bits are near-copies: the same article under another template, with or without a comment thread, a date line, a
 * share bar or an ad block the extractor kept.
 *
 * Why simhash rather than minhash: one 64-bit value per page fits in one short column denormalised into every passage
 * row (search reads only the passages table), and the test is one XOR and a population count, with no band table to
 * keep per query. The threshold and its precision / recall on a labelled set of real pages are in docs/near-duplicates.md.
 */
import { LoopBudget } from '../event-loop.js';

/** Words per shingle: short enough that an inserted sentence disturbs few shingles, long enough to keep word order. */
export const SHINGLE_WORDS = 3;
/** Pages with fewer shingles than this get no print: on a few lines, one changed word moves too many bits to judge. */
export const MIN_SHINGLES = 24;
/** Largest Hamming distance between the prints of two pages that are folded together (docs/near-duplicates.md). */
export const NEAR_PRINT_MAX_BITS = 10;

/** A print as two 32-bit halves (what a comparison reads). */
export interface NearPrint {
  readonly hi: number;
  readonly lo: number;
}

const WORD = /[\p{L}\p{N}]+/gu;

/** murmur3's finaliser: spreads FNV-1a's weak low bits over the whole word. */
function fmix32(x: number): number {
  x ^= x >>> 16;
  x = Math.imul(x, 0x85ebca6b);
  x ^= x >>> 13;
  x = Math.imul(x, 0xc2b2ae35);
  x ^= x >>> 16;
  return x;
}

/** Two independent 32-bit hashes of `s` (FNV-1a from two offsets, each finalised). */
function hash2(s: string, out: Int32Array): void {
  let a = 0x811c9dc5;
  let b = 0x9747b28c;
  for (let i = 0; i < s.length; i++) {
    const c = s.charCodeAt(i);
    a = Math.imul(a ^ c, 0x01000193);
    b = Math.imul(b ^ c, 0x01000193);
  }
  out[0] = fmix32(a);
  out[1] = fmix32(b ^ 0x5bd1e995);
}

/** The words of `text`, case- and compatibility-folded (punctuation and layout do not count). */
export function printWords(text: string): string[] {
  return text.normalize('NFKC').toLowerCase().match(WORD) ?? [];
}

/**
 * The simhash of `text` over its distinct `SHINGLE_WORDS`-word shingles (each counts once, so a repeated line of
 * boilerplate weighs no more than any other), or null when it has fewer than `MIN_SHINGLES` of them.
 */
export function nearPrintOf(text: string): NearPrint | null {
  const words = printWords(text);
  const seen = new Set<string>();
  for (let i = 0; i + SHINGLE_WORDS <= words.length; i++) seen.add(words.slice(i, i + SHINGLE_WORDS).join(' '));
  if (seen.size < MIN_SHINGLES) return null;
  const votes = new Int32Array(64);
  const h = new Int32Array(2);
  for (const s of seen) {
    hash2(s, h);
    const hi = h[0]!;
    const lo = h[1]!;
    for (let b = 0; b < 32; b++) {
      votes[b]! += (hi >>> b) & 1 ? 1 : -1;
      votes[32 + b]! += (lo >>> b) & 1 ? 1 : -1;
    }
  }
  let hi = 0;
  let lo = 0;
  for (let b = 0; b < 32; b++) {
    if (votes[b]! > 0) hi |= 1 << b;
    if (votes[32 + b]! > 0) lo |= 1 << b;
  }
  return { hi, lo };
}

/** A print as stored: 16 lower-case hex digits. */
export function formatNearPrint(p: NearPrint): string {
  return (p.hi >>> 0).toString(16).padStart(8, '0') + (p.lo >>> 0).toString(16).padStart(8, '0');
}

/** A stored print back to its halves; null for null or anything not 16 hex digits. */
export function parseNearPrint(s: string | null | undefined): NearPrint | null {
  if (s == null || !/^[0-9a-f]{16}$/.test(s)) return null;
  return { hi: parseInt(s.slice(0, 8), 16) | 0, lo: parseInt(s.slice(8), 16) | 0 };
}

/** Set bits of a 32-bit value. */
function popcount32(x: number): number {
  x -= (x >>> 1) & 0x55555555;
  x = (x & 0x33333333) + ((x >>> 2) & 0x33333333);
  return (Math.imul((x + (x >>> 4)) & 0x0f0f0f0f, 0x01010101) >>> 24) & 0xff;
}

/** Bits in which two prints differ (0–64). */
export function nearPrintDistance(a: NearPrint, b: NearPrint): number {
  return popcount32(a.hi ^ b.hi) + popcount32(a.lo ^ b.lo);
}

/** Whether two prints are those of near-copies. */
export const isNearCopy = (a: NearPrint, b: NearPrint, maxBits = NEAR_PRINT_MAX_BITS): boolean => nearPrintDistance(a, b) <= maxBits;

/**
 * The prints of the pages a query kept so far, each with a number (its place among them), for one use at a time
 * (retrieval.ts `groupPages`). A lookup scans them all: a query keeps at most a few hundred pages, and one scan of
 * two typed arrays costs less than any index over bit blocks would at a threshold this wide.
 */
export class NearPrintList {
  #hi = new Int32Array(64);
  #lo = new Int32Array(64);
  #value = new Int32Array(64);
  #n = 0;

  /** Starts a new use, empty. */
  begin(): void {
    this.#n = 0;
  }

  /** The number of the first print within `maxBits` of `p`, or -1. */
  find(p: NearPrint, maxBits = NEAR_PRINT_MAX_BITS): number {
    const hi = this.#hi;
    const lo = this.#lo;
    for (let i = 0; i < this.#n; i++) if (popcount32(hi[i]! ^ p.hi) + popcount32(lo[i]! ^ p.lo) <= maxBits) return this.#value[i]!;
    return -1;
  }

  add(p: NearPrint, value: number): void {
    if (this.#n === this.#hi.length) {
      const grow = (a: Int32Array) => {
        const b = new Int32Array(a.length * 2);
        b.set(a);
        return b;
      };
      this.#hi = grow(this.#hi);
      this.#lo = grow(this.#lo);
      this.#value = grow(this.#value);
    }
    this.#hi[this.#n] = p.hi;
    this.#lo[this.#n] = p.lo;
    this.#value[this.#n++] = value;
  }
}

/** A page as a host's near-copy count reads it: its canonical group, its content hash and its print. */
export interface PrintedPage {
  readonly group: string;
  readonly contentHash: string;
  readonly print: NearPrint | null;
}

/**
 * How many of `pages`, taken in the order given, fold into an earlier page by the rule a query's results fold by
 * (retrieval.ts `groupPages`): the same canonical group, the same content hash, or a print within the threshold of a
 * page kept before. Yields to the event loop between slices of work (a host may have many pages).
 */
export async function countNearCopies(pages: Iterable<PrintedPage>, budget = new LoopBudget()): Promise<number> {
  const keys = new Set<string>();
  const kept = new NearPrintList();
  kept.begin();
  let copies = 0;
  for (const p of pages) {
    if (budget.due()) await budget.pause();
    // Group keys are URLs and content hashes hex, so one set holds both without collisions.
    if (keys.has(p.group) || keys.has(p.contentHash) || (p.print !== null && kept.find(p.print) !== -1)) {
      copies++;
      continue;
    }
    keys.add(p.group);
    keys.add(p.contentHash);
    if (p.print) kept.add(p.print, 0);
  }
  return copies;
}
