/**
 * The page attributes a query's filters test, per postings document in typed arrays (host id, date, small codes).
 * A filter is one predicate tested inside the postings' search, so a filtered query is still the exact BM25 top k
 * over the passages that pass.
 */
import type { FilterFields, PassageFilter } from '../../retrieval/passage-filter.js';
import { sourceTypeMatches } from '../../retrieval/passage-filter.js';
import { grow } from './typed-arrays.js';

/** A page's attributes as codes (computed once per page, written per document). */
export interface PageCodes {
  readonly host: number;
  readonly date: number;
  readonly lang: number;
  readonly country: number;
  readonly province: number;
  readonly sourceType: number;
}

/** Codes of the values of one attribute (0: null); a value not seen yet gets the next code. */
class Codes {
  readonly #byValue = new Map<string, number>();
  readonly values: (string | null)[] = [null];
  /** `values`: saved codes (`DocAttributesState`), each value keeping its code. */
  constructor(
    readonly max: number,
    values?: readonly (string | null)[],
  ) {
    for (let c = 1; c < (values?.length ?? 0); c++) {
      this.#byValue.set(values![c]!, c);
      this.values.push(values![c]!);
    }
  }

  code(v: string | null): number {
    if (v === null) return 0;
    let c = this.#byValue.get(v);
    if (c === undefined) {
      c = this.values.length;
      if (c > this.max) throw new RangeError(`document attributes: more than ${this.max} distinct values`);
      this.#byValue.set(v, c);
      this.values.push(v);
    }
    return c;
  }

  /** The code of a value, or undefined when no document was ever given it. */
  find(v: string): number | undefined {
    return this.#byValue.get(v);
  }
}

/** A filter as a test of a document id; null: every document passes; false: none can. */
export type DocTest = ((doc: number) => boolean) | null | false;

/** The attributes of documents 0..n-1 and the values their codes stand for (an engine image holds them). */
export interface DocAttributesState {
  readonly host: Int32Array;
  readonly date: Float64Array;
  readonly lang: Uint16Array;
  readonly country: Uint16Array;
  readonly province: Uint8Array;
  readonly sourceType: Uint8Array;
  readonly values: {
    readonly lang: readonly (string | null)[];
    readonly country: readonly (string | null)[];
    readonly province: readonly (string | null)[];
    readonly sourceType: readonly (string | null)[];
  };
}

export class DocAttributes {
  #host: Int32Array;
  #date: Float64Array;
  #lang: Uint16Array;
  #country: Uint16Array;
  #province: Uint8Array;
  #sourceType: Uint8Array;
  readonly #langs: Codes;
  readonly #countries: Codes;
  readonly #provinces: Codes;
  readonly #sourceTypes: Codes;

  /**
   * `state`: saved attributes to start from, used as they are (views of an image's shared memory: only documents
   * added after them are written, and those grow the arrays into copies first).
   */
  constructor(state?: DocAttributesState) {
    this.#host = state?.host ?? new Int32Array(1024);
    this.#date = state?.date ?? new Float64Array(1024);
    this.#lang = state?.lang ?? new Uint16Array(1024);
    this.#country = state?.country ?? new Uint16Array(1024);
    this.#province = state?.province ?? new Uint8Array(1024);
    this.#sourceType = state?.sourceType ?? new Uint8Array(1024);
    this.#langs = new Codes(0xffff, state?.values.lang);
    this.#countries = new Codes(0xffff, state?.values.country);
    this.#provinces = new Codes(0xff, state?.values.province);
    this.#sourceTypes = new Codes(0xff, state?.values.sourceType);
  }

  /** Documents 0..n-1's attributes (views, valid until the next `set`) and the codes' values. */
  exportState(n: number): DocAttributesState {
    return {
      host: this.#host.subarray(0, n),
      date: this.#date.subarray(0, n),
      lang: this.#lang.subarray(0, n),
      country: this.#country.subarray(0, n),
      province: this.#province.subarray(0, n),
      sourceType: this.#sourceType.subarray(0, n),
      values: {
        lang: [...this.#langs.values],
        country: [...this.#countries.values],
        province: [...this.#provinces.values],
        sourceType: [...this.#sourceTypes.values],
      },
    };
  }

  codes(p: FilterFields): PageCodes {
    return {
      host: p.host_id,
      date: p.date_ms,
      lang: this.#langs.code(p.lang),
      country: this.#countries.code(p.country),
      province: this.#provinces.code(p.province),
      sourceType: this.#sourceTypes.code(p.source_type),
    };
  }

  set(doc: number, c: PageCodes): void {
    if (doc >= this.#host.length) {
      this.#host = grow(this.#host, doc + 1);
      this.#date = grow(this.#date, doc + 1);
      this.#lang = grow(this.#lang, doc + 1);
      this.#country = grow(this.#country, doc + 1);
      this.#province = grow(this.#province, doc + 1);
      this.#sourceType = grow(this.#sourceType, doc + 1);
    }
    this.#host[doc] = c.host;
    this.#date[doc] = c.date;
    this.#lang[doc] = c.lang;
    this.#country[doc] = c.country;
    this.#province[doc] = c.province;
    this.#sourceType[doc] = c.sourceType;
  }

  /**
   * The filter as a test of a document (its arrays read as they are now: used within one synchronous search). Each
   * restriction is one comparison of a typed array's entry; host sets by a Set of the few ids `site:` names.
   */
  test(f: PassageFilter): DocTest {
    const tests: ((d: number) => boolean)[] = [];
    const host = this.#host;
    if (f.hostIds !== undefined) {
      const ids = new Set(f.hostIds);
      tests.push((d) => ids.has(host[d]!));
    }
    if (f.notHostIds !== undefined && f.notHostIds.length > 0) {
      const ids = new Set(f.notHostIds);
      tests.push((d) => !ids.has(host[d]!));
    }
    const eq = (codes: Codes, v: string | undefined, arr: Uint8Array | Uint16Array): boolean => {
      if (v === undefined) return true;
      const c = codes.find(v);
      if (c === undefined) return false;
      tests.push((d) => arr[d] === c);
      return true;
    };
    if (!eq(this.#langs, f.lang, this.#lang)) return false;
    if (!eq(this.#countries, f.country, this.#country)) return false;
    if (!eq(this.#provinces, f.province, this.#province)) return false;
    if (f.sourceType !== undefined) {
      const want = f.sourceType;
      const ok = Uint8Array.from(this.#sourceTypes.values, (v) => (v !== null && sourceTypeMatches(want, v) ? 1 : 0));
      if (!ok.includes(1)) return false;
      const st = this.#sourceType;
      tests.push((d) => ok[st[d]!] === 1);
    }
    if (f.minDateMs !== undefined) {
      const min = f.minDateMs;
      const date = this.#date;
      tests.push((d) => date[d]! >= min);
    }
    if (tests.length === 0) return null;
    if (tests.length === 1) return tests[0]!;
    return (d) => {
      for (const t of tests) if (!t(d)) return false;
      return true;
    };
  }
}
