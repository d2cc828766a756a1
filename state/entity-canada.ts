/**
 * Canadian address facts the entity store needs: provinces and territories (ISO 3166-2:CA codes, English and
 * French names), postal codes (Canada Post's A1A 1A1 pattern and its first-letter ↔ province map), and the rule
 * that decides whether a declared address is Canadian. Pure functions, no I/O.
 */

import { PROVINCES, type Province } from '../canada.js';

/** One province or territory: its ISO 3166-2:CA code, names, and the postal code first letters it uses. */
export interface ProvinceRecord {
  /** ISO 3166-2:CA code, e.g. "CA-ON". */
  readonly code: string;
  /** Two-letter Canada Post / ISO subdivision part, e.g. "ON". */
  readonly short: string;
  readonly en: string;
  readonly fr: string;
  /** Postal code first letters (forward sortation areas) used in this province. */
  readonly postalLetters: string;
}

/** Names and postal letters per province (a Record over canada.ts's codes: none can be missing or extra). */
const FACTS: Readonly<Record<Province, Pick<ProvinceRecord, 'en' | 'fr' | 'postalLetters'>>> = {
  ab: { en: 'Alberta', fr: 'Alberta', postalLetters: 'T' },
  bc: { en: 'British Columbia', fr: 'Colombie-Britannique', postalLetters: 'V' },
  mb: { en: 'Manitoba', fr: 'Manitoba', postalLetters: 'R' },
  nb: { en: 'New Brunswick', fr: 'Nouveau-Brunswick', postalLetters: 'E' },
  nl: { en: 'Newfoundland and Labrador', fr: 'Terre-Neuve-et-Labrador', postalLetters: 'A' },
  ns: { en: 'Nova Scotia', fr: 'Nouvelle-Écosse', postalLetters: 'B' },
  nt: { en: 'Northwest Territories', fr: 'Territoires du Nord-Ouest', postalLetters: 'X' },
  nu: { en: 'Nunavut', fr: 'Nunavut', postalLetters: 'X' },
  on: { en: 'Ontario', fr: 'Ontario', postalLetters: 'KLMNP' },
  pe: { en: 'Prince Edward Island', fr: 'Île-du-Prince-Édouard', postalLetters: 'C' },
  qc: { en: 'Quebec', fr: 'Québec', postalLetters: 'GHJ' },
  sk: { en: 'Saskatchewan', fr: 'Saskatchewan', postalLetters: 'S' },
  yt: { en: 'Yukon', fr: 'Yukon', postalLetters: 'Y' },
};

export const PROVINCE_RECORDS: readonly ProvinceRecord[] = PROVINCES.map((p) => ({
  code: `CA-${p.toUpperCase()}`,
  short: p.toUpperCase(),
  ...FACTS[p],
}));

/**
 * Folds text for comparison: Unicode NFKD with combining marks removed, lower case, every run of characters that
 * are not letters or digits turned into one space, trimmed. "Île-du-Prince-Édouard" → "ile du prince edouard".
 */
export function foldText(s: string): string {
  return s
    .normalize('NFKD')
    .replace(/\p{M}+/gu, '')
    .toLowerCase()
    .replace(/[^\p{L}\p{N}]+/gu, ' ')
    .trim();
}

const BY_NAME = new Map<string, ProvinceRecord>();
for (const p of PROVINCE_RECORDS) {
  for (const n of [p.code, p.short, p.en, p.fr]) BY_NAME.set(foldText(n), p);
}
// Common alternative spellings and older abbreviations seen in addresses.
for (const [alias, short] of [
  ['pq', 'QC'],
  ['que', 'QC'],
  ['nfld', 'NL'],
  ['newfoundland', 'NL'],
  ['labrador', 'NL'],
  ['nf', 'NL'],
  ['pei', 'PE'],
  ['p e i', 'PE'],
  ['yukon territory', 'YT'],
  ['yk', 'YT'],
  ['nwt', 'NT'],
  ['alta', 'AB'],
  ['sask', 'SK'],
  ['man', 'MB'],
  ['ont', 'ON'],
  ['b c', 'BC'],
  ['la colombie britannique', 'BC'],
] as const) {
  const p = PROVINCE_RECORDS.find((x) => x.short === short);
  if (p) BY_NAME.set(alias, p);
}

/**
 * The province for a code ("ON", "CA-ON", "on") or an English or French name ("Ontario", "Québec",
 * "Colombie-Britannique"), accents and case ignored; null when none matches.
 */
export function provinceOf(input: string): ProvinceRecord | null {
  return BY_NAME.get(foldText(input)) ?? null;
}

/** Canada Post's pattern: first letter never D F I O Q U W Z, other letters never D F I O Q U. */
const POSTAL = /^([ABCEGHJ-NPRSTVXY]\d[ABCEGHJ-NPR-TV-Z])\s*-?\s*(\d[ABCEGHJ-NPR-TV-Z]\d)$/;

/** A Canadian postal code in canonical form ("K1A 0B1"), or null when the input is not one. */
export function canonicalPostalCode(input: string): string | null {
  const m = POSTAL.exec(input.trim().toUpperCase());
  return m ? `${m[1]} ${m[2]}` : null;
}

/** Finds a Canadian postal code inside free text (a one-line address), canonical form, or null. */
export function findPostalCode(text: string): string | null {
  const m = /\b([ABCEGHJ-NPRSTVXY]\d[ABCEGHJ-NPR-TV-Z])\s?(\d[ABCEGHJ-NPR-TV-Z]\d)\b/.exec(text.toUpperCase());
  return m ? `${m[1]} ${m[2]}` : null;
}

/** The province a postal code belongs to (X is shared by NT and NU: null there). */
export function provinceOfPostalCode(postal: string): ProvinceRecord | null {
  const first = postal.charAt(0);
  const hits = PROVINCE_RECORDS.filter((p) => p.postalLetters.includes(first));
  return hits.length === 1 ? hits[0]! : null;
}

const CANADA_NAMES = new Set(['ca', 'can', 'canada', 'kanada', 'canadá', '124'].map(foldText));

/** What a declared address says about its country. */
export type CountryDecision =
  | { readonly canadian: true; readonly by: 'addressCountry' | 'postal_code' | 'province' | 'dataset' }
  | { readonly canadian: false; readonly reason: 'foreign_country' | 'no_canadian_evidence' };

/**
 * Decides whether an establishment is Canadian (rules in docs/api-entities.md): a declared country decides alone,
 * else a Canadian postal code, else a Canadian province or territory; otherwise not admitted.
 * Statistics Canada dataset rows are Canadian by construction (`dataset`).
 */
export function decideCountry(a: { country: string | null; postalCode: string | null; region: string | null }): CountryDecision {
  if (a.country !== null && a.country.trim() !== '') {
    return CANADA_NAMES.has(foldText(a.country))
      ? { canadian: true, by: 'addressCountry' }
      : { canadian: false, reason: 'foreign_country' };
  }
  if (a.postalCode !== null && canonicalPostalCode(a.postalCode) !== null) return { canadian: true, by: 'postal_code' };
  if (a.region !== null && provinceOf(a.region) !== null) return { canadian: true, by: 'province' };
  return { canadian: false, reason: 'no_canadian_evidence' };
}
