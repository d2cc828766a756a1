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
import { LoopBudget } from '../../event-loop.js';

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

/** The words of `text`, case- and compatibility-folded (punctuation and layout do not count). */
export function printWords(text: string): string[] {
  return text.normalize('NFKC').toLowerCase().match(WORD) ?? [];
}

const FNV_PRIME = 0x01000193;

/** Adds each of `x`'s 32 bits to its position's count, kept as bit planes (ripple-carry across the planes). */
function addBits(planes: Int32Array, x: number): void {
  for (let k = 0; x !== 0; k++) {
    const carry = planes[k]! & x;
    planes[k]! ^= x;
    x = carry;
  }
}

/** The count at bit position `b` of bit planes `planes`. */
function bitCount(planes: Int32Array, b: number): number {
  let n = 0;
  for (let k = 0; k < planes.length; k++) n += ((planes[k]! >>> b) & 1) * 2 ** k;
  return n;
}

/**
 * The simhash of `text` over its distinct `SHINGLE_WORDS`-word shingles (each counts once, so a repeated line of
 * boilerplate weighs no more than any other), or null when it has fewer than `MIN_SHINGLES` of them.
 *
 * A shingle's hash is FNV-1a of its words joined by single spaces (two offsets, each finalised); it is computed by
 * feeding the words in turn rather than building the joined string, and shingles are told apart by their word numbers,
 * because building and hashing one string per shingle was most of a page's write cost.
 */
export function nearPrintOf(text: string): NearPrint | null {
  const words = printWords(text);
  const ids = new Int32Array(words.length);
  const idOf = new Map<string, number>();
  for (let i = 0; i < words.length; i++) {
    let id = idOf.get(words[i]!);
    if (id === undefined) idOf.set(words[i]!, (id = idOf.size));
    ids[i] = id;
  }
  // Three word numbers in one exact double key while they fit in 17 bits each; a page with more distinct words than
  // that (rare: a dictionary page) keys its shingles by a string of the numbers.
  const small = idOf.size < 1 << 17;
  const seen = new Set<number | string>();
  const starts: number[] = [];
  for (let i = 0; i + SHINGLE_WORDS <= words.length; i++) {
    const key = small ? (ids[i]! * 131072 + ids[i + 1]!) * 131072 + ids[i + 2]! : `${ids[i]},${ids[i + 1]},${ids[i + 2]}`;
    if (seen.has(key)) continue;
    seen.add(key);
    starts.push(i);
  }
  if (starts.length < MIN_SHINGLES) return null;
  // Each bit's vote is (shingles with the bit set) − (those without): the set counts are kept bit-sliced (plane k
  // holds bit k of all 32 positions' counts, added with carries), a few operations per shingle instead of 64.
  const planesHi = new Int32Array(32);
  const planesLo = new Int32Array(32);
  for (let n = 0; n < starts.length; n++) {
    const i = starts[n]!;
    let a = 0x811c9dc5;
    let c = 0x9747b28c;
    for (let w = 0; w < SHINGLE_WORDS; w++) {
      if (w > 0) {
        a = Math.imul(a ^ 32, FNV_PRIME);
        c = Math.imul(c ^ 32, FNV_PRIME);
      }
      const word = words[i + w]!;
      for (let j = 0; j < word.length; j++) {
        const ch = word.charCodeAt(j);
        a = Math.imul(a ^ ch, FNV_PRIME);
        c = Math.imul(c ^ ch, FNV_PRIME);
      }
    }
    addBits(planesHi, fmix32(a));
    addBits(planesLo, fmix32(c ^ 0x5bd1e995));
  }
  let hi = 0;
  let lo = 0;
  for (let b = 0; b < 32; b++) {
    if (2 * bitCount(planesHi, b) > starts.length) hi |= 1 << b;
    if (2 * bitCount(planesLo, b) > starts.length) lo |= 1 << b;
  }
  return { hi, lo };
}

/** A print as stored: 16 lower-case hex digits. */
export function formatNearPrint(p: NearPrint): string {
  return (p.hi >>> 0).toString(16).padStart(8, '0') + (p.lo >>> 0).toString(16).padStart(8, '0');
}

/** A stored print back to its halves; null for null or anything not 16 hex digits. */
export function parseNearPrint(s: string | null | undefined): NearPrint | null {
  if (s == null || s.length !== 16) return null;
  // By hand rather than by a pattern and parseInt: a query parses one per candidate page.
  let hi = 0;
  let lo = 0;
  for (let i = 0; i < 16; i++) {
    const c = s.charCodeAt(i);
    const d = c >= 48 && c <= 57 ? c - 48 : c >= 97 && c <= 102 ? c - 87 : -1;
    if (d < 0) return null;
    if (i < 8) hi = (hi << 4) | d;
    else lo = (lo << 4) | d;
  }
  return { hi, lo };
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
 * Blocks a print is split into for lookups: block b is bits `BLOCK_AT[b]` to `BLOCK_AT[b] + BLOCK_WIDTH[b]` of the
 * high half (b < 3) or the low half.
 */
const BLOCK_AT = Int32Array.of(0, 11, 22, 0, 11, 22);
const BLOCK_WIDTH = Int32Array.of(11, 11, 10, 11, 11, 10);
const NB = 6;
const SLOTS = 1 << 11;
/** Largest threshold the block lookup finds every print within: two prints that differ in every block by ≥ 2 bits differ in ≥ 12. */
const INDEXED_MAX_BITS = 2 * NB - 1;

const blockOf = (hi: number, lo: number, b: number): number => ((b < 3 ? hi : lo) >>> BLOCK_AT[b]!) & ((1 << BLOCK_WIDTH[b]!) - 1);

/**
 * The prints of the pages a query kept so far, each with a number (its place among them), for one use at a time
 * (retrieval.ts `groupPages`). A lookup is exact without a scan of them all: the 64 bits are cut into 6 blocks, and
 * two prints within 11 bits agree on some block in all but at most one bit (pigeonhole), so probing each block's value
 * and its one-bit neighbours in a per-block table finds every candidate, each then checked on all 64 bits.
 */
export class NearPrintList {
  #hi = new Int32Array(64);
  #lo = new Int32Array(64);
  #value = new Int32Array(64);
  /** Per block, the newest entry of each block value (-1: none), valid where `#stamp` holds this use's generation. */
  readonly #head = new Int32Array(NB * SLOTS);
  readonly #stamp = new Uint32Array(NB * SLOTS);
  /** Per entry and block, the entry added before it with the same block value (-1: none). */
  #next = new Int32Array(64 * NB);
  #gen = 0;
  #n = 0;

  /** Starts a new use, empty. */
  begin(): void {
    this.#n = 0;
    if (++this.#gen === 0xffffffff) {
      this.#stamp.fill(0);
      this.#gen = 1;
    }
  }

  /** The least number among the prints within `maxBits` of `p`, or -1. */
  find(p: NearPrint, maxBits = NEAR_PRINT_MAX_BITS): number {
    let best = -1;
    const hi = this.#hi;
    const lo = this.#lo;
    if (maxBits > INDEXED_MAX_BITS) {
      for (let i = 0; i < this.#n; i++) if (popcount32(hi[i]! ^ p.hi) + popcount32(lo[i]! ^ p.lo) <= maxBits) return this.#value[i]!;
      return -1;
    }
    const stamp = this.#stamp;
    const head = this.#head;
    const next = this.#next;
    const value = this.#value;
    const gen = this.#gen;
    const ph = p.hi;
    const pl = p.lo;
    for (let b = 0; b < NB; b++) {
      const base = b * SLOTS + blockOf(ph, pl, b);
      const width = BLOCK_WIDTH[b]!;
      for (let flip = -1; flip < width; flip++) {
        const slot = flip < 0 ? base : base ^ (1 << flip);
        if (stamp[slot] !== gen) continue;
        for (let e = head[slot]!; e !== -1; e = next[e * NB + b]!) {
          const v = value[e]!;
          if ((best === -1 || v < best) && popcount32(hi[e]! ^ ph) + popcount32(lo[e]! ^ pl) <= maxBits) best = v;
        }
      }
    }
    return best;
  }

  add(p: NearPrint, value: number): void {
    const e = this.#n++;
    if (e === this.#hi.length) {
      const grow = (a: Int32Array) => {
        const b = new Int32Array(a.length * 2);
        b.set(a);
        return b;
      };
      this.#hi = grow(this.#hi);
      this.#lo = grow(this.#lo);
      this.#value = grow(this.#value);
      this.#next = grow(this.#next);
    }
    this.#hi[e] = p.hi;
    this.#lo[e] = p.lo;
    this.#value[e] = value;
    for (let b = 0; b < NB; b++) {
      const slot = b * SLOTS + blockOf(p.hi, p.lo, b);
      this.#next[e * NB + b] = this.#stamp[slot] === this.#gen ? this.#head[slot]! : -1;
      this.#stamp[slot] = this.#gen;
      this.#head[slot] = e;
    }
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
