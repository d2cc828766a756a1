import t from 'tap';
import { searchPages, type CandidateSource } from '../../index/retrieval/retrieval.js';
import { PassageIndex } from '../../index/engines/lance/store.js';
import type { PageInput } from '../../page-model.js';
import { toResult } from '../../tools/search.js';
import type { Warning } from '../../index/retrieval/warnings.js';
import { makePage } from '../helpers/page-input.js';

// A result page reads the row of each page's best passage; a page's next passages are read only when the best one has
// nothing to quote (its snippet text blank, all of it under data-nosnippet), and the excerpt then comes from them.
t.test('issue 14: a result page reads one row per result unless the best passage has nothing to quote', async (t) => {
  const idx = await PassageIndex.open({ dir: t.testdir(), embedder: null });
  t.teardown(() => idx.close());
  const quotable = makePage(1, 'a.example', [
    'Okapi giraffe okapi forest okapi sightings in the Ituri rainforest.',
    'A second okapi note about the forest reserve.',
    'A third okapi note on its striped legs.',
  ]);
  const hidden: PageInput = {
    ...makePage(2, 'b.example', []),
    passages: [
      // The best passage for "okapi" (three occurrences), entirely under data-nosnippet: searchable, never quoted.
      { ordinal: 0, text: 'Okapi okapi okapi hidden census figures.', snippetText: '  ', headingPath: [] },
      {
        ordinal: 1,
        text: 'A quotable okapi paragraph.',
        snippetText: 'A quotable okapi paragraph.',
        headingPath: [],
      },
      {
        ordinal: 2,
        text: 'Another okapi line, longer than the one before it, about rangers, roads, rivers and the rainy season.',
        snippetText: 'Another okapi line, longer than the one before it, about rangers, roads, rivers and the rainy season.',
        headingPath: [],
      },
    ],
  };
  // A page that forbids excerpts: no passage would give one, so none past the best is read.
  const forbidden = makePage(3, 'c.example', ['Okapi okapi okapi restricted text.', 'More okapi text here.'], {
    snippet: { nosnippet: true, maxSnippet: null },
  });
  await idx.upsertPages([quotable, hidden, forbidden]);
  await idx.textEngineReady();

  const asked: number[] = [];
  const counting: CandidateSource = new Proxy(idx as unknown as CandidateSource, {
    get(target, prop) {
      const v = Reflect.get(target, prop) as unknown;
      if (prop === 'resultRows')
        return (keys: readonly { page_ref: number }[]) => {
          asked.push(...keys.map((k) => k.page_ref));
          return idx.resultRows(keys as never);
        };
      return typeof v === 'function' ? (v as (...a: unknown[]) => unknown).bind(target) : v;
    },
  });
  const res = await searchPages(counting, { query: 'okapi', mode: 'bm25', limit: 10, offset: 0 });
  const byRef = new Map(res.pages.map((p) => [p.best.row.page_ref, p]));
  t.same([...byRef.keys()].sort(), [1, 2, 3], 'all three pages found');
  t.same(
    byRef.get(1)!.passages.map((p) => p.row.ordinal),
    [byRef.get(1)!.best.row.ordinal],
    'a quotable best passage: only its row is read',
  );
  t.equal(byRef.get(2)!.best.row.ordinal, 0, 'the hidden passage ranks first on its page');
  t.same(
    byRef.get(2)!.passages.map((p) => p.row.ordinal),
    [0, 1, 2],
    'nothing to quote in the best passage: the next ones are read, in rank order',
  );
  t.same(
    byRef.get(3)!.passages.map((p) => p.row.ordinal),
    [byRef.get(3)!.best.row.ordinal],
    'nosnippet: no passage past the best is read',
  );
  // Rows read: one per page, then page 2's two others (in a second read).
  t.equal(asked.length, 3 + 2, 'five rows read in all');
  t.same(asked.slice(3).sort(), [2, 2], 'the second read is page 2 only');

  const warnings: Warning[] = [];
  const results = res.pages.map((p) => toResult(p, res.compiled.highlightTerms, warnings, 'full', res.bands.get(p.best.row.page_ref)!));
  const r2 = results.find((r) => r.page_ref === 2)!;
  t.match(r2.excerpt?.text, /quotable okapi paragraph/, 'the excerpt comes from the first quotable passage');
  t.notMatch(r2.excerpt?.text ?? '', /census/, 'never from the hidden one');
  t.match(results.find((r) => r.page_ref === 1)!.excerpt?.text, /okapi/i);
  t.equal(results.find((r) => r.page_ref === 3)!.excerpt, null, 'nosnippet: no excerpt');
});
