/**
 * A query's typed filter as the LanceDB `where` predicate of its vector search: the only place a where string is built,
 * below the engine seam, so retrieval and the in-memory engine never see one.
 */
import type { PassageFilter } from '../../retrieval/passage-filter.js';

/**
 * A filter as a LanceDB predicate (the vector search over LanceDB's ANN index, for an index too large to keep its
 * vectors in memory): integers and members of closed sets only; `lang` and `country` were checked against their
 * shapes by `compileFilter`, and are checked again here.
 */
export function whereOf(f: PassageFilter): string | null {
  const parts: string[] = [];
  const ints = (xs: readonly number[]) => xs.map((n) => String(Math.trunc(n))).join(', ');
  if (f.hostIds !== undefined) parts.push(`host_id IN (${ints(f.hostIds)})`);
  if (f.notHostIds !== undefined && f.notHostIds.length > 0) parts.push(`host_id NOT IN (${ints(f.notHostIds)})`);
  if (f.lang !== undefined) parts.push(`lang = '${shaped(f.lang, /^[a-z]{2,3}$/)}'`);
  if (f.country !== undefined) parts.push(`country = '${shaped(f.country, /^[a-z]{2}$/)}'`);
  if (f.province !== undefined) parts.push(`province = '${shaped(f.province, /^[a-z]{2}$/)}'`);
  if (f.sourceType !== undefined)
    parts.push(f.sourceType === 'government' ? `source_type LIKE 'government:%'` : `source_type = '${shaped(f.sourceType, /^[a-z:]+$/)}'`);
  if (f.minDateMs !== undefined) parts.push(`date_ms >= ${Math.trunc(f.minDateMs)}`);
  return parts.length ? parts.map((p) => `(${p})`).join(' AND ') : null;
}

function shaped(v: string, re: RegExp): string {
  if (!re.test(v)) throw new RangeError(`filter value out of its closed set: ${JSON.stringify(v)}`);
  return v;
}
