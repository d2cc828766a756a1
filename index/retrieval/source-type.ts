/**
 * Country / province / source_type signals derived from a page's host name and its declared JSON-LD data.
 * The kinds are a closed set (SOURCE_TYPES) so filters on them can run inside the index as constant literals.
 * The rules are documented in docs/api-search.md.
 */
import { isEntityKind, isSubtypeOf } from '../../schema-org-types.js';
import type { PageSignals } from '../../page-model.js';

/** The closed set of source kinds. */
export const SOURCE_TYPES = [
  'government:federal',
  'government:provincial',
  'government:municipal',
  'government:other',
  'education',
  'health',
  'news',
  'organization',
  'other',
] as const;
export type SourceType = (typeof SOURCE_TYPES)[number];

/** Filter values accepted by the tools: every kind, plus `government` (any level). */
export const SOURCE_TYPE_FILTERS = ['government', ...SOURCE_TYPES] as const;
export type SourceTypeFilter = (typeof SOURCE_TYPE_FILTERS)[number];

// Provinces are defined once in canada.ts; re-exported because the index's signals are stated in them.
export { PROVINCES, type Province } from '../../canada.js';
import { PROVINCES, type Province } from '../../canada.js';

export interface SourceSignals {
  /** ISO 3166-1 alpha-2, lower-case, or null when unknown. */
  readonly country: string | null;
  readonly province: Province | null;
  readonly sourceType: SourceType;
}

// Provincial government host suffixes (the province's own government domains).
const PROVINCIAL_SUFFIXES: readonly [string, Province][] = [
  ['gov.ab.ca', 'ab'],
  ['alberta.ca', 'ab'],
  ['gov.bc.ca', 'bc'],
  ['gov.mb.ca', 'mb'],
  ['manitoba.ca', 'mb'],
  ['gnb.ca', 'nb'],
  ['gov.nl.ca', 'nl'],
  ['gov.ns.ca', 'ns'],
  ['novascotia.ca', 'ns'],
  ['gov.nt.ca', 'nt'],
  ['gov.nu.ca', 'nu'],
  ['gov.on.ca', 'on'],
  ['ontario.ca', 'on'],
  ['gov.pe.ca', 'pe'],
  ['princeedwardisland.ca', 'pe'],
  ['gouv.qc.ca', 'qc'],
  ['quebec.ca', 'qc'],
  ['gov.sk.ca', 'sk'],
  ['saskatchewan.ca', 'sk'],
  ['gov.yk.ca', 'yt'],
  ['yukon.ca', 'yt'],
];

const FEDERAL_SUFFIXES = ['gc.ca', 'canada.ca', 'parl.ca', 'canadapost-postescanada.ca', 'bankofcanada.ca', 'scc-csc.ca'];

// Large municipalities whose portals do not follow a city./ville. pattern.
const MUNICIPAL_HOSTS: readonly [string, Province][] = [
  ['toronto.ca', 'on'],
  ['ottawa.ca', 'on'],
  ['mississauga.ca', 'on'],
  ['hamilton.ca', 'on'],
  ['brampton.ca', 'on'],
  ['london.ca', 'on'],
  ['markham.ca', 'on'],
  ['vaughan.ca', 'on'],
  ['kitchener.ca', 'on'],
  ['windsor.ca', 'on'],
  ['montreal.ca', 'qc'],
  ['ville.montreal.qc.ca', 'qc'],
  ['ville.quebec.qc.ca', 'qc'],
  ['gatineau.ca', 'qc'],
  ['laval.ca', 'qc'],
  ['longueuil.quebec', 'qc'],
  ['sherbrooke.ca', 'qc'],
  ['vancouver.ca', 'bc'],
  ['surrey.ca', 'bc'],
  ['burnaby.ca', 'bc'],
  ['victoria.ca', 'bc'],
  ['calgary.ca', 'ab'],
  ['edmonton.ca', 'ab'],
  ['winnipeg.ca', 'mb'],
  ['regina.ca', 'sk'],
  ['saskatoon.ca', 'sk'],
  ['halifax.ca', 'ns'],
  ['fredericton.ca', 'nb'],
  ['moncton.ca', 'nb'],
  ['saintjohn.ca', 'nb'],
  ['stjohns.ca', 'nl'],
  ['charlottetown.ca', 'pe'],
  ['whitehorse.ca', 'yt'],
  ['yellowknife.ca', 'nt'],
  ['iqaluit.ca', 'nu'],
];

const NEWS_HOSTS = [
  'cbc.ca',
  'radio-canada.ca',
  'ctvnews.ca',
  'globalnews.ca',
  'theglobeandmail.com',
  'nationalpost.com',
  'thestar.com',
  'lapresse.ca',
  'ledevoir.com',
  'journaldemontreal.com',
  'journaldequebec.com',
  'cp24.com',
  'citynews.ca',
  'reuters.com',
  'apnews.com',
  'bbc.co.uk',
  'bbc.com',
  'nytimes.com',
  'theguardian.com',
];

const EDU_HOSTS = [
  'utoronto.ca',
  'ubc.ca',
  'mcgill.ca',
  'uottawa.ca',
  'umontreal.ca',
  'ulaval.ca',
  'uqam.ca',
  'concordia.ca',
  'ualberta.ca',
  'ucalgary.ca',
  'queensu.ca',
  'uwaterloo.ca',
  'yorku.ca',
  'mcmaster.ca',
  'dal.ca',
  'usask.ca',
  'umanitoba.ca',
  'uvic.ca',
  'sfu.ca',
  'carleton.ca',
  'torontomu.ca',
  'westernu.ca',
  'uwo.ca',
  'usherbrooke.ca',
];

const GOV_TYPES = new Set([
  'governmentorganization',
  'governmentoffice',
  'governmentbuilding',
  'governmentservice',
  'cityhall',
  'courthouse',
  'legislativebuilding',
]);
const EDU_TYPES = new Set([
  'educationalorganization',
  'collegeoruniversity',
  'school',
  'highschool',
  'middleschool',
  'elementaryschool',
  'preschool',
  'educationalinstitution',
]);
const HEALTH_TYPES = new Set([
  'hospital',
  'medicalorganization',
  'medicalclinic',
  'pharmacy',
  'physician',
  'dentist',
  'medicalbusiness',
  'healthandbeautybusiness',
  'diagnosticlab',
]);
const NEWS_TYPES = new Set(['newsmediaorganization', 'newsarticle', 'reportagenewsarticle', 'analysisnewsarticle']);
const ORG_TYPES = new Set([
  'organization',
  'ngo',
  'localbusiness',
  'corporation',
  'library',
  'museum',
  'sportsorganization',
  'performinggroup',
  'fundingscheme',
  'project',
]);

const PROVINCE_NAMES: Record<string, Province> = {
  alberta: 'ab',
  'british columbia': 'bc',
  'colombie-britannique': 'bc',
  manitoba: 'mb',
  'new brunswick': 'nb',
  'nouveau-brunswick': 'nb',
  'newfoundland and labrador': 'nl',
  'terre-neuve-et-labrador': 'nl',
  'nova scotia': 'ns',
  'nouvelle-ecosse': 'ns',
  'northwest territories': 'nt',
  'territoires du nord-ouest': 'nt',
  nunavut: 'nu',
  ontario: 'on',
  'prince edward island': 'pe',
  'ile-du-prince-edouard': 'pe',
  quebec: 'qc',
  saskatchewan: 'sk',
  yukon: 'yt',
  'ca-on': 'on',
  'ca-qc': 'qc',
  'ca-bc': 'bc',
  'ca-ab': 'ab',
  'ca-mb': 'mb',
  'ca-sk': 'sk',
  'ca-ns': 'ns',
  'ca-nb': 'nb',
  'ca-nl': 'nl',
  'ca-pe': 'pe',
  'ca-nt': 'nt',
  'ca-nu': 'nu',
  'ca-yt': 'yt',
  pq: 'qc',
  nf: 'nl',
  yk: 'yt',
};

// Two-letter TLDs widely used as generic names, which say nothing about a country.
const GENERIC_CC = new Set(['co', 'io', 'tv', 'me', 'ai', 'ly', 'fm', 'am', 'cc', 'ws', 'to', 'gg', 'sh', 'app']);

const under = (host: string, suffix: string) => host === suffix || host.endsWith(`.${suffix}`);
const foldAscii = (s: string) =>
  s
    .normalize('NFKD')
    .replace(/\p{M}+/gu, '')
    .toLowerCase()
    .trim();

/** Province from a declared addressRegion value ("ON", "Ontario", "Québec", "CA-QC"), or null. */
export function provinceFromRegion(raw: string): Province | null {
  const v = foldAscii(raw).replace(/\.$/, '');
  if ((PROVINCES as readonly string[]).includes(v)) return v as Province;
  return PROVINCE_NAMES[v] ?? null;
}

function countryFromDeclared(raw: string): string | null {
  const v = foldAscii(raw);
  if (v === 'ca' || v === 'can' || v === 'canada') return 'ca';
  if (v === 'us' || v === 'usa' || v === 'united states' || v === 'united states of america') return 'us';
  if (v === 'fr' || v === 'france') return 'fr';
  return /^[a-z]{2}$/.test(v) ? v : null;
}

/** Classifies a page from its host and declared data. Pure and deterministic. */
export function classifySource(host: string, signals: PageSignals): SourceSignals {
  const h = host.toLowerCase().replace(/\.$/, '');
  const types = new Set(signals.declaredTypes.map((t) => t.toLowerCase().replace(/^https?:\/\/schema\.org\//, '')));
  // Declared types also count through the schema.org hierarchy (Bakery is a LocalBusiness, Dentist a MedicalBusiness).
  const declared = signals.declaredTypes.map((t) => t.replace(/^https?:\/\/schema\.org\//, ''));
  const isA = (roots: readonly string[]) => declared.some((t) => roots.some((r) => isSubtypeOf(t, r)));
  const hasType = (set: Set<string>, roots: readonly string[] = []) => [...types].some((t) => set.has(t)) || isA(roots);

  let province: Province | null = null;
  let sourceType: SourceType | null = null;

  const prov = PROVINCIAL_SUFFIXES.find(([s]) => under(h, s));
  const muni = MUNICIPAL_HOSTS.find(([s]) => under(h, s));
  if (FEDERAL_SUFFIXES.some((s) => under(h, s))) sourceType = 'government:federal';
  else if (muni) {
    sourceType = 'government:municipal';
    province = muni[1];
  } else if (prov) {
    sourceType = 'government:provincial';
    province = prov[1];
  } else if (/^(www\.)?(city|ville|town|municipalite|municipality|township|canton|village|cityof|townof|villede)[.-]/.test(h)) {
    sourceType = 'government:municipal';
  } else if (/\.(gov|gouv)(\.[a-z]{2})?$/.test(h) || h.endsWith('.gov') || h.endsWith('.mil')) {
    sourceType = h.endsWith('.gov') ? 'government:federal' : 'government:other';
  }

  // Province from the host: <x>.<prov>.ca (e.g. ville.quebec.qc.ca, city.example.on.ca).
  if (!province) {
    const m = /\.(ab|bc|mb|nb|nl|ns|nt|nu|on|pe|qc|sk|yk|yt)\.ca$/.exec(h);
    if (m) province = (m[1] === 'yk' ? 'yt' : m[1]) as Province;
  }
  if (!province) {
    for (const r of signals.addressRegions) {
      const p = provinceFromRegion(r);
      if (p) {
        province = p;
        break;
      }
    }
  }

  if (!sourceType) {
    if (hasType(GOV_TYPES, ['GovernmentOrganization', 'GovernmentBuilding', 'GovernmentOffice'])) sourceType = 'government:other';
    else if (
      hasType(EDU_TYPES, ['EducationalOrganization']) ||
      under(h, 'edu') ||
      EDU_HOSTS.some((s) => under(h, s)) ||
      /(^|\.)(cegep|college|university|universite|school|ecole)[a-z-]*\./.test(h)
    )
      sourceType = 'education';
    else if (
      hasType(HEALTH_TYPES, ['MedicalOrganization', 'MedicalBusiness']) ||
      /(^|[.-])(health|sante|hospital|hopital|clinic|clinique)[a-z-]*\./.test(h)
    )
      sourceType = 'health';
    else if (hasType(NEWS_TYPES) || NEWS_HOSTS.some((s) => under(h, s))) sourceType = 'news';
    else if (hasType(ORG_TYPES) || declared.some(isEntityKind) || h.endsWith('.org')) sourceType = 'organization';
    else sourceType = 'other';
  }

  let country: string | null = null;
  for (const c of signals.addressCountries) {
    country = countryFromDeclared(c);
    if (country) break;
  }
  if (!country) {
    const tld = h.slice(h.lastIndexOf('.') + 1);
    if (/^[a-z]{2}$/.test(tld) && !GENERIC_CC.has(tld)) country = tld === 'uk' ? 'gb' : tld;
    else if (sourceType === 'government:federal' && h.endsWith('.gov')) country = 'us';
  }
  if (province && !country) country = 'ca';
  if (country !== 'ca' && province && !signals.addressRegions.length) province = null;
  return { country, province, sourceType };
}
