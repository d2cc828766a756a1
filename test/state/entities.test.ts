/**
 * Entity rules that need no particular backend (Canadian address rules, the schema.org table, JSON-LD mapping, the
 * CSV reader) and SQLite-only checks at scale. The store's behaviour on both backends is entities-contract.ts.
 */
import t, { type Test } from 'tap';
import { join } from 'node:path';
import { openStateDb } from '../../state/db.js';
import { EntityStore } from '../../state/entities.js';
import { readCsv } from '../../state/csv.js';
import { importDataset } from '../../state/entity-import.js';
import { decideCountry, canonicalPostalCode, provinceOf, findPostalCode } from '../../state/entity-canada.js';
import { factsFromJsonLd, matchKeys } from '../../state/entity-facts.js';
import { withSubtypes, isSubtypeOf } from '../../schema-org-types.js';

const SHARED = join(process.cwd(), '..', 'shared', 'data', 'ca-open-data');

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
  t.same(matchKeys(r.facts), ['url:childrens.example.ca', 'np:alberta children s hospital|T3B 6A8']);
  const us = factsFromJsonLd(
    { '@type': 'Restaurant', name: 'Diner', address: { addressCountry: 'US', postalCode: '10001' } },
    'https://x.example/',
  );
  t.same(us, { ok: false, reason: 'foreign_country' });
  t.same(factsFromJsonLd({ '@type': 'Article', name: 'x' }, 'https://x.example/'), { ok: false, reason: 'not_an_entity_type' });
  t.same(factsFromJsonLd({ '@type': 'LocalBusiness', address: { postalCode: 'K1A 0B1' } }, 'https://x.example/'), {
    ok: false,
    reason: 'no_name',
  });
  const line = factsFromJsonLd(
    { '@type': ['Thing', 'http://schema.org/Dentist'], name: 'Smile', address: '12 Rue X, Montréal QC H2L 3L8' },
    'https://d.example/',
  );
  t.ok(line.ok && line.facts.kind === 'Dentist' && line.facts.postalCode === 'H2L 3L8' && line.facts.province === 'CA-QC');
});

async function* chunks(list: string[]): AsyncGenerator<string> {
  yield* list;
}

t.test('CSV reader: quotes, doubled quotes, embedded newline, CRLF', async (t) => {
  const rows: string[][] = [];
  for await (const r of readCsv(chunks(['a,"b ""q"", c",d\r\n', '1,"line\nbreak",3\n', 'x,,']))) rows.push(r);
  t.same(rows, [
    ['a', 'b "q", c', 'd'],
    ['1', 'line\nbreak', '3'],
    ['x', '', ''],
  ]);
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

t.test(
  'all 196 schema.org establishment examples: read through the crawler JSON-LD reader, never throw, only Canadian admitted',
  async (t) => {
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
      for (const r of s.observePageDetailed(
        page(1000 + i, `https://examples.example/${i}`),
        reading.entities,
        '2026-01-01T00:00:00.000Z',
      )) {
        const k = r.ok ? 'admitted' : r.reason;
        tally[k] = (tally[k] ?? 0) + 1;
      }
    });
    t.comment(`outcomes: ${JSON.stringify(tally)}`);
    t.ok((tally['foreign_country'] ?? 0) > 0, 'the US examples are refused');
    for (const e of s.search({ limit: 20 })) t.equal(e.address.country, 'CA');
    const all = (s as unknown as { counts(): { entities: number } }).counts().entities;
    t.equal(all, tally['admitted'] ?? 0, 'one entity per admitted node (no accidental merges across examples)');
  },
);

t.test('property: factsFromJsonLd and observePage never throw on arbitrary JSON', async (t) => {
  const fc = (await import('fast-check')).default;
  const { store: s } = store(t);
  let n = 0;
  fc.assert(
    fc.property(
      fc.record({
        '@type': fc.oneof(fc.constantFrom('LocalBusiness', 'Hospital', ['Place', 'Museum'], 'Thing'), fc.jsonValue()),
        name: fc.oneof(fc.string(), fc.jsonValue()),
        address: fc.oneof(
          fc.jsonValue(),
          fc.record({ postalCode: fc.string(), addressRegion: fc.string(), addressCountry: fc.oneof(fc.string(), fc.jsonValue()) }),
        ),
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
