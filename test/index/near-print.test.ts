/**
 * The page fingerprint on real text (the labelled pairs of fixtures/near-duplicates/pairs.json, extracted by the
 * crawler's extractor): a page and its copy with boilerplate added or removed fold, two articles of one site under one
 * template do not; and the parts a query and svc_site fold with.
 */
import t from 'tap';
import {
  countNearCopies,
  formatNearPrint,
  isNearCopy,
  MIN_SHINGLES,
  NEAR_PRINT_MAX_BITS,
  nearPrintDistance,
  nearPrintOf,
  NearPrintList,
  parseNearPrint,
  printWords,
  SHINGLE_WORDS,
  type NearPrint,
} from '../../index/retrieval/near-print.js';
import fc from 'fast-check';
import { readPairs, specMainText, type PageSpec } from '../helpers/near-duplicate-pairs.js';

const { pairs } = readPairs();
const cache = new Map<string, NearPrint | null>();
const printOf = (s: PageSpec): NearPrint | null => {
  const k = JSON.stringify(s);
  if (!cache.has(k)) cache.set(k, nearPrintOf(specMainText(s)));
  return cache.get(k)!;
};
const pairsOf = (kind: string, n: number) => pairs.filter((p) => p.kind === kind).slice(0, n);

t.test('a real article with navigation, footers, ads, a date line, comments or a syndication note added folds into itself', async (t) => {
  const list = pairsOf('boilerplate', 22);
  t.ok(list.some((p) => p.b.edits.includes('comments')) && list.some((p) => p.b.edits.includes('trim')));
  for (const p of list) {
    const a = printOf(p.a);
    const b = printOf(p.b);
    t.ok(a && b, `${p.a.id}: both have a print`);
    t.ok(isNearCopy(a!, b!), `${p.a.id} + ${p.b.edits.join(',')}: ${nearPrintDistance(a!, b!)} bits apart`);
  }
});

t.test('the same article under another template (reader mode, a bare print page) folds', async (t) => {
  const list = [...pairsOf('template', 20), ...pairsOf('print', 20)];
  const folded = list.filter((p) => isNearCopy(printOf(p.a)!, printOf(p.b)!));
  // The labelled set's misses at the threshold are documented in docs/near-duplicates.md; here at most one of 40.
  t.ok(folded.length >= list.length - 1, `${folded.length} of ${list.length} fold`);
});

t.test('different articles of one site, under its template or with identical boilerplate added, do not fold', async (t) => {
  const list = [...pairsOf('same-site', 20), ...pairsOf('same-template', 10), ...pairsOf('different', 10)];
  for (const p of list) {
    const d = nearPrintDistance(printOf(p.a)!, printOf(p.b)!);
    t.ok(d > NEAR_PRINT_MAX_BITS + 4, `${p.kind} ${p.a.id} / ${p.b.id}: ${d} bits apart`);
  }
});

t.test('prints: stored form round-trips; short text has none; layout and case do not count', async (t) => {
  const text = pairs[0] ? specMainText(pairs[0].a) : '';
  const p = nearPrintOf(text)!;
  t.match(formatNearPrint(p), /^[0-9a-f]{16}$/);
  t.same(parseNearPrint(formatNearPrint(p)), p);
  t.equal(parseNearPrint('not a print'), null);
  t.equal(parseNearPrint(null), null);
  t.same(nearPrintOf(text.toUpperCase().replace(/\s+/g, '\n\n')), p);
  const short = Array.from({ length: MIN_SHINGLES + 1 }, (_, i) => `w${i}`);
  t.equal(nearPrintOf(short.slice(0, MIN_SHINGLES + 1).join(' ')), null, 'one shingle short');
  t.not(nearPrintOf(short.concat('x').join(' ')), null);
  t.equal(nearPrintDistance({ hi: -1, lo: 0 }, { hi: 0, lo: -1 }), 64);
  t.equal(nearPrintDistance({ hi: 0b1011, lo: 1 }, { hi: 0, lo: 0 }), 4);
});

t.test('NearPrintList finds the least-numbered print within the threshold; countNearCopies folds like a result list', async (t) => {
  const list = new NearPrintList();
  list.begin();
  // Four prints 32 or 64 bits apart from each other.
  const prints = [
    { hi: 0, lo: 0 },
    { hi: -1, lo: -1 },
    { hi: 0xffff0000 | 0, lo: 0x0000ffff },
    { hi: 0x0000ffff, lo: 0xffff0000 | 0 },
  ];
  prints.forEach((p, i) => list.add(p, 10 + i));
  t.equal(list.find(prints[2]!), 12);
  t.equal(list.find({ hi: prints[3]!.hi ^ 0b1111, lo: prints[3]!.lo }), 13, 'four bits off');
  t.equal(list.find({ hi: 0x000000ff, lo: 0x00000fff }), -1, '20 bits from the nearest');
  t.equal(list.find({ hi: 0b1, lo: 0 }, 0), -1, 'one bit off at a threshold of 0');
  list.begin();
  t.equal(list.find({ hi: 0, lo: ~0 }), -1, 'a new use starts empty');
  const x = { hi: 0x12345678, lo: 0x0badf00d };
  const near = { hi: 0x12345678 ^ 0b111, lo: 0x0badf00d };
  const far = { hi: ~0x12345678, lo: 0x0badf00d };
  t.equal(
    await countNearCopies([
      { group: 'https://a.test/1', contentHash: 'h1', print: x },
      { group: 'https://a.test/2', contentHash: 'h2', print: near },
      { group: 'https://a.test/3', contentHash: 'h3', print: far },
      { group: 'https://a.test/1', contentHash: 'h4', print: null },
      { group: 'https://a.test/5', contentHash: 'h3', print: null },
      { group: 'https://a.test/6', contentHash: 'h6', print: null },
    ]),
    3,
  );
});

t.test('NearPrintList answers as a scan of every kept print, at thresholds its blocks cover and beyond', async (t) => {
  // Seeded lists of prints, a third of them near-copies (0–13 bits flipped) of an earlier one.
  let seed = 12345;
  const rand = () => (seed = (Math.imul(seed, 1103515245) + 12345) >>> 0) / 2 ** 32;
  const list = new NearPrintList();
  let checked = 0;
  let folded = 0;
  for (let trial = 0; trial < 60; trial++) {
    const ps: NearPrint[] = [];
    for (let i = 0; i < 150; i++) {
      if (i > 0 && rand() < 0.35) {
        let { hi, lo } = ps[Math.floor(rand() * ps.length)]!;
        for (let k = Math.floor(rand() * 14); k > 0; k--) {
          const bit = Math.floor(rand() * 64);
          if (bit < 32) hi ^= 1 << bit;
          else lo ^= 1 << (bit - 32);
        }
        ps.push({ hi, lo });
      } else ps.push({ hi: (rand() * 2 ** 32) | 0, lo: (rand() * 2 ** 32) | 0 });
    }
    for (const maxBits of [0, 3, NEAR_PRINT_MAX_BITS, 11, 14]) {
      list.begin();
      const kept: { p: NearPrint; v: number }[] = [];
      for (let i = 0; i < ps.length; i++) {
        const want = kept.find((k) => nearPrintDistance(k.p, ps[i]!) <= maxBits)?.v ?? -1;
        const got = list.find(ps[i]!, maxBits);
        checked++;
        if (got !== want) {
          t.fail(`trial ${trial}, ${maxBits} bits, print ${i}: ${got} instead of ${want}`);
          return;
        }
        if (got === -1) {
          list.add(ps[i]!, i);
          kept.push({ p: ps[i]!, v: i });
        } else folded++;
      }
    }
  }
  t.ok(folded > 1000, `${folded} of ${checked} lookups found a print`);
});

/** The print as first defined: each distinct shingle's joined string, FNV-1a from two offsets, finalised, voted. */
function naivePrint(text: string): NearPrint | null {
  const fmix = (x: number) => {
    x = Math.imul(x ^ (x >>> 16), 0x85ebca6b);
    x = Math.imul(x ^ (x >>> 13), 0xc2b2ae35);
    return x ^ (x >>> 16);
  };
  const words = printWords(text);
  const seen = new Set<string>();
  for (let i = 0; i + SHINGLE_WORDS <= words.length; i++) seen.add(words.slice(i, i + SHINGLE_WORDS).join(' '));
  if (seen.size < MIN_SHINGLES) return null;
  const votes = new Array<number>(64).fill(0);
  for (const s of seen) {
    let a = 0x811c9dc5;
    let b = 0x9747b28c;
    for (let i = 0; i < s.length; i++) {
      a = Math.imul(a ^ s.charCodeAt(i), 0x01000193);
      b = Math.imul(b ^ s.charCodeAt(i), 0x01000193);
    }
    const h = [fmix(a), fmix(b ^ 0x5bd1e995)];
    for (let bit = 0; bit < 64; bit++) votes[bit]! += (h[bit >> 5]! >>> (bit & 31)) & 1 ? 1 : -1;
  }
  let hi = 0;
  let lo = 0;
  for (let bit = 0; bit < 32; bit++) {
    if (votes[bit]! > 0) hi |= 1 << bit;
    if (votes[32 + bit]! > 0) lo |= 1 << bit;
  }
  return { hi, lo };
}

t.test('the print is the simhash of the distinct joined shingles, whatever the words (stored prints stay valid)', async (t) => {
  for (const p of pairs.slice(0, 60)) t.same(nearPrintOf(specMainText(p.a)), naivePrint(specMainText(p.a)), p.a.id);
  // Few distinct words (many repeated shingles), accents, digits, non-Latin scripts, and more words than fit in the
  // numeric shingle key.
  const word = fc.oneof(
    fc.constantFrom('a', 'b', 'c', 'the', 'Été', 'ÉTÉ', 'ﬁn', 'x1', '東京', 'école'),
    fc.string({ minLength: 1, maxLength: 6 }),
  );
  fc.assert(
    fc.property(fc.array(word, { minLength: 0, maxLength: 400 }), fc.constantFrom(' ', '\n', ', '), (ws, sep) => {
      const text = ws.join(sep);
      t.same(nearPrintOf(text), naivePrint(text));
    }),
    { numRuns: 300 },
  );
  const many = Array.from({ length: 140_000 }, (_, i) => `w${i % 135_000}`).join(' ');
  t.same(nearPrintOf(many), naivePrint(many), 'more than 2^17 distinct words');
});
