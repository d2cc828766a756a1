/**
 * The one contract of the entities repository, run against both backends (entities-sqlite.test.ts,
 * entities-postgres.test.ts): merge rules across ODHF, ODCAF and JSON-LD with every source kept as an observation
 * with its licence, last_verified_at, name search (accent folding, French/English kind words, filters, ranking),
 * withdrawal, JSON-LD parse errors, and the README's examples on the real Statistics Canada open data imported
 * through `svc entities import` (which writes to the backend the environment selects).
 */
import { createReadStream, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { Writable } from 'node:stream';
import { createGunzip, gunzipSync, gzipSync } from 'node:zlib';
import type { Test } from 'tap';
import { entitiesCommand } from '../../cli/entities.js';
import { readCsv } from '../../state/csv.js';
import { importDataset } from '../../state/entity-import.js';
import { readJsonLd } from '../../crawler/extract-jsonld.js';
import { SHARED_DATA_DIR } from '../../fixtures/test-web/index.js';
import type { JsonLdNode, JsonLdParseErrors } from '../../page-model.js';
import { entityIdFor, OGL_CANADA, PAGE_LICENCE_NOTE, type NodeOutcome } from '../../state/entities.js';
import type { EntitiesRepo } from '../../state/repos/types.js';

/** The repository plus the per-node outcome of a page observation (both backends have it; the sink does not need it). */
export type ContractEntities = EntitiesRepo & {
  observePageDetailed(
    page: { pageRef: number; url: string; host?: string },
    nodes: readonly JsonLdNode[],
    observedAt: string,
    parseErrors?: JsonLdParseErrors,
  ): Promise<NodeOutcome[]>;
};

export interface EntitiesStoreUnderTest {
  readonly repo: ContractEntities;
  /** What `svc entities import` needs to write to this very store. */
  readonly cli: { readonly dataDir: string; readonly env: NodeJS.ProcessEnv };
  close(): Promise<void>;
}

/** A fresh, empty, migrated store each call; cli.dataDir is a directory the test may write files into. */
export type OpenEntities = (t: Test, name: string) => Promise<EntitiesStoreUnderTest>;

export const ODCAF = join(SHARED_DATA_DIR, 'ca-open-data', 'odcaf', 'ODCAF_v1.0.utf8.csv.gz');
export const ODHF = join(SHARED_DATA_DIR, 'ca-open-data', 'odhf', 'odhf_v1.1.utf8.csv.gz');
const PAGE_FILE = new URL('../../fixtures/test-web/sites/ville-quebec.test/bibliotheques/gabrielle-roy.html', import.meta.url);

const ODHF_HEADER =
  'index,facility_name,source_facility_type,odhf_facility_type,provider,unit,street_no,street_name,postal_code,city,province,source_format_str_address,CSDname,CSDuid,Pruid,latitude,longitude';
// Two real ODHF v1.1 rows (Statistics Canada, Open Government Licence – Canada) and one made-up row without a province.
const ODHF_ROWS = [
  `10,Alberta Children's Hospital,pediatric,Hospitals,Public Health Agency of Canada,,28,oki dr nw,T3B 6A8,calgary,ab,28 Oki Dr NW,Calgary,4806016.0,48,51.074582,-114.148426`,
  `1,Advanced Facial & Nasal Surgery Centre,other,Ambulatory health care services,Canadian Institute for Health Information,,,,T5M 4G5,edmonton,ab,,Edmonton,,48,,`,
  `99,"Clinique ""Test"", Nowhere",other,Hospitals,x,,,,,nowhere,,,,,,,`,
];

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

export const quietIo = (env: NodeJS.ProcessEnv, out: string[] = []) => ({
  stdout: new Writable({
    write: (c: Buffer, _e, cb) => {
      out.push(c.toString('utf8'));
      cb();
    },
  }),
  stderr: new Writable({ write: (_c, _e, cb) => cb() }),
  env,
});

/**
 * The Québec rows of a real open-data file, as CSV at `dest` (every field quoted): the README's examples are all in
 * Québec, and 3,800 rows instead of 15,000 keep the suite quick on a shared machine. Row ids stay the real ones.
 */
export async function quebecRows(src: string, provinceColumn: string, dest: string): Promise<void> {
  const input = createReadStream(src).pipe(createGunzip());
  input.setEncoding('utf8');
  const line = (rec: string[]) => rec.map((f) => `"${f.replace(/"/g, '""')}"`).join(',');
  const out: string[] = [];
  let col = -1;
  for await (const rec of readCsv(input)) {
    if (col < 0) {
      col = rec.findIndex(
        (h) =>
          h
            .replace(/^\uFEFF/, '')
            .trim()
            .toLowerCase() === provinceColumn,
      );
      if (col < 0) throw new Error(`${src}: no ${provinceColumn} column`);
      out.push(line(rec));
    } else if ((rec[col] ?? '').trim().toLowerCase() === 'qc') out.push(line(rec));
  }
  writeFileSync(dest, `${out.join('\n')}\n`);
}

/** What `svc entities import` reported: rows recorded (admitted + merged + updated). */
const recorded = (out: string[]): number => {
  const m = /admitted (\d+), merged (\d+), updated (\d+)/.exec(out.join(''));
  if (!m) throw new Error(`no import summary in: ${out.join('')}`);
  return Number(m[1]) + Number(m[2]) + Number(m[3]);
};

/** A small ODCAF file: the header and the Gatineau rows of the real one. */
export function odcafGatineau(): string {
  const text = gunzipSync(readFileSync(ODCAF)).toString('utf8').split('\n');
  return [text[0], ...text.filter((l) => /,gatineau,qc,/.test(l))].join('\n') + '\n';
}

/** The city of Québec's page about Bibliothèque Gabrielle-Roy (fixture web), as the crawler would observe it. */
export function gabrielleRoyPage() {
  const origin = 'https://www.ville.quebec.qc.ca';
  const html = readFileSync(PAGE_FILE, 'utf8').replaceAll('{{ORIGIN}}', origin);
  const blocks = [...html.matchAll(/<script type="application\/ld\+json">([\s\S]*?)<\/script>/g)].map((m) => m[1]!);
  return {
    page: { pageRef: 4242, url: `${origin}/bibliotheques/gabrielle-roy.html`, host: 'www.ville.quebec.qc.ca', lang: 'fr' },
    nodes: readJsonLd(blocks).entities,
    at: '2026-11-20T10:00:00.000Z',
  };
}

/** Queries whose answers (ids, in order) both backends must give alike on the real open data. */
export const PARITY_QUERIES = [
  { q: 'library', province: 'QC', locality: 'Gatineau', kind: 'Library', limit: 20 },
  { q: 'bibliothèque gabrielle roy', limit: 10 },
  { q: 'hospital hull', limit: 5 },
  { q: 'musée', locality: 'Montréal', limit: 20 },
  { q: 'champlain rive sud', province: 'QC', kind: 'MedicalOrganization' },
  { q: 'general', limit: 20 },
  { q: 'saint', locality: 'Montréal', limit: 20 },
  { q: 'centre hosp', limit: 20 },
  { kind: 'Hospital', province: 'QC', limit: 20 },
  { kind: 'bibliothèque', locality: 'Gatineau', limit: 20 },
];

export interface ContractOptions {
  /**
   * Runs after the open-data test, on its store (the Québec subsets of ODCAF and ODHF imported, files in
   * store.cli.dataDir, then gabrielleRoyPage() observed): the PostgreSQL suite compares its answers with SQLite's.
   */
  readonly afterOpenData?: (t: Test, store: EntitiesStoreUnderTest, files: { odcaf: string; odhf: string }) => Promise<void>;
  /** Backend invariants checked at the end of the tests that create, merge and delete (PostgreSQL: bm25's totals). */
  readonly invariants?: (t: Test, store: EntitiesStoreUnderTest) => Promise<void>;
}

export function entitiesContract(t: Test, open: OpenEntities, opts: ContractOptions = {}): void {
  const fresh = async (t: Test, name: string) => {
    const s = await open(t, name);
    t.teardown(() => s.close());
    return s;
  };
  const invariants = async (t: Test, s: EntitiesStoreUnderTest) => {
    if (opts.invariants) await opts.invariants(t, s);
  };

  t.test('issue 5: an entity merged from ODHF and a page declaring the same place; noindex withdraws the page part', async (t) => {
    const store = await fresh(t, 'merge');
    const { repo: s, cli } = store;
    const csv = join(cli.dataDir, 'odhf.csv.gz');
    writeFileSync(csv, gzipSync(`${ODHF_HEADER}\n${ODHF_ROWS.join('\n')}\n`));
    const rep = await importDataset(s, 'odhf', csv, '2026-01-01T00:00:00.000Z');
    t.same(rep, { read: 3, admitted: 2, merged: 0, updated: 0, rejected: 1, reasons: { no_province: 1 } });
    t.equal(
      (await s.search({ q: 'alberta childrens', limit: 5 })).length,
      0,
      'the apostrophe splits "children s": whole-word prefix search needs the word',
    );
    const found = await s.search({ q: "alberta children's", limit: 5 });
    t.equal(found.length, 1);
    const id = found[0]!.id;
    t.match(id, /^ent_[0-9a-f]{20}$/);

    const results = await s.observePageDetailed(
      page(7, 'https://childrens.example.ca/about'),
      [childrensJsonLd],
      '2026-02-01T00:00:00.000Z',
    );
    t.same(results, [{ ok: true, id, outcome: 'merged' }], 'name + postal code match');
    const merged = (await s.get(id))!;
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
    t.same(ds.provenance, {
      page_url: null,
      page_ref: null,
      dataset: 'odhf',
      dataset_title: 'Open Database of Healthcare Facilities v1.1 (Statistics Canada)',
      row_id: '10',
    });
    t.equal(ds.verified_at, '2020-08-06T00:00:00.000Z', 'ODHF v1.1 release');
    t.same(pg.licence, { name: null, url: null, statement: PAGE_LICENCE_NOTE });
    t.same(pg.provenance, {
      page_url: 'https://childrens.example.ca/about',
      page_ref: 7,
      dataset: null,
      dataset_title: null,
      row_id: null,
    });
    t.same(
      merged.observations.filter((o) => o.field === 'telephone').map((o) => o.source_id),
      [pg.source_id],
      'each fact keeps its source',
    );
    t.equal(merged.observations.filter((o) => o.field === 'name').length, 2);
    t.same(
      merged.sources.map((x) => x.type),
      ['page', 'dataset'],
      'page sources first',
    );

    await s.observePage(page(7, 'https://childrens.example.ca/about'), [childrensJsonLd], '2026-03-01T00:00:00.000Z');
    t.equal((await s.get(id))!.sources.length, 2, 'a recrawl keeps one page source');
    const again = await importDataset(s, 'odhf', csv, '2026-03-02T00:00:00.000Z');
    t.same(
      again,
      { read: 3, admitted: 0, merged: 0, updated: 2, rejected: 1, reasons: { no_province: 1 } },
      're-import updates, never duplicates',
    );
    t.same(await s.counts(), { entities: 2, sources: 3, pageSources: 1, datasetSources: 2 });

    await s.withdrawPage(7);
    const after = (await s.get(id))!;
    t.same(
      after.sources.map((x) => x.type),
      ['dataset'],
    );
    t.equal(after.url, null);
    t.equal(after.telephone, null);
    t.equal(after.address.street, '28 Oki Dr NW');
    t.equal(after.last_verified_at, '2020-08-06T00:00:00.000Z');
    await invariants(t, store);
  });

  t.test('issue 5: a page-only entity disappears when the page turns noindex and comes back with the same id', async (t) => {
    const store = await fresh(t, 'pageonly');
    const s = store.repo;
    const node = {
      '@type': 'Library',
      '@id': 'https://bib.example.ca/#library',
      name: 'Bibliothèque du Quartier',
      address: { addressLocality: 'Montréal', addressRegion: 'Québec', postalCode: 'H2L 3L8' },
    };
    const [r] = await s.observePageDetailed(page(3, 'https://bib.example.ca/'), [node], '2026-01-01T00:00:00.000Z');
    const id = r && r.ok ? r.id : '';
    t.equal(id, entityIdFor('id:https://bib.example.ca/#library'));
    t.equal((await s.search({ q: 'bibliotheque quartier' }))[0]?.id, id, 'accents ignored in q');
    await s.observePage(page(3, 'https://bib.example.ca/'), [], '2026-01-02T00:00:00.000Z');
    t.equal(await s.get(id), null);
    t.equal((await s.counts()).entities, 0);
    await invariants(t, store);
    await s.observePage(page(3, 'https://bib.example.ca/'), [node], '2026-01-03T00:00:00.000Z');
    t.ok(await s.get(id), 'same durable id after coming back');
    await invariants(t, store);
  });

  t.test('only Canadian establishments are admitted; one page declaring two places gives two entities', async (t) => {
    const { repo: s } = await fresh(t, 'canadian');
    const res = await s.observePageDetailed(
      page(1, 'https://chain.example.com/locations'),
      [
        { '@type': 'Restaurant', name: 'Le Bistro', address: { addressLocality: 'Québec', addressRegion: 'QC', postalCode: 'G1R 4P5' } },
        { '@type': 'Restaurant', name: 'Le Bistro', address: { addressLocality: 'Ottawa', addressRegion: 'ON', postalCode: 'K1P 5J2' } },
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
      'the repeated declaration is one statement',
    );
    t.equal((await s.counts()).entities, 2);
    t.same(
      (await s.search({ province: 'Ontario' })).map((e) => e.address.locality),
      ['Ottawa'],
    );
    t.same(
      (await s.search({ province: 'qc', kind: 'FoodEstablishment' })).map((e) => e.name),
      ['Le Bistro'],
    );
    t.same(
      (await s.search({ locality: 'quebec' })).map((e) => e.address.province),
      ['CA-QC'],
    );
    t.equal((await s.search({ kind: 'MedicalOrganization' })).length, 0);
  });

  t.test('search bounds and bad filters', async (t) => {
    const { repo: s } = await fresh(t, 'bounds');
    await t.rejects(s.search({ province: 'Atlantis' }), { name: 'EntityQueryError', field: 'province' });
    await t.rejects(s.search({ kind: 'Spaceship' }), { name: 'EntityQueryError', field: 'kind' });
    await t.rejects(s.search({ q: '!!!' }), { name: 'EntityQueryError', field: 'q' });
    // Hostile text is folded and quoted word by word: no query syntax, no SQL.
    t.same(await s.search({ q: `"); DROP TABLE entities; -- OR * NEAR( ' \\ :* & | !` }), []);
    t.equal((await s.counts()).entities, 0);
  });

  t.test('nested establishments (department, subOrganization, location) are read; each needs its own evidence', async (t) => {
    const { repo: s } = await fresh(t, 'nested');
    const res = await s.observePageDetailed(
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
    t.same(
      res.map((r) => (r.ok ? r.outcome : r.reason)),
      ['created', 'created', 'no_canadian_evidence'],
    );
    t.same(
      (await s.search({ kind: 'MedicalOrganization' })).map((e) => e.name),
      ['Pharmacie Centrale'],
    );
  });

  t.test('name ranking: more of the words, in a shorter name, first; prefix on the last word; name order without q', async (t) => {
    const { repo: s } = await fresh(t, 'ranking');
    const lib = (name: string, pc: string) => ({
      '@type': 'Library',
      name,
      address: { addressCountry: 'CA', addressRegion: 'ON', addressLocality: 'Ottawa', postalCode: pc },
    });
    await s.observePage(
      page(20, 'https://libs.example.ca/'),
      [
        lib('Rideau Branch', 'K1N 5X1'),
        lib('Rideau Rideau Branch', 'K1N 5X2'),
        lib('Rideau Branch of the Ottawa Public Library System', 'K1N 5X3'),
        lib('rideau annex', 'K1N 5X4'),
        lib('Élise Rideauville', 'K1N 5X5'),
      ],
      '2026-01-01T00:00:00.000Z',
    );
    // bm25: two occurrences first, then the two-word names (in creation order), the long name last.
    t.same(
      (await s.search({ q: 'rideau' })).map((e) => e.name),
      ['Rideau Rideau Branch', 'Rideau Branch', 'rideau annex', 'Élise Rideauville', 'Rideau Branch of the Ottawa Public Library System'],
    );
    t.same(
      (await s.search({ q: 'rideau branch' })).map((e) => e.name),
      ['Rideau Rideau Branch', 'Rideau Branch', 'Rideau Branch of the Ottawa Public Library System'],
    );
    t.same((await s.search({ q: 'rideau bran' })).map((e) => e.name).length, 3, 'the last word is a prefix');
    t.same(
      (await s.search({ q: 'rideauv' })).map((e) => e.name),
      ['Élise Rideauville'],
    );
    t.same(
      (await s.search({ q: 'elise' })).map((e) => e.name),
      ['Élise Rideauville'],
      'accents fold',
    );
    t.same((await s.search({ q: 'rid branch' })).length, 0, 'only the last word is a prefix');
    t.same(
      (await s.search({ locality: 'OTTAWA' })).map((e) => e.name),
      ['rideau annex', 'Rideau Branch', 'Rideau Branch of the Ottawa Public Library System', 'Rideau Rideau Branch', 'Élise Rideauville'],
      'NOCASE name order (ASCII folded, then code points)',
    );
    t.same(
      (await s.search({ q: 'library', limit: 2 })).map((e) => e.name),
      ['rideau annex', 'Rideau Branch'],
      'a kind word alone: by name',
    );
  });

  t.test(
    'issue 11: JSON-LD parse errors are kept per page with provenance, replaced at each fetch and withdrawn with the page',
    async (t) => {
      const { repo: s } = await fresh(t, 'parse-errors');
      await s.observePage(page(30, 'https://a.example.ca/broken'), [], '2026-01-01T00:00:00.000Z', { invalid_json: 2, empty_block: 1 });
      await s.observePage(page(31, 'https://b.example.ca/ok'), [], '2026-01-01T00:00:00.000Z', { invalid_json: 1 });
      await s.observePage(page(32, 'https://a.example.ca/clean'), [], '2026-01-01T00:00:00.000Z', {});
      t.same(await s.parseErrors(['a.example.ca']), [
        {
          pageRef: 30,
          url: 'https://a.example.ca/broken',
          host: 'a.example.ca',
          reason: 'empty_block',
          blocks: 1,
          observedAt: '2026-01-01T00:00:00.000Z',
        },
        {
          pageRef: 30,
          url: 'https://a.example.ca/broken',
          host: 'a.example.ca',
          reason: 'invalid_json',
          blocks: 2,
          observedAt: '2026-01-01T00:00:00.000Z',
        },
      ]);
      t.same((await s.parseErrors(['a.example.ca', 'b.example.ca'])).length, 3);
      t.same(await s.parseErrors([]), []);
      await s.observePage(page(30, 'https://a.example.ca/broken'), [], '2026-01-02T00:00:00.000Z', { invalid_json: 1 });
      t.same(
        (await s.parseErrors(['a.example.ca'])).map((e) => [e.reason, e.blocks, e.observedAt]),
        [['invalid_json', 1, '2026-01-02T00:00:00.000Z']],
        'the new fetch replaces the old count',
      );
      await s.withdrawPage(30);
      t.same(await s.parseErrors(['a.example.ca']), [], 'a withdrawn page keeps no parse errors');
      await s.observePage(page(31, 'https://b.example.ca/ok'), [], '2026-01-02T00:00:00.000Z');
      t.same(await s.parseErrors(['b.example.ca']), [], 'a fixed page clears them');
    },
  );

  t.test('issue 13 on the real open data (the Québec rows of ODCAF + ODHF, imported with svc entities import)', async (t) => {
    const store = await fresh(t, 'opendata');
    const s = store.repo;
    const files = { odcaf: join(store.cli.dataDir, 'odcaf-qc.csv'), odhf: join(store.cli.dataDir, 'odhf-qc.csv') };
    await quebecRows(ODCAF, 'prov_terr', files.odcaf);
    await quebecRows(ODHF, 'province', files.odhf);
    const out: string[] = [];
    t.equal(await entitiesCommand(['import', '--odcaf', files.odcaf, '--data-dir', store.cli.dataDir], quietIo(store.cli.env, out)), 0);
    t.equal(await entitiesCommand(['import', '--odhf', files.odhf, '--data-dir', store.cli.dataDir], quietIo(store.cli.env, out)), 0);
    const n = await s.counts();
    const rows = recorded(out.slice(0, 1)) + recorded(out.slice(1));
    t.ok(rows > 3500, `${rows} rows recorded`);
    t.equal(n.datasetSources, rows, `every recorded row is a source (${n.entities} entities)`);

    // The README example.
    const hits = await s.search({ q: 'library', province: 'QC', locality: 'Gatineau', kind: 'Library', limit: 20 });
    t.equal(hits.length, 12, 'the 12 libraries and archives ODCAF lists in Gatineau');
    t.ok(hits.every((e) => e.kind === 'Library' && e.address.locality === 'Gatineau' && e.address.province === 'CA-QC'));
    t.ok(hits.some((e) => e.name === 'Bibliothèque Lucien-Lalonde'));
    t.equal(hits.filter((e) => /^biblioth[eè]que/i.test(e.name)).length, 11, 'French names match the English word');
    const five = await s.search({ q: 'library', province: 'QC', locality: 'Gatineau', kind: 'Library', limit: 5 });
    t.same(
      five.map((e) => e.id),
      hits.slice(0, 5).map((e) => e.id),
      'limit=5 (the README) returns the first five',
    );

    // Accents fold and kind words match in French and English.
    const ids = async (q: string, extra: object = {}) => (await s.search({ q, limit: 20, ...extra })).map((e) => e.id).sort();
    t.same(
      await ids('bibliotheque', { locality: 'gatineau', province: 'Québec' }),
      await ids('Bibliothèque', { locality: 'Gatineau', province: 'QC' }),
    );
    t.same(
      await ids('bibliothèque', { locality: 'Gatineau', province: 'QC' }),
      await ids('library', { locality: 'Gatineau', province: 'QC' }),
      'bibliothèque = library',
    );
    const hull = (await s.search({ q: 'hospital hull', limit: 5 })).map((e) => e.name);
    t.ok(hull.includes('Hôpital De Hull'), `"hospital" finds "Hôpital": ${hull.join(', ')}`);
    t.same(await ids('hopital hull'), await ids('hospital hull'), 'hôpital = hospital');
    t.same(await ids('gabrielle roy'), await ids('GABRIELLE-ROY'), 'punctuation and case fold');
    t.same(
      await ids('', { kind: 'bibliothèque', locality: 'Gatineau' }),
      await ids('', { kind: 'Library', locality: 'Gatineau' }),
      'kind accepts a kind word',
    );
    const hosp = await s.search({ q: 'champlain rive sud', province: 'QC', kind: 'MedicalOrganization' });
    t.ok(hosp.length >= 1 && hosp.every((e) => e.address.province === 'CA-QC'), 'French names found without accents');
    t.equal((await s.search({ kind: 'Hospital', limit: 50 })).length, 20, 'limit is capped at 20');

    // Bibliothèque Gabrielle-Roy of Québec City (ODCAF, no postal code) and the city's own page are one entity.
    const before = await s.search({ q: 'bibliothèque gabrielle roy', limit: 10 });
    t.equal(before.length, 2, 'Québec City and Laval have one each in ODCAF');
    const quebec = before.find((e) => e.address.locality === 'Québec City')!;
    const laval = before.find((e) => e.address.locality === 'Laval')!;
    t.ok(quebec && laval);
    const city = gabrielleRoyPage();
    const joined = await s.observePageDetailed(city.page, city.nodes, city.at);
    t.same(joined[0], { ok: true, id: quebec.id, outcome: 'merged' }, 'the page joins the ODCAF record (same name, 120 m apart)');
    const merged = (await s.get(quebec.id))!;
    t.same(
      merged.sources.map((x) => x.type),
      ['page', 'dataset'],
    );
    const ds = merged.sources.find((x) => x.type === 'dataset')!;
    const pg = merged.sources.find((x) => x.type === 'page')!;
    t.equal(ds.source_id, 'odcaf:row:893');
    t.same(ds.licence, { name: OGL_CANADA.name, url: OGL_CANADA.url, statement: OGL_CANADA.attribution });
    t.same(pg.licence, { name: null, url: null, statement: PAGE_LICENCE_NOTE });
    t.equal(merged.address.postal_code, 'G1K 3B2', 'the page states the postal code');
    t.ok(merged.observations.some((o) => o.field === 'address.locality' && o.value === 'Québec City' && o.source_id === ds.source_id));
    t.ok(merged.observations.some((o) => o.field === 'address.locality' && o.value === 'Québec' && o.source_id === pg.source_id));
    t.equal((await s.get(laval.id))!.sources.length, 1, "Laval's library of the same name is another establishment");
    t.equal((await s.search({ q: 'gabrielle roy', kind: 'Library', limit: 10 })).length, 2, 'two libraries, not three records');
    t.equal(ds.verified_at, '2020-10-01T00:00:00.000Z', 'ODCAF v1.0 release');
    t.not(ds.observed_at, ds.verified_at, 'the import time is observed_at');
    t.equal(pg.verified_at, '2026-11-20T10:00:00.000Z', 'the page fetch');
    t.equal(merged.last_verified_at, '2026-11-20T10:00:00.000Z', 'the newest confirmation');
    t.equal(laval.last_verified_at, '2020-10-01T00:00:00.000Z');
    await invariants(t, store);
    if (opts.afterOpenData) await t.test('the same store, compared', (t) => opts.afterOpenData!(t, store, files));
  });

  t.test('issue 13: --as-of sets when the source confirmed its rows; a re-import updates', async (t) => {
    const store = await fresh(t, 'asof');
    const file = join(store.cli.dataDir, 'odcaf.csv');
    writeFileSync(file, odcafGatineau());
    const io = quietIo(store.cli.env);
    t.equal(await entitiesCommand(['import', '--odcaf', file, '--as-of', '2024-05-01', '--data-dir', store.cli.dataDir], io), 0);
    const rec = (await store.repo.search({ q: 'lucien lalonde', limit: 1 }))[0]!;
    t.equal(rec.last_verified_at, '2024-05-01T00:00:00.000Z');
    const n = await store.repo.counts();
    t.equal(await entitiesCommand(['import', '--odcaf', file, '--data-dir', store.cli.dataDir], io), 0);
    t.same(await store.repo.counts(), n, 'same entities and sources after the re-import');
    t.equal((await store.repo.get(rec.id))!.last_verified_at, '2020-10-01T00:00:00.000Z', 'without --as-of: the release date');
    t.equal(await entitiesCommand(['import', '--odcaf', file, '--as-of', 'yesterday', '--data-dir', store.cli.dataDir], io), 2);
  });
}
