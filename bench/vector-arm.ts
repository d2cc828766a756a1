/**
 * What the vector benches (vector-shards.ts, vector-retrain.ts) share: the served vector arm's query (store.ts
 * `vectorArmQuery`, so a bench times and counts the query `vectorCandidates` sends), the exact top k it is scored
 * against, recall at 10 and at k, and one query's counts from LanceDB's analyzed plan.
 */
import type * as lancedb from '@lancedb/lancedb';
import { vectorArmQuery, type VectorSearchPlan } from '../index/engines/lance/store.js';

/** A passage of a result, by `page_ref:ordinal`, and its distance. */
export interface VectorHit {
  readonly key: string;
  readonly d: number;
}

type ArrowLike = { numRows: number; getChild(n: string): { get(i: number): unknown } | null };

/** The hits of a search's Arrow result, in its order. */
export function hitsOf(t: ArrowLike): VectorHit[] {
  const refs = t.getChild('page_ref')!;
  const ords = t.getChild('ordinal')!;
  const ds = t.getChild('_distance')!;
  return Array.from({ length: t.numRows }, (_, i) => ({ key: `${refs.get(i)}:${ords.get(i)}`, d: Number(ds.get(i)) }));
}

/** The `n` nearest of several lists (shards' answers), ties by key. */
export function nearest(lists: readonly (readonly VectorHit[])[], n: number): VectorHit[] {
  return lists
    .flat()
    .sort((a, b) => a.d - b.d || (a.key < b.key ? -1 : 1))
    .slice(0, n);
}

/** The served search of `table` for `v` with `plan` (no filter, no extra columns). */
export const servedSearch = (table: lancedb.Table, v: readonly number[], plan: VectorSearchPlan) =>
  vectorArmQuery(table, v, { limit: plan.limit, plan });

/** The exact `k` nearest of `v` in `table`: a flat search of every vector. */
export async function exactNearest(table: lancedb.Table, v: readonly number[], k: number): Promise<VectorHit[]> {
  return hitsOf(
    await table
      .vectorSearch(Array.from(v))
      .distanceType('cosine')
      .bypassVectorIndex()
      .select(['page_ref', 'ordinal', '_distance'])
      .limit(k)
      .toArrow(),
  );
}

/** Recall of `got` against the exact list `want`: of its top 10, and of all of it. */
export function recall(got: readonly string[], want: readonly string[]): { at10: number; atK: number } {
  const inK = new Set(want);
  const in10 = new Set(want.slice(0, 10));
  return {
    atK: got.filter((x) => inK.has(x)).length / want.length,
    at10: got.slice(0, 10).filter((x) => in10.has(x)).length / Math.min(10, want.length),
  };
}

/** The counts LanceDB's analyzed plan gives of one search: delta segments, partitions, PQ codes, vectors refined. */
export type PlanCounts = Record<'deltas' | 'partitions' | 'searched' | 'pqCompared' | 'refined', number>;

/** The counts of each search's analyzed plan, summed (a query over several shards). */
export async function planCounts(searches: readonly lancedb.VectorQuery[]): Promise<PlanCounts> {
  const out: PlanCounts = { deltas: 0, partitions: 0, searched: 0, pqCompared: 0, refined: 0 };
  const num = (x: string): number => {
    const m = /^([\d.]+)\s*([KM]?)/.exec(x);
    return m ? Number(m[1]) * (m[2] === 'K' ? 1e3 : m[2] === 'M' ? 1e6 : 1) : 0;
  };
  for (const q of searches) {
    const plan = await q.analyzePlan();
    const grab = (line: RegExp, field: string): number => {
      const m = new RegExp(`${field}=([\\d.]+ ?[KM]?)`).exec(line.exec(plan)?.[0] ?? '');
      return m ? num(m[1]!) : 0;
    };
    out.deltas += grab(/ANNIvfPartition.*$/m, 'deltas_searched');
    out.partitions += grab(/ANNIvfPartition.*$/m, 'partitions_ranked');
    out.searched += grab(/ANNSubIndex.*$/m, 'partitions_searched');
    out.pqCompared += grab(/ANNSubIndex.*$/m, 'index_comparisons');
    out.refined += grab(/KNNVectorDistance.*$/m, 'output_rows');
  }
  return out;
}
