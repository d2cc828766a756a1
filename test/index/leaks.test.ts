/**
 * Issue 15 regression: every strict constraint holds for every result, whatever state the engine's index is in.
 * Random corpora are written in several batches with random optimize points (so results come from indexed rows,
 * freshly written unindexed rows, and words the index has never seen), then random operator queries run through
 * retrieval; a reference checker written here, independent of query.ts, judges every result.
 */
import t from 'tap';
import fc from 'fast-check';
import { analyze, passageAnalyses, wordTokens } from '../../index/retrieval/analyzer.js';
import { createHashingEmbedder } from '../../index/serving/embedder.js';
import { hydrate, retrieve } from '../../index/retrieval/retrieval.js';
import { PassageIndex, type PassageRow } from '../../index/engines/lance/store.js';
import type { PageInput } from '../../page-model.js';
import { makePage } from '../helpers/page-input.js';

const VOCAB = ['vitamin', 'library', 'playstation', 'bone', 'density', 'collectes', 'école', 'river', 'cells', 'memory', 'sleep', 'zinc'];
const HOSTS = ['a.example', 'b.example', 'news.b.example'];
const TYPES = ['html', 'pdf', 'txt'];

const word = fc.constantFrom(...VOCAB);
const pageArb = fc.record({
  host: fc.constantFrom(...HOSTS),
  filetype: fc.constantFrom(...TYPES),
  lang: fc.constantFrom('en', 'fr'),
  title: fc.array(word, { minLength: 1, maxLength: 3 }),
  passages: fc.array(fc.array(word, { minLength: 2, maxLength: 10 }), { minLength: 1, maxLength: 3 }),
  archived: fc.boolean(),
});

type Constraint =
  | { kind: 'require'; w: string }
  | { kind: 'exclude'; w: string }
  | { kind: 'phrase'; a: string; b: string }
  | { kind: 'intitle'; w: string }
  | { kind: 'site'; host: string; neg: boolean }
  | { kind: 'filetype'; ft: string; neg: boolean }
  | { kind: 'inurl'; text: string; neg: boolean };

const constraintArb: fc.Arbitrary<Constraint> = fc.oneof(
  word.map((w) => ({ kind: 'require' as const, w })),
  word.map((w) => ({ kind: 'exclude' as const, w })),
  fc.tuple(word, word).map(([a, b]) => ({ kind: 'phrase' as const, a, b })),
  word.map((w) => ({ kind: 'intitle' as const, w })),
  fc
    .tuple(fc.constantFrom('b.example', 'a.example', 'news.b.example'), fc.boolean())
    .map(([host, neg]) => ({ kind: 'site' as const, host, neg })),
  fc.tuple(fc.constantFrom(...TYPES), fc.boolean()).map(([ft, neg]) => ({ kind: 'filetype' as const, ft, neg })),
  fc.tuple(fc.constantFrom('archive', 'page-'), fc.boolean()).map(([text, neg]) => ({ kind: 'inurl' as const, text, neg })),
);
// At least one positive text constraint, so the query searches text; plus an unseen word sometimes.
const queryArb = fc.record({
  text: fc.oneof(
    word.map((w) => ({ kind: 'require' as const, w })),
    fc.tuple(word, word).map(([a, b]) => ({ kind: 'phrase' as const, a, b })),
  ),
  more: fc.array(constraintArb, { maxLength: 3 }),
  unseen: fc.boolean(),
});

function render(c: Constraint): string {
  switch (c.kind) {
    case 'require':
      return `+${c.w}`;
    case 'exclude':
      return `-${c.w}`;
    case 'phrase':
      return `"${c.a} ${c.b}"`;
    case 'intitle':
      return `intitle:"${c.w}"`;
    case 'site':
      return `${c.neg ? '-' : ''}site:${c.host}`;
    case 'filetype':
      return `${c.neg ? '-' : ''}filetype:${c.ft}`;
    case 'inurl':
      return `${c.neg ? '-' : ''}inurl:${c.text}`;
  }
}

/** The reference: what each constraint means for a stored row (words in the page's own analysis). */
function holds(c: Constraint, r: PassageRow): boolean {
  const analysis = passageAnalyses(r.lang, r.title, [r.text])[0]!;
  const terms = new Set(analyze(`${r.title}\n${r.text}`, analysis));
  const has = (w: string) => analyze(w, analysis).some((x) => terms.has(x));
  const seq = (toks: string[], a: string, b: string) => toks.some((x, i) => x === wordTokens(a)[0] && toks[i + 1] === wordTokens(b)[0]);
  switch (c.kind) {
    case 'require':
      return has(c.w);
    case 'exclude':
      return !has(c.w);
    case 'phrase':
      return seq(wordTokens(r.text), c.a, c.b) || seq(wordTokens(r.title), c.a, c.b);
    case 'intitle':
      return wordTokens(r.title).includes(wordTokens(c.w)[0]!);
    case 'site': {
      const under = r.host === c.host || r.host.endsWith(`.${c.host}`);
      return c.neg ? !under : under;
    }
    case 'filetype':
      return c.neg ? r.filetype !== c.ft : r.filetype === c.ft;
    case 'inurl':
      return c.neg ? !r.url.includes(c.text) : r.url.includes(c.text);
  }
}

/**
 * The constraint a row breaks, or null. Several positive site: (or filetype:) are alternatives, as the query language
 * defines them (OPERATORS[...].alternatives): the row must satisfy one of them; every other constraint must hold.
 */
function brokenConstraint(constraints: readonly Constraint[], r: PassageRow): string | null {
  for (const kind of ['site', 'filetype'] as const) {
    const alternatives = constraints.filter((c) => c.kind === kind && !c.neg);
    if (alternatives.length > 0 && !alternatives.some((c) => holds(c, r))) return alternatives.map(render).join(' | ');
  }
  for (const c of constraints) {
    if ((c.kind === 'site' || c.kind === 'filetype') && !c.neg) continue;
    if (!holds(c, r)) return render(c);
  }
  return null;
}

t.test('issue 15: no result ever breaks a strict constraint, before and after optimize, in every batch', async (t) => {
  let checked = 0;
  await fc.assert(
    fc.asyncProperty(
      fc.array(fc.array(pageArb, { minLength: 1, maxLength: 8 }), { minLength: 2, maxLength: 3 }),
      fc.array(fc.boolean(), { minLength: 3, maxLength: 3 }),
      fc.array(queryArb, { minLength: 4, maxLength: 6 }),
      async (batches, optimizeAfter, queries) => {
        const dir = t.testdir();
        // refreshAfterMs 0: rows written after the last optimize stay unindexed until the next one.
        const idx = await PassageIndex.open({ dir, embedder: createHashingEmbedder(64), refreshAfterMs: 0 });
        try {
          let ref = 1;
          for (const [bi, batch] of batches.entries()) {
            const pages: PageInput[] = batch.map((p) => {
              const n = ref++;
              return makePage(
                n,
                p.host,
                p.passages.map((ws) => ws.join(' ')),
                {
                  title: p.title.join(' '),
                  lang: p.lang,
                  filetype: p.filetype,
                  url: `https://${p.host}/${p.archived ? 'archive' : 'page-'}${n}.${p.filetype}`,
                  contentHash: `h${n}`,
                },
              );
            });
            await idx.upsertPages(pages);
            if (optimizeAfter[bi]) await idx.optimize();
            // Queries run after every batch: indexed rows, unindexed rows and a mix.
            for (const q of queries) {
              const constraints = [q.text, ...q.more];
              const query = [...constraints.map(render), ...(q.unseen ? ['+qqzzunseenword'] : [])].join(' ');
              for (const mode of ['bm25', 'hybrid'] as const) {
                const res = await retrieve(idx, { query, mode });
                const rows = await hydrate(idx, res.passages);
                if (q.unseen && rows.length > 0)
                  throw new Error(`${query} (${mode}): a required word no page holds still gave ${rows.length} results`);
                for (const p of rows) {
                  checked++;
                  const broken = brokenConstraint(constraints, p.row);
                  if (broken)
                    throw new Error(
                      `${query} (${mode}, batch ${bi}): page ${p.row.page_ref} breaks ${broken}: "${p.row.title}" / "${p.row.text}"`,
                    );
                }
              }
            }
          }
        } finally {
          await idx.close();
        }
      },
    ),
    { numRuns: 6 },
  );
  t.ok(checked > 0, `${checked} results checked`);
});

t.test('issue 15: "vitamin library" with an operator never returns a library page without "vitamin", fresh or optimized', async (t) => {
  const idx = await PassageIndex.open({ dir: t.testdir(), embedder: createHashingEmbedder(64), refreshAfterMs: 0 });
  t.teardown(() => idx.close());
  await idx.upsertPages([
    makePage(1, 'a.example', ['Vitamin D and bone density in a library study']),
    makePage(2, 'b.example', ['The library opens on Monday']),
  ]);
  await idx.optimize();
  await idx.upsertPages([
    makePage(3, 'c.example', ['Library hours for the PlayStation club']),
    makePage(4, 'd.example', ['Vitamin C facts']),
  ]);
  for (const q of ['vitamin library -zzz', '+vitamin +library', 'vitamin playstation -zzz']) {
    for (const mode of ['bm25', 'hybrid'] as const) {
      const refs = (await retrieve(idx, { query: q, mode })).passages.map((p) => p.row.page_ref);
      t.same(refs, q.includes('playstation') ? [] : [1], `${q} (${mode}), new rows unindexed`);
    }
  }
  await idx.optimize();
  t.same(
    (await retrieve(idx, { query: '+vitamin +library' })).passages.map((p) => p.row.page_ref),
    [1],
    'after optimize',
  );
  const ranked = (await retrieve(idx, { query: 'vitamin library', mode: 'bm25' })).passages.map((p) => p.row.page_ref);
  t.equal(ranked[0], 1, 'ranked: the page with both words first');
  t.same([...ranked].sort(), [1, 2, 3, 4], 'ranked: pages with one of the words follow');
});
