import t from 'tap';
import fc from 'fast-check';
import {
  compileQuery,
  hostMatchesSite,
  normaliseFiletype,
  normaliseSite,
  parseQuery,
  type MatchableRow,
} from '../../index/retrieval/query.js';
import { compileFilter } from '../../index/retrieval/passage-filter.js';
import { whereOf } from '../../index/engines/lance/where.js';
import { indexText, passageAnalyses } from '../../index/retrieval/analyzer.js';

const row = (over: Partial<MatchableRow>): MatchableRow => {
  const r = {
    text: 'The quick brown fox jumps over the lazy dog',
    title: 'Fox facts',
    url: 'https://www.example.org/animals/fox.html',
    host: 'www.example.org',
    filetype: 'html',
    lang: 'en',
    ...over,
  };
  return { ...r, search_text: indexText(r.title, r.text, passageAnalyses(r.lang, r.title, [r.text])[0]!) };
};

t.test('parses every operator of spec §1.1', async (t) => {
  const ast = parseQuery('intitle:"Passport Renewal" site:canada.ca filetype:PDF -fees --delay -inurl:archive "adult passport" renew');
  t.same(ast.ops.intitle.include, [['passport', 'renewal']]);
  t.same(ast.ops.site.include, ['canada.ca']);
  t.same(ast.ops.filetype.include, ['pdf']);
  t.same(ast.excludedWords, ['fees', 'delay']);
  t.same(ast.ops.inurl.exclude, ['archive']);
  t.same(ast.phrases, [['adult', 'passport']]);
  t.same(ast.words, ['renew']);
  t.equal(ast.kind, 'strict', 'a query with operators is strict');
  t.same(ast.required, ['renew'], 'so its bare words are required');
  t.same(ast.ops.site.exclude, []);
});

t.test('negated operators and alternatives', async (t) => {
  const ast = parseQuery(
    '-site:spam.example site:a.example site:b.example -filetype:pdf filetype:html filetype:txt -intitle:"draft" -"exact junk"',
  );
  t.same(ast.ops.site.exclude, ['spam.example']);
  t.same(ast.ops.site.include, ['a.example', 'b.example']);
  t.same(ast.ops.filetype.exclude, ['pdf']);
  t.same(ast.ops.filetype.include, ['html', 'txt']);
  t.same(ast.ops.intitle.exclude, [['draft']]);
  t.same(ast.excludedPhrases, [['exact', 'junk']]);
});

t.test('site values are normalised to host names; junk matches nothing', async (t) => {
  t.equal(normaliseSite('https://WWW.Canada.ca/en/page?x=1'), 'www.canada.ca');
  t.equal(normaliseSite('*.gc.ca'), 'gc.ca');
  t.equal(normaliseSite('montréal.ca'), 'xn--montral-fya.ca');
  t.equal(normaliseSite("a' OR 1=1 --"), null);
  t.equal(normaliseSite('(x)'), null);
  t.equal(normaliseFiletype('.PDF'), 'pdf');
  t.equal(normaliseFiletype('pdf;drop'), null);
  t.ok(hostMatchesSite('www.canada.ca', 'canada.ca'));
  t.ok(hostMatchesSite('canada.ca', 'canada.ca'));
  t.notOk(hostMatchesSite('notcanada.ca', 'canada.ca'), 'a suffix that is not a label boundary does not match');
  const c = compileQuery(parseQuery("fox site:a'b"));
  t.notOk(c.matches(row({})), 'an invalid site: matches nothing rather than everything');
});

t.test('compiled predicate: phrases, negations, inurl, filetype, intitle, site alternatives', async (t) => {
  const m = (q: string, r: Partial<MatchableRow> = {}) => compileQuery(parseQuery(q)).matches(row(r));
  t.ok(m('"brown fox"'));
  t.notOk(m('"fox brown"'));
  t.ok(m('"BRÖWN fox"'), 'phrases are case and diacritic insensitive');
  t.notOk(m('fox -lazy'));
  t.notOk(m('fox --LAZY'));
  t.ok(m('fox -cat'));
  t.notOk(m('fox -"lazy dog"'));
  t.ok(m('fox inurl:animals'));
  t.notOk(m('fox -inurl:animals'));
  t.ok(m('fox filetype:html'));
  t.notOk(m('fox filetype:pdf'));
  t.ok(m('fox filetype:pdf filetype:html'), 'several positive filetypes are alternatives');
  t.ok(m('fox intitle:"fox facts"'));
  t.notOk(m('fox intitle:"dog"'));
  t.notOk(m('fox -intitle:fox'));
  t.ok(m('fox site:example.org'));
  t.ok(m('fox site:other.example site:example.org'), 'several positive sites are alternatives');
  t.notOk(m('fox site:other.example'));
  t.notOk(m('fox -site:example.org'));
  t.ok(m('+foxes +jumping'), 'the required-word check uses the index analysis (plurals, -ing)');
  t.notOk(m('fox cat -zzz'), 'with an operator, all bare words must match');
  t.ok(m('fox cat'), 'without operators, no bare word is required (ranked)');
  t.notOk(m('+cat fox'), '+word is required');
  t.notOk(m('"cat" fox'), 'a quoted word is required');
  t.ok(m('"ÉCOLES" fox', { title: 'Écoles', lang: 'fr' }), 'folded and stemmed in the page language');
});

t.test('compiled clauses: a text query only when there is positive text', async (t) => {
  t.equal(compileQuery(parseQuery('site:example.org')).text, null);
  t.equal(compileQuery(parseQuery('-fox')).text, null);
  t.equal(compileQuery(parseQuery('the of')).text, null, 'only stop words: no text query');
  t.ok(compileQuery(parseQuery('fox')).text);
  t.equal(compileQuery(parseQuery('fox site:example.org')).hasPositiveSite, true);
  t.equal(compileQuery(parseQuery('fox -site:example.org')).hasPositiveSite, false);
  t.same(compileQuery(parseQuery('fox "lazy dog"')).highlightTerms, ['lazy dog', 'fox']);
  // No word tells the language: each word is looked for in every analysis (English, French, whole word).
  t.same(compileQuery(parseQuery('fox fox dog')).text?.should, [
    { term: 'fox', weight: 2 },
    { term: 'fr:fox', weight: 2 },
    { term: '=:fox', weight: 2 },
    { term: 'dog', weight: 1 },
    { term: 'fr:dog', weight: 1 },
    { term: '=:dog', weight: 1 },
  ]);
  // An English query: English stems, and every language only for a word no stemmer changes ("fox").
  t.same(compileQuery(parseQuery('the fox and the dogs')).text?.should, [
    { term: 'fox', weight: 1 },
    { term: 'fr:fox', weight: 1 },
    { term: '=:fox', weight: 1 },
    { term: 'dog', weight: 1 },
    { term: '=:dogs', weight: 1 },
  ]);
});

const fakeIndex = {
  hostIdsUnder: (d: string) =>
    (['www.example.org', 'example.org', 'news.example.com'] as const).flatMap((h, i) => (hostMatchesSite(h, d) ? [i + 1] : [])),
  hasLang: (l: string) => l === 'en' || l === 'fr',
};

t.test('filters are typed values; the where clause of the LanceDB vector search holds only numbers and closed-set literals', async (t) => {
  const c = compileQuery(parseQuery('fox site:example.org -site:news.example.com'));
  const f = compileFilter(
    fakeIndex,
    c.ast.ops.site,
    { language: 'en', province: 'on', sourceType: 'government', freshness: '7d', country: 'ca' },
    new Date(0),
  );
  t.same(f, {
    hostIds: [1, 2],
    notHostIds: [3],
    lang: 'en',
    country: 'ca',
    province: 'on',
    sourceType: 'government',
    minDateMs: -604800000,
  });
  t.equal(
    whereOf(f!),
    "(host_id IN (1, 2)) AND (host_id NOT IN (3)) AND (lang = 'en') AND (country = 'ca') AND (province = 'on') AND (source_type LIKE 'government:%') AND (date_ms >= -604800000)",
  );
  const site = (q: string) => compileQuery(parseQuery(q)).ast.ops.site;
  t.equal(compileFilter(fakeIndex, site('fox site:unknown.example'), {}, new Date()), null);
  t.equal(compileFilter(fakeIndex, c.ast.ops.site, { language: "en' OR 1=1" }, new Date()), null);
  t.equal(
    compileFilter(fakeIndex, c.ast.ops.site, { language: 'de' }, new Date()),
    null,
    'a language absent from the index matches nothing',
  );
  t.throws(() => whereOf({ lang: "en' OR 1=1" }), RangeError, 'a value outside its shape never reaches a where string');
});

const hostile = fc.oneof(
  fc.string({ maxLength: 300 }),
  fc.string({ unit: 'grapheme', maxLength: 300 }),
  fc.constantFrom(
    "' OR 1=1 --",
    '"); DROP TABLE passages; --',
    '(((',
    ')))',
    'AND OR NOT',
    'site:',
    '"',
    '-',
    '--',
    'intitle:"',
    'é\u0301\u200b',
    'x'.repeat(300),
  ),
);

t.test('property: the parser never throws and always yields bounded lists', async (t) => {
  fc.assert(
    fc.property(fc.array(hostile, { maxLength: 6 }), (parts) => {
      const q = parts.join(' ');
      const ast = parseQuery(q);
      const c = compileQuery(ast);
      c.matches(row({}));
      const lists = [
        ast.required,
        ast.phrases,
        ast.excludedWords,
        ast.excludedPhrases,
        ...Object.values(ast.ops).flatMap((o) => [o.include, o.exclude]),
      ];
      for (const list of lists) if (list.length > 32) throw new Error('unbounded');
      if (ast.words.length > 128) throw new Error('unbounded words');
      for (const s of [...ast.ops.site.include, ...ast.ops.site.exclude])
        if (s !== null && (typeof s !== 'string' || !/^[a-z0-9.-]+$/.test(s))) throw new Error(`bad site ${s}`);
      for (const f of [...ast.ops.filetype.include, ...ast.ops.filetype.exclude])
        if (f !== null && (typeof f !== 'string' || !/^[a-z0-9]+$/.test(f))) throw new Error(`bad ext ${f}`);
    }),
    { numRuns: 400 },
  );
  t.pass('400 generated cases hold');
});

t.test('property: hostile operator values cannot change what is matched', async (t) => {
  const rows = [
    row({}),
    row({ host: 'news.example.com', url: 'https://news.example.com/a', text: 'fox news today', title: 'News' }),
    row({ host: 'evil.test', url: 'https://evil.test/x', text: 'fox OR 1=1', title: "' OR 1=1" }),
  ];
  fc.assert(
    fc.property(hostile, (v) => {
      // site: with a hostile value (no whitespace: a site value is one token): reference semantics.
      const token = v.replace(/\s+/g, '');
      const c = compileQuery(parseQuery(`fox site:${token}`));
      const d = normaliseSite(token.startsWith('"') ? (token.slice(1).split('"')[0] ?? '') : token);
      for (const r of rows) {
        const expected = d !== null && hostMatchesSite(r.host, d);
        if (c.matches(r) !== expected) throw new Error(`site:${token} on ${r.host}`);
      }
      const f = compileFilter(fakeIndex, c.ast.ops.site, {}, new Date(0));
      const w = f && whereOf(f);
      if (w && !/^\(host_id IN \([0-9, ]+\)\)$/.test(w)) throw new Error(`where leaked: ${w}`);
      // A quoted hostile value stays data inside its phrase: no operator or other clause appears.
      const inner = v.replace(/["\u201c\u201d]/g, '');
      const a = parseQuery(`intitle:"${inner}"`);
      if (
        a.ops.site.include.length +
          a.ops.filetype.include.length +
          a.words.length +
          a.required.length +
          a.excludedWords.length +
          a.ops.inurl.include.length !==
        0
      )
        throw new Error('leak from quoted value');
    }),
    { numRuns: 400 },
  );
  t.pass('400 generated cases hold');
});

t.test('issue 14: candidates fetch only the fields their checks read (vector arm: none for a plain ranked query)', async (t) => {
  const ranked = compileQuery(parseQuery('vitamin d deficiency and bone density'));
  t.same(ranked.matchColumns, [], 'nothing to verify: the vector arm reads no passage text');
  t.same(ranked.hitColumns, ['search_text'], 'the BM25 arm reads the terms for coordination');
  const strict = compileQuery(parseQuery('+vitamin bone -rickets'));
  t.same(strict.matchColumns, ['search_text'], 'required and excluded words are verified on every arm');
  const phrase = compileQuery(parseQuery('"bone density" inurl:health'));
  t.same([...phrase.matchColumns].sort(), ['search_text', 'text', 'url']);
  t.same(compileQuery(parseQuery('vitamin')).hitColumns, [], 'one ranked word: no coordination, nothing to read');
});
