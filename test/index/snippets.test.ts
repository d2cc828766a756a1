import t from 'tap';
import fc from 'fast-check';
import { DEFAULT_EXCERPT_CHARS, buildExcerpt, excerptMatches } from '../../index/retrieval/snippets.js';

const open = { nosnippet: false, maxSnippet: null } as const;
const fold = (s: string) => s.normalize('NFD').replace(/\p{M}/gu, '').toLowerCase();

const TEXT =
  'Climate policy in Canada has changed a lot over the past decade. The federal government introduced a carbon ' +
  'price in 2019, and most provinces now follow the federal backstop. Provinces such as Québec run their own ' +
  'cap-and-trade system, linked with California since 2014. Critics argue the carbon tax hurts rural households, ' +
  'while supporters say the quarterly rebates leave most families better off. In Ontario the debate continues, ' +
  'and the next election may decide the future of the policy.';

t.test('issue 4: nosnippet and max-snippet:0 give no excerpt', async (t) => {
  t.equal(buildExcerpt(TEXT, ['carbon'], { nosnippet: true, maxSnippet: null }), null);
  t.equal(buildExcerpt(TEXT, ['carbon'], { nosnippet: false, maxSnippet: 0 }), null);
  t.equal(buildExcerpt(TEXT, ['carbon'], { nosnippet: true, maxSnippet: 50 }), null);
  t.equal(buildExcerpt('', ['carbon'], open), null);
  t.equal(buildExcerpt(' \n\t ', ['carbon'], open), null);
});

t.test('issue 4: max-snippet:N bounds the excerpt, ellipses included', async (t) => {
  for (const n of [1, 2, 3, 10, 25, 50, 100, 160]) {
    const e = buildExcerpt(TEXT, ['carbon tax', 'rural'], { nosnippet: false, maxSnippet: n });
    t.ok(e !== null && e.text.length <= n && e.text.length > 0, `max-snippet:${n} → ${e?.text.length}`);
  }
  const d = buildExcerpt(TEXT, ['carbon'], open);
  t.ok(d !== null && d.text.length <= DEFAULT_EXCERPT_CHARS);
  const smaller = buildExcerpt(TEXT, ['carbon'], { nosnippet: false, maxSnippet: 300 }, { maxChars: 80 });
  t.ok(smaller !== null && smaller.text.length <= 80, 'the smaller of maxChars and max-snippet wins');
});

t.test('the window covers the most query terms, cut at word boundaries with ellipses', async (t) => {
  const e = buildExcerpt(TEXT, ['rebates', 'households'], open, { maxChars: 120 });
  t.ok(e);
  if (!e) return;
  t.match(e.text, /households/u);
  t.match(e.text, /rebates/u);
  t.ok(e.text.startsWith('…') && e.text.endsWith('…'), e.text);
  const body = e.text.replace(/^…|…$/gu, '');
  const at = TEXT.indexOf(body);
  t.ok(at > 0, 'the excerpt is a contiguous part of the text');
  t.equal(TEXT[at - 1], ' ', 'starts at a word boundary');
  t.match(TEXT[at + body.length] ?? ' ', /[\s]/u, 'ends at a word boundary');
  t.same(
    e.highlights.map(([a, b]) => e.text.slice(a, b)),
    ['households', 'rebates'],
  );
});

t.test('a window with both terms beats an earlier one with a single term', async (t) => {
  const text = `${'Alpha appears alone here. '.repeat(3)}${'Filler words without meaning go on and on. '.repeat(6)}Later alpha and omega appear together.${' More filler follows.'.repeat(6)}`;
  const e = buildExcerpt(text, ['alpha', 'omega'], open, { maxChars: 80 });
  t.ok(e);
  t.same(
    e?.highlights.map(([a, b]) => e.text.slice(a, b).toLowerCase()),
    ['alpha', 'omega'],
  );
});

t.test('matching ignores case and diacritics; phrases match across whitespace; prefixes of long terms', async (t) => {
  const e = buildExcerpt('Le gouvernement du QUÉBEC   et la ville de Montréal.', ['quebec', 'montreal'], open);
  t.same(
    e?.highlights.map(([a, b]) => e.text.slice(a, b)),
    ['QUÉBEC', 'Montréal'],
  );
  t.equal(e?.text, 'Le gouvernement du QUÉBEC et la ville de Montréal.', 'whitespace runs collapsed');
  const p = buildExcerpt('The carbon\n  tax and the carbon price.', ['Carbon Tax'], open);
  t.same(
    p?.highlights.map(([a, b]) => p.text.slice(a, b)),
    ['carbon tax'],
  );
  const v = buildExcerpt('Vaccination rates rose; the vaccine works.', ['vaccin'], open);
  t.same(
    v?.highlights.map(([a, b]) => v.text.slice(a, b)),
    ['Vaccination', 'vaccine'],
    'a 4+ letter term matches word prefixes (the whole word is marked)',
  );
  const s = buildExcerpt('Cat category and the cat.', ['cat'], open);
  t.same(
    s?.highlights.map(([a, b]) => s.text.slice(a, b)),
    ['Cat', 'cat'],
    'short terms match whole words only',
  );
});

t.test('typographic apostrophes match straight ones; the window starts at a sentence when it can', async (t) => {
  const e = buildExcerpt('Inscription à l’école primaire de Gatineau.', ["l'ecole"], open);
  t.same(
    e?.highlights.map(([a, b]) => e.text.slice(a, b)),
    ['l’école'],
  );
  const text = `${'Words before the question go here. '.repeat(4)}Is the library open on Sunday? Yes, the library opens at noon on Sundays and closes at five.${' Unrelated trailing words.'.repeat(5)}`;
  const w = buildExcerpt(text, ['noon', 'sundays'], open, { maxChars: 100 });
  t.ok(w?.text.startsWith('…Yes, the library opens at noon'), w?.text ?? 'no excerpt');
});

t.test('no match: the start of the text, no highlights', async (t) => {
  const e = buildExcerpt(TEXT, ['zebra'], open, { maxChars: 70 });
  t.ok(e);
  t.ok(e?.text.startsWith('Climate policy'));
  t.ok(e !== null && e.text.length <= 70);
  t.same(e?.highlights, []);
});

t.test('issue 4: properties — within bounds, highlights point at the terms, text comes from the source', async (t) => {
  const word = fc.constantFrom('alpha', 'Beta', 'gamma', 'Québec', 'école', 'ÉTÉ', 'x', 'data', 'nosnippet', '😀', 'naïve', 'über');
  const text = fc.array(fc.oneof(word, fc.constantFrom(' ', '  ', '\n', '. ', ', ')), { maxLength: 120 }).map((a) => a.join(''));
  const run = fc.check(
    fc.property(
      text,
      fc.array(word, { maxLength: 4 }),
      fc.integer({ min: 1, max: 300 }),
      fc.option(fc.integer({ min: 1, max: 300 }), { nil: null }),
      (src, terms, maxChars, maxSnippet) => {
        const e = buildExcerpt(src, terms, { nosnippet: false, maxSnippet }, { maxChars });
        const normalised = src.replace(/\s+/gu, ' ').trim();
        if (normalised === '') return e === null;
        if (e === null) return false;
        const bound = Math.min(maxChars, maxSnippet ?? Infinity);
        if (e.text.length > bound) return false;
        const body = e.text.replace(/^…/u, '').replace(/…$/u, '');
        if (!normalised.includes(body)) return false;
        const folded = terms.map(fold);
        let prevEnd = 0;
        for (const [a, b] of e.highlights) {
          if (a < prevEnd || b <= a || b > e.text.length) return false;
          prevEnd = b;
          const marked = fold(e.text.slice(a, b));
          if (!folded.some((f) => marked.startsWith(f))) return false;
        }
        return true;
      },
    ),
    { numRuns: 600 },
  );
  t.notOk(run.failed, fc.defaultReportMessage(run) ?? 'property holds');
});

t.test('issue 14: windows of equal score keep the earliest, whatever order their terms come in (exact weights)', async (t) => {
  // Two stop words (weight 0.1 each). The first window holds "of of in", the second "in of of": the same score, but
  // summed in floating point in each window's order they differ in the last bit (20.3 against 20.300000000000004),
  // which once picked the later window.
  const filler = Array.from({ length: 30 }, (_, i) => `zz${i}`).join(' ');
  const text = `start of zq of zq in zq. ${filler}. Later in zq of zq of zq end.`;
  const e = buildExcerpt(text, ['of', 'in'], open, { maxChars: 40 });
  t.ok(e);
  t.match(e!.text, /of zq of zq in/, 'the earlier window');
  t.notMatch(e!.text, /Later/);
  // A term of weight 1 in the later window outweighs them.
  const f = buildExcerpt(text, ['of', 'in', 'end'], open, { maxChars: 40 });
  t.match(f!.text, /of zq end/, 'a better window still wins');
});

t.test('issue 14: whitespace runs collapse on the fast path and the slow one alike', async (t) => {
  const terms = ['carbon'];
  for (const [raw, want] of [
    ['a carbon  price', 'a carbon price'],
    ['a\tcarbon\nprice', 'a carbon price'],
    ['a\u00a0carbon\u2003price', 'a carbon price'],
    ['  a carbon price  ', 'a carbon price'],
    ['a carbon price', 'a carbon price'],
  ] as const) {
    const e = buildExcerpt(raw, terms, open);
    t.equal(e?.text, want, JSON.stringify(raw));
    t.same(e?.highlights, [[2, 8]]);
  }
});

/**
 * The matching as it was written first, kept as the reference: a search of the folded text per term (`indexOf`, again
 * after each occurrence), whole words or, for terms of 4+ units, word prefixes (the whole word marked); sorted by
 * start, the longer first; overlaps dropped. Folding here is lower case only, so texts and terms are ASCII and
 * characters that folding leaves as they are.
 */
function referenceMatches(text: string, terms: readonly string[]): { start: number; end: number; term: string }[] {
  const ft = text.replace(/\s+/gu, ' ').trim().toLowerCase();
  const wordAt = (i: number) => i >= 0 && i < ft.length && /[\p{L}\p{N}]/u.test(ft[i]!);
  const uniq = [
    ...new Set(terms.map((x) => x.toLowerCase().replace(/\s+/gu, ' ').trim()).filter((x) => x !== '' && /[\p{L}\p{N}]/u.test(x))),
  ];
  const out: { start: number; end: number; term: string }[] = [];
  for (const term of uniq)
    for (let at = ft.indexOf(term); at >= 0; at = ft.indexOf(term, at + 1)) {
      if (wordAt(at - 1)) continue;
      let stop = at + term.length;
      if (wordAt(stop)) {
        if (term.length < 4) continue;
        while (wordAt(stop)) stop++;
      }
      out.push({ start: at, end: stop, term });
    }
  out.sort((a, b) => a.start - b.start || b.end - a.end);
  const kept: typeof out = [];
  for (const m of out) if (!(kept.length > 0 && m.start < kept[kept.length - 1]!.end)) kept.push(m);
  return kept;
}

t.test('issue 14: one pass over the text finds the occurrences a search per term finds, in the same order', async (t) => {
  // Words that share first letters and prefixes, short terms inside longer words, phrases, digits, punctuation that
  // starts or ends a term, and letters outside ASCII that folding leaves as they are.
  const piece = fc.constantFrom(
    'vaccin',
    'vaccination',
    'vaccine',
    'a',
    'an',
    'and',
    'ab',
    'abc',
    'abcd',
    'abcde',
    '0',
    '0.5',
    '3d',
    'ß',
    'жук',
    'x-ray',
    'c++',
    '.net',
    'δ',
    'δelta',
  );
  const gap = fc.constantFrom(' ', '  ', '-', '.', ', ', '(', ')', '\n', '+', '');
  const text = fc.array(fc.tuple(piece, gap), { maxLength: 80 }).map((a) => a.map(([w, g]) => w + g).join(''));
  const term = fc.oneof(
    piece,
    fc.tuple(piece, piece).map(([x, y]) => `${x} ${y}`),
    fc.constantFrom('AND', 'Vaccin', '-ray', '.5'),
  );
  const run = fc.check(
    fc.property(text, fc.array(term, { maxLength: 8 }), (src, terms) => {
      const got = excerptMatches(src, terms);
      const want = referenceMatches(src, terms);
      return JSON.stringify(got) === JSON.stringify(want);
    }),
    { numRuns: 2000 },
  );
  t.notOk(run.failed, fc.defaultReportMessage(run) ?? 'the same matches');
  t.same(excerptMatches('Vaccination and the vaccine; a vaccinated x-ray.', ['vaccin', 'a', 'x-ray']), [
    { start: 0, end: 11, term: 'vaccin' },
    { start: 20, end: 27, term: 'vaccin' },
    { start: 29, end: 30, term: 'a' },
    { start: 31, end: 41, term: 'vaccin' },
    { start: 42, end: 47, term: 'x-ray' },
  ]);
});
