/**
 * The wire between an `api` replica and a searcher process (docs/architecture.md#shards): each `ShardSource` call is
 * one `POST /internal/v1/shard/<i>/<call>` whose body and answer are JSON. Values JSON has no form for travel tagged:
 * row ids (bigint), query vectors (Float32Array, base64 of their bytes), a row's term presence of a long query
 * (Uint8Array, base64), statistics (Map) and non-finite numbers, so
 * the other side reads back exactly what was sent — a score crosses as the same double, which keeps N searchers'
 * answers equal to one process's.
 */
import { timingSafeEqual, createHash } from 'node:crypto';
import type { PassageIndex } from '../engines/lance/store.js';
import type { MatchColumn } from '../engines/lance/columns.js';
import type { CorpusStats, TextQuery, TitleCorpus } from '../retrieval/engine-seam.js';
import type { PassageFilter } from '../retrieval/passage-filter.js';
import type { PassageKey } from '../engines/lance/columns.js';

/** The route prefix of a searcher's shards (the shard index and the call follow). */
export const SHARD_ROUTE = '/internal/v1/shard';

/** Encodes a call's arguments or answer (see the module comment for what is tagged). */
export function encodeWire(value: unknown): string {
  return JSON.stringify(value, function (this: unknown, _key, v: unknown) {
    if (typeof v === 'bigint') return { $big: v.toString() };
    if (typeof v === 'number' && !Number.isFinite(v)) return { $num: String(v) };
    if (v instanceof Float32Array) return { $f32: Buffer.from(v.buffer, v.byteOffset, v.byteLength).toString('base64') };
    // A candidate's `_present` of a query of more than 31 probe terms: plain JSON would make it an object whose
    // length is undefined, and the api would then look for the row's search_text, which a candidate does not carry.
    if (v instanceof Uint8Array) return { $u8: Buffer.from(v.buffer, v.byteOffset, v.byteLength).toString('base64') };
    if (v instanceof Map) return { $map: [...(v as Map<unknown, unknown>).entries()] };
    return v;
  });
}

/** Reads what `encodeWire` wrote. */
export function decodeWire(text: string): unknown {
  return JSON.parse(text, (_key, v: unknown) => {
    if (v === null || typeof v !== 'object' || Array.isArray(v)) return v;
    const o = v as Record<string, unknown>;
    const keys = Object.keys(o);
    if (keys.length !== 1) return v;
    if (typeof o.$big === 'string') return BigInt(o.$big);
    if (typeof o.$num === 'string') return Number(o.$num);
    if (typeof o.$f32 === 'string') {
      const bytes = Buffer.from(o.$f32, 'base64');
      // Copied into an aligned buffer: a Buffer's byteOffset need not be a multiple of 4.
      return new Float32Array(new Uint8Array(bytes).buffer);
    }
    if (typeof o.$u8 === 'string') return new Uint8Array(Buffer.from(o.$u8, 'base64'));
    if (Array.isArray(o.$map)) return new Map(o.$map as [unknown, unknown][]);
    return v;
  });
}

/** Whether `given` is the fleet secret, in time that does not depend on where they differ (digests of equal length). */
export function fleetSecretMatches(given: string, secret: string): boolean {
  const a = createHash('sha256').update(given).digest();
  const b = createHash('sha256').update(secret).digest();
  return timingSafeEqual(a, b);
}

/**
 * What a searcher tells about a shard: what the `api` replica needs synchronously between queries. Cheap (asked every
 * heartbeat): the shard's counts are a call of their own (`stats`).
 */
export interface ShardStatus {
  readonly version: number;
  /** The model of the embedder whose vectors the shard serves (null: its vector arm does not serve). */
  readonly embedderModel: string | null;
  readonly vectorsUnused: { stored: string | null; configured: string; reembedding?: boolean } | null;
}

/** What a query's filters and title boost need of a shard before retrieval runs (answered in one call). */
export interface ShardLookup {
  readonly domains: readonly string[];
  readonly lang: string | null;
  readonly titleTerms: readonly string[];
}

/** The answer to a `ShardLookup`. */
export interface ShardLookupAnswer {
  readonly hostIds: [string, number[]][];
  readonly hasLang: boolean;
  readonly titleCorpus: TitleCorpus;
}

/** Raised for a call the wire does not know or malformed arguments: the route answers 400. */
export class ShardCallError extends Error {
  override readonly name = 'ShardCallError';
}

const obj = (v: unknown): Record<string, unknown> => {
  if (v === null || typeof v !== 'object' || Array.isArray(v)) throw new ShardCallError('arguments must be an object');
  return v as Record<string, unknown>;
};
const num = (v: unknown, name: string): number => {
  if (typeof v !== 'number' || !Number.isFinite(v)) throw new ShardCallError(`${name} must be a number`);
  return v;
};
const strs = (v: unknown, name: string): string[] => {
  if (!Array.isArray(v) || !v.every((s) => typeof s === 'string')) throw new ShardCallError(`${name} must be strings`);
  return v as string[];
};
const keys = (v: unknown): PassageKey[] => {
  if (!Array.isArray(v)) throw new ShardCallError('keys must be an array');
  return v.map((k) => {
    const o = obj(k);
    num(o.page_ref, 'page_ref');
    num(o.ordinal, 'ordinal');
    if (o._rowid !== undefined && typeof o._rowid !== 'bigint') throw new ShardCallError('_rowid must be a row id');
    return o as unknown as PassageKey;
  });
};
const vector = (v: unknown): Float32Array => {
  if (!(v instanceof Float32Array)) throw new ShardCallError('vector must be a Float32Array');
  return v;
};
// The filter, query and column shapes are the api replica's own values (a peer holding the fleet secret), typed here.
const filterOf = (v: unknown): PassageFilter => obj(v) as PassageFilter;
const extraOf = (v: unknown): MatchColumn[] => strs(v ?? [], 'extra') as MatchColumn[];

/** A candidate as it crosses: its title's term ids are the searcher's own thread's numbering, so they stay home. */
function portable<R extends { _titleIds?: unknown }>(rows: R[]): R[] {
  for (const r of rows) delete r._titleIds;
  return rows;
}

/** Answers one wire call against a shard the searcher holds. */
export async function answerShardCall(shard: PassageIndex, call: string, argsIn: unknown): Promise<unknown> {
  const a = obj(argsIn);
  switch (call) {
    case 'status': {
      const vu = shard.vectorsUnused;
      const status: ShardStatus = {
        version: await shard.version(),
        embedderModel: shard.embedder?.modelId ?? null,
        vectorsUnused: vu ? { ...vu } : null,
      };
      return status;
    }
    case 'stats':
      return shard.stats();
    case 'lookup': {
      const domains = strs(a.domains, 'domains');
      const titleTerms = strs(a.titleTerms, 'titleTerms');
      const lang = a.lang === null || a.lang === undefined ? null : String(a.lang);
      const answer: ShardLookupAnswer = {
        hostIds: domains.map((d) => [d, shard.hostIdsUnder(d)]),
        hasLang: lang !== null && shard.hasLang(lang),
        titleCorpus: shard.titleCorpus(titleTerms),
      };
      return answer;
    }
    case 'corpusStats':
      return shard.corpusStats(strs(a.terms, 'terms'));
    case 'textCandidates':
      return portable(
        await shard.textCandidates(
          obj(a.text) as unknown as TextQuery,
          filterOf(a.filter),
          num(a.k, 'k'),
          extraOf(a.extra),
          a.stats === undefined ? undefined : (obj(a.stats) as unknown as CorpusStats),
        ),
      );
    case 'vectorCandidates':
      return portable(
        await shard.vectorCandidates(
          vector(a.vector),
          filterOf(a.filter),
          num(a.k, 'k'),
          extraOf(a.extra),
          a.minSimilarity === undefined ? undefined : num(a.minSimilarity, 'minSimilarity'),
        ),
      );
    case 'vectorDistances':
      return shard.vectorDistances(vector(a.vector), keys(a.keys));
    case 'scanCandidates':
      return portable(await shard.scanCandidates(filterOf(a.filter), num(a.k, 'k'), extraOf(a.extra)));
    case 'passageRows':
      return shard.passageRows(keys(a.keys));
    case 'resultRows':
      return shard.resultRows(keys(a.keys));
    case 'getPage':
      return shard.getPage(num(a.pageRef, 'pageRef'));
    case 'pagePassages':
      return shard.pagePassages(num(a.pageRef, 'pageRef'), num(a.offset, 'offset'), num(a.limit, 'limit'));
    case 'hostPrints':
      if (typeof a.host !== 'string') throw new ShardCallError('host must be a string');
      return shard.hostPrints(a.host);
    case 'scoredImages':
      if (typeof a.text !== 'string') throw new ShardCallError('text must be a string');
      return shard.scoredImages(a.text, num(a.limit, 'limit'));
    default:
      throw new ShardCallError(`no shard call ${JSON.stringify(call.slice(0, 40))}`);
  }
}
