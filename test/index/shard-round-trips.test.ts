/**
 * What a query costs an `api` replica over searchers (docs/architecture.md#shards): per shard one call before scoring
 * (`lookup`: filters, title and BM25 statistics) and one that scores (`arms`: every candidate arm at once, with the
 * whole index's statistics), then the rows of the final page from the shards that hold them — counted on the replica's
 * `RemoteShard`s, for BM25 and hybrid, svc_search's and svc_context's retrieval, while the answers stay those of one
 * process over the same shards; a shard whose own statistics count no passage of a required word is not asked to
 * score, the text arm being the query's only one. (A shard that may hold more of the text arm's k than it was first
 * asked for is asked once more, `textCandidates`: never with this corpus, counted in shard-text-depth.test.ts.)
 */
import t, { type Test } from 'tap';
import { join } from 'node:path';
import { createHashingEmbedder } from '../../index/serving/embedder.js';
import { contextPassages, searchPages } from '../../index/retrieval/retrieval.js';
import { openIndex, type ServedIndex, type ShardedIndex } from '../../index/shards/sharded-index.js';
import type { PageInput } from '../../page-model.js';
import { makePage } from '../helpers/page-input.js';
import { liveOf, remoteIndex, startShardServer } from '../helpers/shard-servers.js';

const NOW = new Date('2026-11-28T00:00:00Z');
const TEXTS = ['bone density and vitamin d', 'river library memory', 'sleep and memory in cells', 'zinc permit for river works'];

/** `pages` written into one process's 3 shards, and a replica over a searcher serving them (its calls counted). */
async function localAndRemote(t: Test, pages: PageInput[]) {
  const embedder = createHashingEmbedder(32);
  const local = (await openIndex({ dir: join(t.testdir(), 'idx'), shards: 3, embedder, refreshAfterMs: 0 })) as ShardedIndex;
  t.teardown(() => local.close());
  await local.upsertPages(pages);
  const server = await startShardServer(new Map(local.shards.map((s, i) => [i, s])));
  const { index: remote, sources } = await remoteIndex({ count: 3, live: () => liveOf([server], 3), embedder });
  t.teardown(async () => {
    await remote.close();
    await server.close();
  });
  return { local, remote, sources };
}

t.test('a query asks each shard twice before its rows, whatever its arms', async (t) => {
  const pages = Array.from({ length: 30 }, (_, i) =>
    makePage(i + 1, ['a.example', 'b.example', 'c.example'][i % 3]!, [TEXTS[i % 4]!, `${TEXTS[(i + 1) % 4]} part ${i}`], {
      title: TEXTS[(i + 2) % 4]!,
    }),
  );
  const { local, remote, sources } = await localAndRemote(t, pages);

  const search = (idx: ServedIndex, query: string, mode: 'bm25' | 'hybrid') =>
    searchPages(idx, { query, mode, now: NOW, limit: 10, offset: 0 }).then((r) => ({
      ranking: r.ranking,
      pages: r.pages.map((p) => [p.best.row.page_ref, p.best.score, p.best.row.snippet_text]),
      bands: [...r.bands],
    }));
  const context = (idx: ServedIndex, query: string, mode: 'bm25' | 'hybrid') =>
    contextPassages(idx, { query, mode, now: NOW, maxPassages: 8 }).then((r) =>
      r.passages.map((p) => [p.row.page_ref, p.row.ordinal, p.score]),
    );
  /** The calls each shard was sent while `fn` ran. */
  const counted = async <T>(fn: () => Promise<T>): Promise<{ value: T; calls: Record<string, number>[] }> => {
    const before = sources.map((s) => new Map(s.calls));
    const { value, coverage } = await remote.covered(fn);
    t.same(coverage, { answered: 3, total: 3, missing: [] });
    const calls = sources.map((s, i) => {
      const out: Record<string, number> = {};
      for (const [call, n] of s.calls)
        if (call !== 'status' && n - (before[i]!.get(call) ?? 0) > 0) out[call] = n - (before[i]!.get(call) ?? 0);
      return out;
    });
    return { value, calls };
  };

  // Plain words (the vector arm runs its own search), every word required (its distances come with the text arm), a
  // query of operators only (a filtered scan).
  for (const query of ['river memory', '+river +memory', 'site:b.example'])
    for (const mode of ['bm25', 'hybrid'] as const) {
      const s = await counted(() => search(remote, query, mode));
      t.same(s.value, await search(local, query, mode), `${query} ${mode}: svc_search answers as one process`);
      t.ok(s.value.pages.length > 0, `${query} ${mode}: results`);
      for (const [i, calls] of s.calls.entries()) {
        t.equal(calls.lookup, 1, `${query} ${mode}, shard ${i}: one lookup`);
        t.equal(calls.arms, 1, `${query} ${mode}, shard ${i}: one call for every arm`);
        t.ok((calls.resultRows ?? 0) <= 1, `${query} ${mode}, shard ${i}: the rows of its results at most once`);
        t.same(
          Object.keys(calls).filter((c) => !['lookup', 'arms', 'resultRows'].includes(c)),
          [],
          `${query} ${mode}, shard ${i}: no other call`,
        );
      }
      const holding = new Set(s.value.pages.map(([ref]) => local.shardFor(pages.find((x) => x.pageRef === ref)!.url)));
      t.same(
        s.calls.flatMap((c, i) => (c.resultRows === 1 ? [i] : [])),
        [...holding].sort(),
        `${query} ${mode}: rows only from the shards holding results`,
      );
      const c = await counted(() => context(remote, query, mode));
      t.same(c.value, await context(local, query, mode), `${query} ${mode}: svc_context answers as one process`);
      for (const calls of c.calls) {
        const { passageRows = 0, ...rest } = calls;
        t.same(rest, { lookup: 1, arms: 1 }, `${query} ${mode}: svc_context's calls before its rows`);
        t.ok(passageRows <= 1, `${query} ${mode}: its rows at most once`);
      }
    }
});

t.test("a shard whose statistics count none of a required word's passages is not asked to score", async (t) => {
  const pages = Array.from({ length: 24 }, (_, i) =>
    makePage(i + 1, ['a.example', 'b.example', 'c.example'][i % 3]!, [TEXTS[i % 4]!, `${TEXTS[(i + 1) % 4]} part ${i}`]),
  );
  // The one page with the rare word: its shard alone holds it.
  pages.push(makePage(99, 'a.example', ['zeolite filters for river works'], { url: 'https://a.example/zeolite' }));
  const { local, remote, sources } = await localAndRemote(t, pages);
  const rare = local.shardFor('https://a.example/zeolite');
  const search = (idx: ServedIndex, query: string, mode: 'bm25' | 'hybrid') =>
    searchPages(idx, { query, mode, now: NOW, limit: 10, offset: 0 }).then((r) =>
      r.pages.map((p) => [p.best.row.page_ref, p.best.score, p.best.row.snippet_text]),
    );
  const armsCalls = async (query: string, mode: 'bm25' | 'hybrid') => {
    const before = sources.map((s) => s.calls.get('arms') ?? 0);
    const { value, coverage } = await remote.covered(() => search(remote, query, mode));
    t.same(coverage, { answered: 3, total: 3, missing: [] }, `${query} ${mode}: every shard counted as answering`);
    t.same(value, await search(local, query, mode), `${query} ${mode}: answers as one process`);
    return sources.map((s, i) => (s.calls.get('arms') ?? 0) - before[i]!);
  };

  const only = [0, 1, 2].map((i) => (i === rare ? 1 : 0));
  t.same(await armsCalls('+zeolite +river', 'bm25'), only, 'every word required, BM25: only the shard holding the rare word scores');
  t.same(await armsCalls('+zeolite', 'bm25'), only, 'the rare word alone');
  t.same(await armsCalls('+nosuchword +river', 'bm25'), [0, 0, 0], 'a word no shard holds: no shard scores');
  // A shard the rare word is absent from may still give candidates to these: each shard is asked.
  t.same(await armsCalls('zeolite river', 'bm25'), [1, 1, 1], 'no word required');
  t.same(await armsCalls('+zeolite +river', 'hybrid'), [1, 1, 1], 'hybrid: the vector arm may answer from any shard');
  t.ok((await search(remote, '+zeolite +river', 'bm25')).length > 0, 'the rare page is found');
});
