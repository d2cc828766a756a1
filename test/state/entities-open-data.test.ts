/**
 * Issue 13: entities people can find, on the real Statistics Canada open data (../shared/data/ca-open-data).
 * - the README example `q=library&province=QC&locality=Gatineau&kind=Library` finds Gatineau's "Bibliothèque …";
 * - accents fold and kind words work in French and English (bibliothèque / library, hôpital / hospital);
 * - "Bibliothèque Gabrielle-Roy" of Québec City (ODCAF, no postal code) and the city's own page (JSON-LD, postal
 *   code, coordinates 120 m away) are one entity, each source kept with its licence; Laval's namesake stays apart;
 * - last_verified_at is when a source confirmed the record (the dataset's release, the page fetch), not the import.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { Writable } from 'node:stream';
import { gunzipSync } from 'node:zlib';
import t from 'tap';
import { entitiesCommand } from '../../cli/entities.js';
import { readJsonLd } from '../../crawler/extract-jsonld.js';
import { SHARED_DATA_DIR } from '../../fixtures/test-web/index.js';
import { openStateDb } from '../../state/db.js';
import { EntityStore, OGL_CANADA, PAGE_LICENCE_NOTE } from '../../state/entities.js';

const ODCAF = join(SHARED_DATA_DIR, 'ca-open-data', 'odcaf', 'ODCAF_v1.0.utf8.csv.gz');
const ODHF = join(SHARED_DATA_DIR, 'ca-open-data', 'odhf', 'odhf_v1.1.utf8.csv.gz');
const PAGE_FILE = new URL('../../fixtures/test-web/sites/ville-quebec.test/bibliotheques/gabrielle-roy.html', import.meta.url);

const quiet = () => ({
  stdout: new Writable({ write: (_c, _e, cb) => cb() }),
  stderr: new Writable({ write: (_c, _e, cb) => cb() }),
  env: {},
});

const dir = t.testdir();
t.before(async () => {
  t.equal(await entitiesCommand(['import', '--odcaf', ODCAF, '--data-dir', dir], quiet()), 0);
  t.equal(await entitiesCommand(['import', '--odhf', ODHF, '--data-dir', dir], quiet()), 0);
});
const db = () => {
  const d = openStateDb(join(dir, 'state.sqlite'));
  return { db: d, store: new EntityStore(d) };
};

t.test('issue 13: the README example finds Gatineau libraries named "Bibliothèque …"', async (t) => {
  const { db: d, store } = db();
  t.teardown(() => d.close());
  const hits = store.search({ q: 'library', province: 'QC', locality: 'Gatineau', kind: 'Library', limit: 20 });
  t.equal(hits.length, 12, 'the 12 libraries and archives ODCAF lists in Gatineau');
  t.ok(hits.every((e) => e.kind === 'Library' && e.address.locality === 'Gatineau' && e.address.province === 'CA-QC'));
  t.ok(hits.some((e) => e.name === 'Bibliothèque Lucien-Lalonde'));
  t.equal(hits.filter((e) => /^biblioth[eè]que/i.test(e.name)).length, 11, 'French names match the English word');
  const five = store.search({ q: 'library', province: 'QC', locality: 'Gatineau', kind: 'Library', limit: 5 });
  t.same(
    five.map((e) => e.id),
    hits.slice(0, 5).map((e) => e.id),
    'limit=5 (the README) returns the first five of them',
  );
});

t.test('issue 13: accents fold and kind words match in French and English', async (t) => {
  const { db: d, store } = db();
  t.teardown(() => d.close());
  const ids = (q: string, extra: object = {}) => store.search({ q, limit: 20, ...extra }).map((e) => e.id).sort();
  t.same(ids('bibliotheque', { locality: 'gatineau', province: 'Québec' }), ids('Bibliothèque', { locality: 'Gatineau', province: 'QC' }), 'accents and case ignored everywhere');
  t.same(ids('bibliothèque', { locality: 'Gatineau', province: 'QC' }), ids('library', { locality: 'Gatineau', province: 'QC' }), 'bibliothèque = library');
  const hull = store.search({ q: 'hospital hull', limit: 5 }).map((e) => e.name);
  t.ok(hull.includes('Hôpital De Hull'), `"hospital" finds "Hôpital": ${hull.join(', ')}`);
  t.same(ids('hopital hull'), ids('hospital hull'), 'hôpital = hospital');
  const musee = store.search({ q: 'musée', locality: 'Montréal', limit: 20 });
  t.ok(musee.length > 0 && musee.every((e) => e.kind === 'Museum' || /mus[eé]e|museum/i.test(e.name)));
  t.same(ids('gabrielle roy'), ids('GABRIELLE-ROY'), 'punctuation and case fold');
  t.same(ids('', { kind: 'bibliothèque', locality: 'Gatineau' }), ids('', { kind: 'Library', locality: 'Gatineau' }), 'kind accepts a kind word too');
});

t.test('issue 13: one establishment from ODCAF and the city page is one entity; every source keeps its licence', async (t) => {
  const { db: d, store } = db();
  t.teardown(() => d.close());
  const before = store.search({ q: 'bibliothèque gabrielle roy', limit: 10 });
  t.equal(before.length, 2, 'Québec City and Laval have one each in ODCAF');
  const quebec = before.find((e) => e.address.locality === 'Québec City')!;
  const laval = before.find((e) => e.address.locality === 'Laval')!;
  t.ok(quebec && laval);

  const origin = 'https://www.ville.quebec.qc.ca';
  const html = readFileSync(PAGE_FILE, 'utf8').replaceAll('{{ORIGIN}}', origin);
  const blocks = [...html.matchAll(/<script type="application\/ld\+json">([\s\S]*?)<\/script>/g)].map((m) => m[1]!);
  const nodes = readJsonLd(blocks).entities;
  const url = `${origin}/bibliotheques/gabrielle-roy.html`;
  const out = store.observePageDetailed({ pageRef: 4242, url }, nodes, '2026-11-20T10:00:00.000Z');
  t.same(out[0], { ok: true, id: quebec.id, outcome: 'merged' }, 'the page joins the ODCAF record (same name, 120 m apart)');

  const merged = store.get(quebec.id)!;
  t.same(merged.sources.map((s) => s.type).sort(), ['dataset', 'page']);
  const ds = merged.sources.find((s) => s.type === 'dataset')!;
  const pg = merged.sources.find((s) => s.type === 'page')!;
  t.equal(ds.source_id, 'odcaf:row:893');
  t.same(ds.licence, { name: OGL_CANADA.name, url: OGL_CANADA.url, statement: OGL_CANADA.attribution });
  t.same(pg.licence, { name: null, url: null, statement: PAGE_LICENCE_NOTE });
  t.equal(merged.address.postal_code, 'G1K 3B2', 'the page states the postal code');
  t.ok(merged.observations.some((o) => o.field === 'address.locality' && o.value === 'Québec City' && o.source_id === ds.source_id), 'the dataset observation stays');
  t.ok(merged.observations.some((o) => o.field === 'address.locality' && o.value === 'Québec' && o.source_id === pg.source_id), 'the page observation too');
  t.equal(store.get(laval.id)!.sources.length, 1, "Laval's library of the same name is another establishment");
  t.equal(store.search({ q: 'gabrielle roy', kind: 'Library', limit: 10 }).length, 2, 'two libraries, not three records');

  // last_verified_at: when a source confirmed it, not when svc imported it.
  t.equal(ds.verified_at, '2020-10-01T00:00:00.000Z', 'ODCAF v1.0 release');
  t.not(ds.observed_at, ds.verified_at, 'the import time is observed_at');
  t.equal(pg.verified_at, '2026-11-20T10:00:00.000Z', 'the page fetch');
  t.equal(merged.last_verified_at, '2026-11-20T10:00:00.000Z', 'the newest confirmation');
  t.equal(laval.last_verified_at, '2020-10-01T00:00:00.000Z', 'a dataset-only record was last confirmed by the release');
});

t.test('issue 13: --as-of sets when the source confirmed its rows; a bad date is a usage error', async (t) => {
  const d2 = t.testdir({ 'odcaf.csv': odcafSample() });
  t.equal(await entitiesCommand(['import', '--odcaf', join(d2, 'odcaf.csv'), '--as-of', '2024-05-01', '--data-dir', d2], quiet()), 0);
  const s = openStateDb(join(d2, 'state.sqlite'));
  t.teardown(() => s.close());
  const rec = new EntityStore(s).search({ q: 'lucien lalonde', limit: 1 })[0]!;
  t.equal(rec.last_verified_at, '2024-05-01T00:00:00.000Z');
  t.equal(await entitiesCommand(['import', '--odcaf', join(d2, 'odcaf.csv'), '--as-of', 'yesterday', '--data-dir', d2], quiet()), 2);
});

/** A small ODCAF file: the header and the Gatineau rows of the real one. */
function odcafSample(): string {
  const text = gunzipSync(readFileSync(ODCAF)).toString('utf8').split('\n');
  return [text[0], ...text.filter((l) => /,gatineau,qc,/.test(l))].join('\n') + '\n';
}
