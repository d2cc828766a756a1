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
import { passageKey, type PassageHit, type PassageKey } from '../engines/lance/columns.js';

/** The route prefix of a searcher's shards (the shard index and the call follow). */
export const SHARD_ROUTE = '/internal/v1/shard';

/** A record: an object of fields (not a list, bytes, a map, or a value with its own JSON form such as a Date). */
const isPlain = (v: unknown): v is Record<string, unknown> =>
  v !== null &&
  typeof v === 'object' &&
  !Array.isArray(v) &&
  !ArrayBuffer.isView(v) &&
  !(v instanceof Map) &&
  typeof (v as { toJSON?: unknown }).toJSON !== 'function';

const bytes64 = (v: ArrayBufferView): string => Buffer.from(v.buffer, v.byteOffset, v.byteLength).toString('base64');
/** Copied into an aligned buffer: a Buffer's byteOffset need not be a multiple of the element size. */
const aligned = (b64: string): ArrayBuffer => new Uint8Array(Buffer.from(b64, 'base64')).buffer;

/**
 * One column of a list of rows. `i`: safe integers, as JSON numbers; `f`: other numbers, their float64 bytes in base64
 * (exact, non-finite and -0 included, and shorter than a double's decimal form); `s`: strings and nulls, a dictionary
 * (a page's title, host and hashes repeat in each of its passages) and an index per row (-1: null); `b`: row ids;
 * `x`: anything else, value by value. `a`: rows that lack the field.
 */
interface PackedColumn {
  readonly t: 'i' | 'f' | 's' | 'b' | 'x';
  readonly v: unknown;
  readonly d?: string[];
  readonly a?: number[];
}

function packColumn(values: readonly unknown[]): PackedColumn {
  const absent: number[] = [];
  let ints = true;
  let nums = true;
  let strs = true;
  let bigs = true;
  values.forEach((v, i) => {
    if (v === undefined) return void absent.push(i);
    if (typeof v !== 'number') ints = nums = false;
    else if (!Number.isSafeInteger(v) || Object.is(v, -0)) ints = false;
    if (typeof v !== 'string' && v !== null) strs = false;
    if (typeof v !== 'bigint') bigs = false;
  });
  const a = absent.length > 0 ? { a: absent } : {};
  if (ints) return { t: 'i', v: values.map((v) => v ?? 0), ...a };
  if (nums) return { t: 'f', v: bytes64(Float64Array.from(values, (v) => (v as number | undefined) ?? 0)), ...a };
  if (strs) {
    const at = new Map<string, number>();
    const v = values.map((s) => {
      if (typeof s !== 'string') return -1;
      let i = at.get(s);
      if (i === undefined) at.set(s, (i = at.size));
      return i;
    });
    return { t: 's', d: [...at.keys()], v, ...a };
  }
  if (bigs) {
    const safe = (b: bigint): boolean => b >= 0n && b <= BigInt(Number.MAX_SAFE_INTEGER);
    return { t: 'b', v: values.map((b) => (typeof b !== 'bigint' ? 0 : safe(b) ? Number(b) : String(b))), ...a };
  }
  return { t: 'x', v: values.map((x) => (x === undefined ? null : pack(x))), ...a };
}

function unpackColumn(c: PackedColumn, n: number): unknown[] {
  let out: unknown[];
  if (c.t === 'f') out = [...new Float64Array(aligned(c.v as string))];
  else if (c.t === 's') out = (c.v as number[]).map((i) => (i < 0 ? null : c.d![i]));
  else if (c.t === 'b') out = (c.v as (number | string)[]).map((x) => BigInt(x));
  else if (c.t === 'x') out = (c.v as unknown[]).map(unpack);
  else out = [...(c.v as number[])];
  if (out.length !== n) throw new TypeError('a column of the wrong length');
  for (const i of c.a ?? []) out[i] = undefined;
  return out;
}

/** Rows (plain objects) as columns: each field named once, not once per row. */
function packRows(rows: readonly Record<string, unknown>[]): { n: number; k: string[]; c: PackedColumn[] } {
  const keys: string[] = [];
  const seen = new Set<string>();
  // A field no row has a value for (an `undefined` left by a spread) is not sent: JSON would drop it too.
  for (const r of rows)
    for (const k of Object.keys(r))
      if (!seen.has(k) && r[k] !== undefined) {
        seen.add(k);
        keys.push(k);
      }
  return { n: rows.length, k: keys, c: keys.map((k) => packColumn(rows.map((r) => r[k]))) };
}

function unpackRows(p: { n: number; k: string[]; c: PackedColumn[] }): Record<string, unknown>[] {
  const cols = p.c.map((c) => unpackColumn(c, p.n));
  return Array.from({ length: p.n }, (_, i) => {
    const row: Record<string, unknown> = {};
    p.k.forEach((k, j) => {
      const v = cols[j]![i];
      if (v !== undefined) row[k] = v;
    });
    return row;
  });
}

const rowList = (v: readonly unknown[]): v is Record<string, unknown>[] => v.length >= 2 && v.every(isPlain);

/** A value made JSON: tagged where JSON has no form, lists of rows as columns. */
function pack(v: unknown): unknown {
  if (typeof v === 'bigint') return { $big: v.toString() };
  if (typeof v === 'number') return Number.isFinite(v) ? v : { $num: String(v) };
  if (v === null || typeof v !== 'object') return v;
  if (v instanceof Float32Array) return { $f32: bytes64(v) };
  // A candidate's `_present` of a query of more than 31 probe terms: plain JSON would make it an object whose
  // length is undefined, and the api would then look for the row's search_text, which a candidate does not carry.
  if (v instanceof Uint8Array) return { $u8: bytes64(v) };
  if (v instanceof Map) {
    const entries = [...(v as Map<unknown, unknown>).entries()];
    const values = entries.map((e) => e[1]);
    // Rows by passage key (resultRows, passageRows): the keys as a list, the rows as columns.
    if (rowList(values)) return { $maprows: { k: entries.map((e) => pack(e[0])), r: packRows(values) } };
    return { $map: entries.map(([k, x]) => [pack(k), pack(x)]) };
  }
  if (Array.isArray(v)) return rowList(v) ? { $rows: packRows(v) } : v.map(pack);
  if (!isPlain(v)) return pack((v as { toJSON(): unknown }).toJSON());
  const o: Record<string, unknown> = {};
  for (const [k, x] of Object.entries(v)) if (x !== undefined) o[k] = pack(x);
  return o;
}

/** Reads back what `pack` made. */
function unpack(v: unknown): unknown {
  if (v === null || typeof v !== 'object') return v;
  if (Array.isArray(v)) return v.map(unpack);
  const o = v as Record<string, unknown>;
  const keys = Object.keys(o);
  if (keys.length === 1) {
    if (typeof o.$big === 'string') return BigInt(o.$big);
    if (typeof o.$num === 'string') return Number(o.$num);
    if (typeof o.$f32 === 'string') return new Float32Array(aligned(o.$f32));
    if (typeof o.$u8 === 'string') return new Uint8Array(Buffer.from(o.$u8, 'base64'));
    if (Array.isArray(o.$map)) return new Map((o.$map as [unknown, unknown][]).map(([k, x]) => [unpack(k), unpack(x)]));
    if (isPlain(o.$rows)) return unpackRows(o.$rows as Parameters<typeof unpackRows>[0]);
    if (isPlain(o.$maprows)) {
      const m = o.$maprows as { k: unknown[]; r: Parameters<typeof unpackRows>[0] };
      const rows = unpackRows(m.r);
      return new Map(m.k.map((k, i) => [unpack(k), rows[i]]));
    }
  }
  const out: Record<string, unknown> = {};
  for (const k of keys) out[k] = unpack(o[k]);
  return out;
}

/** Encodes a call's arguments or answer (see the module comment for what is tagged and what goes as columns). */
export function encodeWire(value: unknown): string {
  return JSON.stringify(pack(value));
}

/** Reads what `encodeWire` wrote. */
export function decodeWire(text: string): unknown {
  return unpack(JSON.parse(text));
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

/**
 * What a query needs of a shard before scoring (answered in one call, the first of a query's two): its filters' host
 * ids and language, its title terms' statistics, and the BM25 statistics of its terms.
 */
export interface ShardLookup {
  readonly domains: readonly string[];
  readonly lang: string | null;
  readonly titleTerms: readonly string[];
  /** Terms whose BM25 statistics the query reads (none: no statistics asked). */
  readonly terms?: readonly string[];
}

/** The answer to a `ShardLookup`. */
export interface ShardLookupAnswer {
  readonly hostIds: [string, number[]][];
  readonly hasLang: boolean;
  readonly titleCorpus: TitleCorpus;
  /** The statistics of `terms` (absent when none were asked). */
  readonly stats?: CorpusStats;
}

/**
 * A query's candidates of a shard in one call (the second of a query's two, `ArmsPlan` of retrieval.ts with the whole
 * index's statistics): the text arm scored with `stats`, the filter-only scan, the vector arm.
 */
export interface ShardArms {
  readonly filter: PassageFilter;
  readonly k: number;
  readonly text: TextQuery | null;
  readonly textExtra: readonly MatchColumn[];
  readonly stats?: CorpusStats;
  /**
   * The text candidates asked of this shard when fewer than `k` (`shardShareOfTop`: the api asks again for `k` when
   * the shard may hold more of the index's k). @default k
   */
  readonly textK?: number;
  readonly scan: boolean;
  readonly vector: Float32Array | null;
  readonly vectorExtra: readonly MatchColumn[];
  readonly minSimilarity: number;
  /**
   * Answer the text candidates' vector distances, and the vector arm only when this shard's text candidates reach
   * `k` (then the index's cannot all be in the merged top k, so retrieval will run the nearest-neighbour search).
   */
  readonly textDistances: boolean;
  /** The title terms of the query (`ArmsPlan.titleTerms`). */
  readonly titleTerms: readonly string[];
  /**
   * The whole index's title statistics of `titleTerms`: each text candidate then carries its title score with them
   * (`_titleScore`), computed from the term ids this shard holds for its title.
   */
  readonly titleCorpus?: TitleCorpus;
}

/** The answer to `ShardArms`: each arm asked (absent: not run). */
export interface ShardArmsAnswer {
  readonly text?: (PassageHit & { _score: number })[];
  /** The text candidates' vector distances, in their order (null: the passage has no vector). */
  readonly distances?: (number | null)[];
  readonly scan?: PassageHit[];
  readonly vector?: (PassageHit & { _distance: number })[];
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
      const terms = a.terms === undefined ? [] : strs(a.terms, 'terms');
      // The statistics first: reading them brings the shard's postings to the version it serves, and the title
      // statistics are the postings' (read before, a lookup just after a write or a start would see older ones).
      const stats = terms.length > 0 || titleTerms.length > 0 ? await shard.corpusStats(terms) : null;
      const answer: ShardLookupAnswer = {
        hostIds: domains.map((d) => [d, shard.hostIdsUnder(d)]),
        hasLang: lang !== null && shard.hasLang(lang),
        titleCorpus: shard.titleCorpus(titleTerms),
        ...(stats && terms.length > 0 ? { stats } : {}),
      };
      return answer;
    }
    case 'arms':
      return answerArms(shard, a);
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

/** Answers a query's candidates of one shard (`ShardArms`): the arms concurrently, as retrieval runs them. */
async function answerArms(shard: PassageIndex, a: Record<string, unknown>): Promise<ShardArmsAnswer> {
  const filter = filterOf(a.filter);
  const k = num(a.k, 'k');
  const textExtra = extraOf(a.textExtra);
  const vectorExtra = extraOf(a.vectorExtra);
  const minSimilarity = num(a.minSimilarity, 'minSimilarity');
  const qv = a.vector === null || a.vector === undefined ? null : vector(a.vector);
  const stats = a.stats === undefined ? undefined : (obj(a.stats) as unknown as CorpusStats);
  const textAsked = a.text !== null && a.text !== undefined;
  const textK = a.textK === undefined ? k : num(a.textK, 'textK');
  const textArm = async (): Promise<Pick<ShardArmsAnswer, 'text' | 'distances' | 'vector'>> => {
    if (!textAsked) return {};
    const found = await shard.textCandidates(obj(a.text) as unknown as TextQuery, filter, textK, textExtra, stats);
    if (a.titleCorpus !== undefined) {
      const terms = strs(a.titleTerms, 'titleTerms');
      const corpus = obj(a.titleCorpus) as unknown as TitleCorpus;
      for (const r of found) (r as { _titleScore?: number })._titleScore = shard.titleScore(terms, r, corpus);
    }
    const text = portable(found);
    if (!qv || a.textDistances !== true) return { text };
    const d = text.length > 0 ? await shard.vectorDistances(qv, text) : new Map<string, number>();
    const distances = text.map((r) => d.get(passageKey(r)) ?? null);
    if (text.length < k) return { text, distances };
    return { text, distances, vector: portable(await shard.vectorCandidates(qv, filter, k, vectorExtra, minSimilarity)) };
  };
  const vectorArm = async (): Promise<Pick<ShardArmsAnswer, 'vector'>> =>
    qv && !(textAsked && a.textDistances === true)
      ? { vector: portable(await shard.vectorCandidates(qv, filter, k, vectorExtra, minSimilarity)) }
      : {};
  const scanArm = async (): Promise<Pick<ShardArmsAnswer, 'scan'>> =>
    a.scan === true ? { scan: portable(await shard.scanCandidates(filter, k, vectorExtra)) } : {};
  const [t, v, s] = await Promise.all([textArm(), vectorArm(), scanArm()]);
  return { ...t, ...v, ...s };
}
