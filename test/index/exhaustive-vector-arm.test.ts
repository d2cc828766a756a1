/**
 * Issue 15 (1M hybrid latency): when a query has required words and the BM25 arm's answer is exhaustive, the vector
 * arm ranks exactly those passages by their exact cosine distance instead of a deep nearest-neighbour search. The
 * ranking must equal the one the nearest-neighbour path gives (on a small index without a vector index both are exact).
 */
import t from 'tap';
import { fileURLToPath } from 'node:url';
import { corpusPage, readCorpus } from '../../cli/ingest.js';
import { createHashingEmbedder } from '../../index/serving/embedder.js';
import { ARM_DEPTH, ARM_DEPTH_SELECTIVE, retrieve, type CandidateSource } from '../../index/retrieval/retrieval.js';
import { PassageIndex } from '../../index/engines/lance/store.js';
import type { PageInput } from '../../page-model.js';

const CORPUS = fileURLToPath(new URL('../../../shared/data/beir/scifact/corpus.jsonl.gz', import.meta.url));

async function pages(n: number): Promise<PageInput[]> {
  const out: PageInput[] = [];
  for await (const doc of readCorpus(CORPUS)) {
    out.push(corpusPage(doc, out.length + 1, 'scifact', '2026-11-20T00:00:00Z'));
    if (out.length >= n) break;
  }
  return out;
}

t.test(
  'issue 15: a required-words hybrid query ranks the same through exact distances of the exhaustive BM25 set as through a nearest-neighbour search',
  async (t) => {
    const idx = await PassageIndex.open({ dir: t.testdir(), embedder: createHashingEmbedder(128) });
    t.teardown(() => idx.close());
    await idx.upsertPages(await pages(400));

    let exactCalls = 0;
    // The same index, but every exact-distance request answered from an unrestricted nearest-neighbour search over the
    // whole table (flat, since a 400-page index has no vector index: exact too).
    const source = (vectorDistances: CandidateSource['vectorDistances']): CandidateSource => ({
      embedder: idx.embedder,
      hostIdsUnder: (d) => idx.hostIdsUnder(d),
      hasLang: (l) => idx.hasLang(l),
      termIdf: (terms) => idx.termIdf(terms),
      titleScore: (q, row) => idx.titleScore(q, row),
      textCandidates: (q, w, k, e) => idx.textCandidates(q, w, k, e),
      vectorDistances,
      vectorCandidates: (v, w, k, e) => idx.vectorCandidates(v, w, k, e),
      scanCandidates: (w, k, e) => idx.scanCandidates(w, k, e),
      passageRows: (keys) => idx.passageRows(keys),
      resultRows: (keys) => idx.resultRows(keys),
    });
    const viaAnn = source(async (v, keys) => {
      exactCalls++;
      const all = await idx.vectorCandidates(v, {}, 100_000, []);
      const want = new Set(keys.map((k) => `${k.page_ref}:${k.ordinal}`));
      return new Map(all.filter((r) => want.has(`${r.page_ref}:${r.ordinal}`)).map((r) => [`${r.page_ref}:${r.ordinal}`, r._distance]));
    });
    const counted = source((v, keys) => (exactCalls++, idx.vectorDistances(v, keys)));

    for (const query of ['+cells +protein', '+mice +gene expression', '"stem cells" differentiation', '+insulin']) {
      exactCalls = 0;
      const a = await retrieve(counted, { query });
      t.equal(exactCalls, 1, `${query}: the exhaustive BM25 set was ranked by exact distances`);
      t.equal(a.ranking, 'hybrid-rrf-hashing');
      t.ok(a.passages.length > 0, `${query}: answered`);
      t.ok(
        a.passages.some((p) => p.vectorRank !== null),
        `${query}: the vector arm contributed`,
      );
      const b = await retrieve(viaAnn, { query });
      const view = (r: typeof a) =>
        r.passages.map((p) => [p.row.page_ref, p.row.ordinal, p.bm25Rank, p.vectorRank, Number(p.score.toFixed(9))]);
      t.same(view(a), view(b), `${query}: same passages, ranks and scores`);
      // Every passage the vector arm ranked holds the required words (it is one of the BM25 arm's).
      t.ok(
        a.passages.every((p) => p.bm25Rank !== null),
        `${query}: nothing outside the BM25 set`,
      );
    }

    // A ranked query without required words keeps the nearest-neighbour arm (it may find passages sharing no word).
    exactCalls = 0;
    const ranked = await retrieve(counted, { query: 'how do cells respond to protein misfolding' });
    t.equal(exactCalls, 0, 'plain ranked query: no exact-distance shortcut');
    t.ok(ranked.passages.some((p) => p.vectorRank !== null && p.bm25Rank === null) || ranked.passages.length > 0);
  },
);

t.test('issue 14: list depths — required words alone read the ranked depth without a vector arm, the deep one with it', async (t) => {
  const idx = await PassageIndex.open({ dir: t.testdir(), embedder: createHashingEmbedder(128) });
  t.teardown(() => idx.close());
  await idx.upsertPages(await pages(300));
  const asked: { arm: string; k: number }[] = [];
  const source: CandidateSource = {
    embedder: idx.embedder,
    hostIdsUnder: (d) => idx.hostIdsUnder(d),
    hasLang: (l) => idx.hasLang(l),
    termIdf: (terms) => idx.termIdf(terms),
    titleScore: (q, row) => idx.titleScore(q, row),
    textCandidates: (q, w, k, e) => (asked.push({ arm: 'text', k }), idx.textCandidates(q, w, k, e)),
    vectorDistances: (v, keys) => idx.vectorDistances(v, keys),
    vectorCandidates: (v, w, k, e) => (asked.push({ arm: 'vector', k }), idx.vectorCandidates(v, w, k, e)),
    scanCandidates: (w, k, e) => idx.scanCandidates(w, k, e),
    passageRows: (keys) => idx.passageRows(keys),
    resultRows: (keys) => idx.resultRows(keys),
  };
  const depth = async (query: string, mode: 'bm25' | 'hybrid') => {
    asked.length = 0;
    const r = await retrieve(source, { query, mode });
    return { r, text: asked.find((a) => a.arm === 'text')?.k, vector: asked.find((a) => a.arm === 'vector')?.k };
  };

  const required = await depth('+cells +protein', 'bm25');
  t.equal(required.text, ARM_DEPTH, 'bm25, required words only: the ranked depth');
  t.ok(required.r.passages.length > 0, 'answered');
  const rows = [...(await idx.passageRows(required.r.passages.map((p) => p.row))).values()];
  t.equal(rows.length, required.r.passages.length);
  t.ok(
    rows.every((r) => /cell/i.test(`${r.title} ${r.text}`) && /protein/i.test(`${r.title} ${r.text}`)),
    'each passage holds both words',
  );
  t.equal((await depth('cells protein', 'bm25')).text, ARM_DEPTH, 'bm25, ranked words: the ranked depth');
  t.equal((await depth('+cells -protein', 'bm25')).text, ARM_DEPTH_SELECTIVE, 'an exclusion only code can check: deep');
  t.equal((await depth('"stem cells" differentiation', 'bm25')).text, ARM_DEPTH_SELECTIVE, 'a phrase only code can check: deep');
  // With a vector arm, its candidates are checked for the required words, and the exhaustive BM25 set replaces it
  // only when the text arm's list is deep enough to be exhaustive.
  const hybrid = await depth('+cells +protein', 'hybrid');
  t.equal(hybrid.text, ARM_DEPTH_SELECTIVE, 'hybrid, required words: deep');
});
