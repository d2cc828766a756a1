import t, { type Test } from 'tap';
import { join } from 'node:path';
import { writeFileSync } from 'node:fs';
import { gzipSync } from 'node:zlib';
import { openStateDb } from '../../state/db.js';
import { EntityStore, EntityQueryError, OGL_CANADA, PAGE_LICENCE_NOTE, entityIdFor } from '../../state/entities.js';
import { importDataset, readCsv } from '../../cli/entities.js';
import { decideCountry, canonicalPostalCode, provinceOf, findPostalCode } from '../../state/entity-canada.js';
import { factsFromJsonLd, matchKeys } from '../../state/entity-facts.js';
import { withSubtypes, isSubtypeOf } from '../../schema-org-types.js';

const SHARED = join(process.cwd(), '..', 'shared', 'data', 'ca-open-data');
const ODHF_HEADER =
  'index,facility_name,source_facility_type,odhf_facility_type,provider,unit,street_no,street_name,postal_code,city,province,source_format_str_address,CSDname,CSDuid,Pruid,latitude,longitude';
// Two real ODHF v1.1 rows (Statistics Canada, Open Government Licence – Canada) and one made-up row without a province.
const ODHF_ROWS = [
  `10,Alberta Children's Hospital,pediatric,Hospitals,Public Health Agency of Canada,,28,oki dr nw,T3B 6A8,calgary,ab,28 Oki Dr NW,Calgary,4806016.0,48,51.074582,-114.148426`,
  `1,Advanced Facial & Nasal Surgery Centre,other,Ambulatory health care services,Canadian Institute for Health Information,,,,T5M 4G5,edmonton,ab,,Edmonton,,48,,`,
  `99,"Clinique ""Test"", Nowhere",other,Hospitals,x,,,,,nowhere,,,,,,,`,
];

function store(t: Test) {
  const dir = t.testdir();
  const db = openStateDb(join(dir, 'state.sqlite'));
  t.teardown(() => db.close());
  return { db, store: new EntityStore(db), dir };
}

const page = (pageRef: number, url: string) => ({ pageRef, url, host: new URL(url).hostname, lang: 'en' });

const childrensJsonLd = {
  '@context': 'https://schema.org',
  '@type': 'Hospital',
  name: "Alberta Children's Hospital",
  url: 'https://childrens.example.ca/',
  telephone: '+1-403-955-7211',
  address: {
    '@type': 'PostalAddress',
    streetAddress: '28 Oki Drive NW',
    addressLocality: 'Calgary',
    addressRegion: 'AB',
    postalCode: 't3b6a8',
    addressCountry: 'CA',
  },
};

t.test('Canadian address rules', async (t) => {
  t.equal(canonicalPostalCode('k1a0b1'), 'K1A 0B1');
  t.equal(canonicalPostalCode('K1A-0B1'), 'K1A 0B1');
  t.equal(canonicalPostalCode('D1A 0B1'), null, 'D never starts a postal code');
  t.equal(canonicalPostalCode('90210'), null);
  t.equal(findPostalCode('1 Main St, Halifax NS B3H 1A1, Canada'), 'B3H 1A1');
  t.equal(provinceOf('Québec')?.code, 'CA-QC');
  t.equal(provinceOf('quebec')?.code, 'CA-QC');
  t.equal(provinceOf('Colombie-Britannique')?.code, 'CA-BC');
  t.equal(provinceOf('CA-ON')?.code, 'CA-ON');
  t.equal(provinceOf('on')?.code, 'CA-ON');
  t.equal(provinceOf('California'), null);
  t.same(decideCountry({ country: 'Canada', postalCode: null, region: null }), { canadian: true, by: 'addressCountry' });
  t.same(decideCountry({ country: 'US', postalCode: 'K1A 0B1', region: 'ON' }), { canadian: false, reason: 'foreign_country' });
  t.same(decideCountry({ country: null, postalCode: 'H2L 3L8', region: null }), { canadian: true, by: 'postal_code' });
  t.same(decideCountry({ country: null, postalCode: null, region: 'Nouvelle-Écosse' }), { canadian: true, by: 'province' });
  t.same(decideCountry({ country: null, postalCode: '90210', region: 'CA' }), { canadian: false, reason: 'no_canadian_evidence' });
});

t.test('schema.org table: subtypes and ancestors', async (t) => {
  t.ok(isSubtypeOf('Hospital', 'MedicalOrganization'));
  t.ok(isSubtypeOf('Hospital', 'CivicStructure'));
  t.ok(isSubtypeOf('Dentist', 'LocalBusiness'));
  t.notOk(isSubtypeOf('Library', 'MedicalOrganization'));
  t.ok(withSubtypes('EducationalOrganization').includes('HighSchool'));
  t.same(withSubtypes('Article'), [], 'out-of-scope types have no admitted subtypes');
});

t.test('JSON-LD mapping and matching keys', async (t) => {
  const r = factsFromJsonLd(childrensJsonLd, 'https://childrens.example.ca/about');
  t.ok(r.ok);
  if (!r.ok) return;
  t.equal(r.facts.kind, 'Hospital');
  t.equal(r.facts.postalCode, 'T3B 6A8');
  t.equal(r.facts.province, 'CA-AB');
  t.same(matchKeys(r.facts), ['url:childrens.example.ca', "np:alberta children s hospital|T3B 6A8"]);
  const us = factsFromJsonLd({ '@type': 'Restaurant', name: 'Diner', address: { addressCountry: 'US', postalCode: '10001' } }, 'https://x.example/');
  t.same(us, { ok: false, reason: 'foreign_country' });
  t.same(factsFromJsonLd({ '@type': 'Article', name: 'x' }, 'https://x.example/'), { ok: false, reason: 'not_an_entity_type' });
  t.same(factsFromJsonLd({ '@type': 'LocalBusiness', address: { postalCode: 'K1A 0B1' } }, 'https://x.example/'), { ok: false, reason: 'no_name' });
  const line = factsFromJsonLd({ '@type': ['Thing', 'http://schema.org/Dentist'], name: 'Smile', address: '12 Rue X, Montréal QC H2L 3L8' }, 'https://d.example/');
  t.ok(line.ok && line.facts.kind === 'Dentist' && line.facts.postalCode === 'H2L 3L8' && line.facts.province === 'CA-QC');
});

async function* chunks(list: string[]): AsyncGenerator<string> {
  yield* list;
}

t.test('CSV reader: quotes, doubled quotes, embedded newline, CRLF', async (t) => {
  const rows: string[][] = [];
  for await (const r of readCsv(chunks(['a,"b ""q"", c",d\r\n', '1,"line\nbreak",3\n', 'x,,']))) rows.push(r);
  t.same(rows, [['a', 'b "q", c', 'd'], ['1', 'line\nbreak', '3'], ['x', '', '']]);
});

t.test('issue 5: an entity merged from ODHF and a page declaring the same place; noindex withdraws the page part', async (t) => {
  const { store: s, dir } = store(t);
  const csv = join(dir, 'odhf.csv.gz');
  writeFileSync(csv, gzipSync(`${ODHF_HEADER}\n${ODHF_ROWS.join('\n')}\n`));
  const rep = await importDataset(s, 'odhf', csv, '2026-01-01T00:00:00.000Z');
  t.same(rep, { read: 3, admitted: 2, merged: 0, updated: 0, rejected: 1, reasons: { no_province: 1 } });

  const before = s.search({ q: 'alberta childrens', limit: 5 });
  t.equal(before.length, 0, 'the apostrophe splits "children s": whole-word prefix search needs the word');
  const found = s.search({ q: "alberta children's", limit: 5 });
  t.equal(found.length, 1);
  const id = found[0]!.id;
  t.match(id, /^ent_[0-9a-f]{20}$/);

  // The page declares the same hospital (name + postal code match).
  const results = s.observePageDetailed(page(7, 'https://childrens.example.ca/about'), [childrensJsonLd], '2026-02-01T00:00:00.000Z');
  t.same(results, [{ ok: true, id, outcome: 'merged' }]);
  const merged = s.get(id)!;
  t.equal(merged.sources.length, 2);
  t.equal(merged.name, "Alberta Children's Hospital");
  t.equal(merged.kind, 'Hospital');
  t.equal(merged.url, 'https://childrens.example.ca/');
  t.equal(merged.telephone, '+1-403-955-7211');
  t.equal(merged.address.street, '28 Oki Drive NW', 'the newest source states the street');
  t.same(merged.geo, { lat: 51.074582, lon: -114.148426 }, 'coordinates from the dataset');
  t.equal(merged.last_verified_at, '2026-02-01T00:00:00.000Z');
  const ds = merged.sources.find((x) => x.type === 'dataset')!;
  const pg = merged.sources.find((x) => x.type === 'page')!;
  t.same(ds.licence, { name: OGL_CANADA.name, url: OGL_CANADA.url, statement: OGL_CANADA.attribution });
  t.equal(ds.provenance.dataset, 'odhf');
  t.equal(ds.provenance.row_id, '10');
  t.match(ds.provenance.dataset_title, /Open Database of Healthcare Facilities v1\.1/);
  t.same(pg.licence, { name: null, url: null, statement: PAGE_LICENCE_NOTE });
  t.equal(pg.provenance.page_url, 'https://childrens.example.ca/about');
  t.equal(pg.provenance.page_ref, 7);
  const tel = merged.observations.filter((o) => o.field === 'telephone');
  t.same(tel.map((o) => o.source_id), [pg.source_id], 'each fact keeps its source');
  t.equal(merged.observations.filter((o) => o.field === 'name').length, 2);

  // Recrawl with the same declaration: same id, still two sources.
  s.observePage(page(7, 'https://childrens.example.ca/about'), [childrensJsonLd], '2026-03-01T00:00:00.000Z');
  t.equal(s.get(id)!.sources.length, 2);

  // The page turns noindex: the pipeline withdraws it; the open-data part stays.
  s.withdrawPage(7);
  const after = s.get(id)!;
  t.equal(after.sources.length, 1);
  t.equal(after.sources[0]!.type, 'dataset');
  t.equal(after.url, null);
  t.equal(after.telephone, null);
  t.equal(after.address.street, '28 Oki Dr NW');
});

t.test('issue 5: a page-only entity disappears when the page turns noindex and comes back with the same id', async (t) => {
  const { store: s } = store(t);
  const node = {
    '@type': 'Library',
    '@id': 'https://bib.example.ca/#library',
    name: 'Bibliothèque du Quartier',
    address: { addressLocality: 'Montréal', addressRegion: 'Québec', postalCode: 'H2L 3L8' },
  };
  const [r] = s.observePageDetailed(page(3, 'https://bib.example.ca/'), [node], '2026-01-01T00:00:00.000Z');
  t.ok(r?.ok);
  const id = r && r.ok ? r.id : '';
  t.equal(id, entityIdFor('id:https://bib.example.ca/#library'));
  t.equal(s.search({ q: 'bibliotheque quartier' })[0]?.id, id, 'accents ignored in q');
  // Recrawl: the page is now noindex → the crawler sends an empty observation (or withdraws).
  s.observePage(page(3, 'https://bib.example.ca/'), [], '2026-01-02T00:00:00.000Z');
  t.equal(s.get(id), null);
  t.equal(s.counts().entities, 0);
  s.observePage(page(3, 'https://bib.example.ca/'), [node], '2026-01-03T00:00:00.000Z');
  t.ok(s.get(id), 'same durable id after coming back');
});

t.test('only Canadian establishments are admitted; one page declaring two places gives two entities', async (t) => {
  const { store: s } = store(t);
  const res = s.observePageDetailed(
    page(1, 'https://chain.example.com/locations'),
    [
      { '@type': 'Restaurant', name: 'Le Bistro', address: { addressLocality: 'Québec', addressRegion: 'QC', postalCode: 'G1R 4P5' } },
      { '@type': 'Restaurant', name: 'Le Bistro', address: { addressLocality: 'Ottawa', addressRegion: 'ON', postalCode: 'K1P 5J2' } },
      { '@type': 'Restaurant', name: 'NY Bistro', address: { addressCountry: 'USA', addressRegion: 'NY', postalCode: '10001' } },
      { '@type': 'Restaurant', name: 'Somewhere', address: { addressLocality: 'Paris' } },
      { '@type': 'WebPage', name: 'Locations' },
    ],
    '2026-01-01T00:00:00.000Z',
  );
  t.same(
    res.map((r) => (r.ok ? r.outcome : r.reason)),
    ['created', 'created', 'foreign_country', 'no_canadian_evidence', 'not_an_entity_type'],
  );
  t.equal(s.counts().entities, 2);
  t.same(s.search({ province: 'Ontario' }).map((e) => e.address.locality), ['Ottawa']);
  t.same(s.search({ province: 'qc', kind: 'FoodEstablishment' }).map((e) => e.name), ['Le Bistro']);
  t.same(s.search({ locality: 'quebec' }).map((e) => e.address.province), ['CA-QC']);
  t.equal(s.search({ kind: 'MedicalOrganization' }).length, 0);
});

t.test('search bounds and bad filters', async (t) => {
  const { store: s } = store(t);
  t.throws(() => s.search({ province: 'Atlantis' }), EntityQueryError);
  t.throws(() => s.search({ kind: 'Spaceship' }), EntityQueryError);
  t.throws(() => s.search({ q: '!!!' }), EntityQueryError);
  // Hostile text is quoted word by word: no FTS syntax, no SQL.
  t.same(s.search({ q: `"); DROP TABLE entities; -- OR * NEAR(` }), []);
  t.equal(s.counts().entities, 0);
});

t.test('issue 5: real ODHF import is idempotent (re-import updates, never duplicates)', async (t) => {
  const { store: s } = store(t);
  const file = join(SHARED, 'odhf', 'odhf_v1.1.utf8.csv.gz');
  const first = await importDataset(s, 'odhf', file, '2026-01-01T00:00:00.000Z');
  t.equal(first.read, 7033);
  t.equal(first.rejected, 0);
  t.equal(first.admitted + first.merged, 7033);
  const n = s.counts();
  t.equal(n.datasetSources, 7033);
  const second = await importDataset(s, 'odhf', file, '2026-01-02T00:00:00.000Z');
  t.same({ ...second, reasons: {} }, { read: 7033, admitted: 0, merged: 0, updated: 7033, rejected: 0, reasons: {} });
  t.same(s.counts(), n, 'same entities and sources after the re-import');
  const hosp = s.search({ q: 'champlain rive sud', province: 'QC', kind: 'MedicalOrganization' });
  t.ok(hosp.length >= 1, 'French names found without accents');
  t.ok(hosp.every((e) => e.address.province === 'CA-QC'));
  t.equal(s.search({ kind: 'Hospital', limit: 50 }).length, 20, 'limit is capped at 20');
});

t.test('nested establishments (department, subOrganization, location) are read; each needs its own evidence', async (t) => {
  const { store: s } = store(t);
  const res = s.observePageDetailed(
    page(9, 'https://mall.example.ca/'),
    [
      {
        '@type': 'ShoppingCenter',
        name: 'Galeries Example',
        address: { addressCountry: 'CA', postalCode: 'H3B 4W8', addressLocality: 'Montréal' },
        department: [
          { '@type': 'Pharmacy', name: 'Pharmacie Centrale', address: { addressCountry: 'CA', postalCode: 'H3B 4W9' } },
          { '@type': 'Bakery', name: 'No address bakery' },
        ],
      },
    ],
    '2026-01-01T00:00:00.000Z',
  );
  t.same(res.map((r) => (r.ok ? r.outcome : r.reason)), ['created', 'created', 'no_canadian_evidence']);
  t.same(s.search({ kind: 'MedicalOrganization' }).map((e) => e.name), ['Pharmacie Centrale']);
});

t.test('all 196 schema.org establishment examples: read through the crawler JSON-LD reader, never throw, only Canadian admitted', async (t) => {
  const { readFileSync } = await import('node:fs');
  const { readJsonLd } = await import('../../crawler/extract-jsonld.js');
  const { store: s } = store(t);
  const lines = readFileSync(join(process.cwd(), '..', 'shared', 'data', 'jsonld', 'schemaorg-examples-establishments.jsonl'), 'utf8')
    .split('\n')
    .filter((l) => l.trim() !== '');
  t.equal(lines.length, 196);
  const tally: Record<string, number> = {};
  lines.forEach((line, i) => {
    const ex = JSON.parse(line) as { jsonld: unknown[] };
    const reading = readJsonLd(ex.jsonld.map((x) => JSON.stringify(x)));
    for (const r of s.observePageDetailed(page(1000 + i, `https://examples.example/${i}`), reading.entities, '2026-01-01T00:00:00.000Z')) {
      const k = r.ok ? 'admitted' : r.reason;
      tally[k] = (tally[k] ?? 0) + 1;
    }
  });
  t.comment(`outcomes: ${JSON.stringify(tally)}`);
  t.ok((tally['foreign_country'] ?? 0) > 0, 'the US examples are refused');
  for (const e of s.search({ limit: 20 })) t.equal(e.address.country, 'CA');
  const all = (s as unknown as { counts(): { entities: number } }).counts().entities;
  t.equal(all, tally['admitted'] ?? 0, 'one entity per admitted node (no accidental merges across examples)');
});

t.test('property: factsFromJsonLd and observePage never throw on arbitrary JSON', async (t) => {
  const fc = (await import('fast-check')).default;
  const { store: s } = store(t);
  let n = 0;
  fc.assert(
    fc.property(
      fc.record({
        '@type': fc.oneof(fc.constantFrom('LocalBusiness', 'Hospital', ['Place', 'Museum'], 'Thing'), fc.jsonValue()),
        name: fc.oneof(fc.string(), fc.jsonValue()),
        address: fc.oneof(fc.jsonValue(), fc.record({ postalCode: fc.string(), addressRegion: fc.string(), addressCountry: fc.oneof(fc.string(), fc.jsonValue()) })),
        geo: fc.jsonValue(),
        url: fc.oneof(fc.webUrl(), fc.string()),
        '@id': fc.oneof(fc.webUrl(), fc.string()),
        department: fc.jsonValue(),
      }),
      (node) => {
        factsFromJsonLd(node as Record<string, unknown>, 'https://p.example.ca/');
        s.observePage(page(5000 + (n++ % 7), 'https://p.example.ca/'), [node as Record<string, unknown>], '2026-01-01T00:00:00.000Z');
      },
    ),
    { numRuns: 300 },
  );
  t.pass('no throw');
});
