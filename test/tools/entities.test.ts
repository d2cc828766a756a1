import t, { type Test } from 'tap';
import { join } from 'node:path';
import { loadConfig } from '../../config.js';
import { createLogger } from '../../logger.js';
import { openStateDb } from '../../state/db.js';
import { sqliteEntities, sqliteRepositories } from '../../state/repos/sqlite.js';
import { EntityStore } from '../../state/entities.js';
import type { PassageIndex } from '../../index/engines/lance/store.js';
import { callTool } from '../../tools/call-tool.js';
import type { ServiceDeps } from '../../tools/deps.js';
import { entitiesTool } from '../../tools/entities.js';
import type { SvcError } from '../../errors.js';

function setup(t: Test) {
  const dir = t.testdir();
  const db = openStateDb(join(dir, 'state.sqlite'));
  t.teardown(() => db.close());
  const entities = new EntityStore(db);
  const deps: ServiceDeps = {
    config: loadConfig({ env: {}, flags: { dataDir: dir } }),
    repos: sqliteRepositories(db),
    log: createLogger({ level: 'silent' }),
    now: () => new Date(),
    index: null as unknown as PassageIndex, // svc_entities reads the entity store only
    entities: sqliteEntities(entities),
    crawler: null,
  };
  return { entities, ctx: { deps, caller: { keyId: 'k', digest: 'd' } } };
}

const err = (p: Promise<unknown>) =>
  p.then(
    () => null,
    (e: SvcError) => e,
  );

t.test('svc_entities: empty store → well-formed empty result', async (t) => {
  const { ctx } = setup(t);
  const out = await callTool(entitiesTool, {}, ctx);
  t.same(out.entities, []);
  t.match(out.notice, /grants no licence/);
});

t.test('svc_entities: filters, kind subtypes, id lookup, bounds', async (t) => {
  const { ctx, entities } = setup(t);
  const at = '2026-01-01T00:00:00.000Z';
  entities.observePage(
    { pageRef: 1, url: 'https://clinic.example.ca/', host: 'clinic.example.ca', lang: 'fr' },
    [
      {
        '@type': 'Dentist',
        name: 'Clinique dentaire Saint-Roch',
        address: { addressLocality: 'Québec', addressRegion: 'QC', postalCode: 'G1K 3B2' },
      },
      {
        '@type': 'Hospital',
        name: 'Hôpital Saint-Sacrement',
        address: { addressLocality: 'Québec', addressRegion: 'Québec', postalCode: 'G1S 4L8' },
      },
      {
        '@type': 'Library',
        name: 'Bibliothèque Saint-Roch',
        address: { addressLocality: 'Sherbrooke', addressRegion: 'QC', postalCode: 'J1H 1A1' },
      },
    ],
    at,
  );
  const med = await callTool(entitiesTool, { kind: 'MedicalOrganization' }, ctx);
  t.same(med.entities.map((e) => e.kind).sort(), ['Dentist', 'Hospital'], 'schema.org: both descend from MedicalOrganization');
  const mb = await callTool(entitiesTool, { kind: 'MedicalBusiness' }, ctx);
  t.same(
    mb.entities.map((e) => e.kind),
    ['Dentist'],
  );
  const lb = await callTool(entitiesTool, { kind: 'CivicStructure', locality: 'QUÉBEC' }, ctx);
  t.same(
    lb.entities.map((e) => e.kind),
    ['Hospital'],
    'locality compares without accents or case',
  );
  const sh = await callTool(entitiesTool, { locality: 'sherbrooke' }, ctx);
  t.same(
    sh.entities.map((e) => e.name),
    ['Bibliothèque Saint-Roch'],
  );
  const roch = await callTool(entitiesTool, { q: 'saint roch', province: 'CA-QC', limit: 1 }, ctx);
  t.equal(roch.entities.length, 1);
  const one = await callTool(entitiesTool, { id: roch.entities[0]!.id, detail: 'default' }, ctx);
  t.same(one.entities, roch.entities, 'by id with detail "default": the brief record of the list');
  t.equal((await err(callTool(entitiesTool, { id: 'ent_missing' }, ctx)))?.code, 'not_found');
  for (const bad of [{ limit: 21 }, { limit: 0 }, { province: 'Texas' }, { province: '00' }, { q: '' }, { q: 'x'.repeat(201) }]) {
    t.equal((await err(callTool(entitiesTool, bad, ctx)))?.code, 'validation_failed', JSON.stringify(bad));
  }
  // Issue 46: a schema-valid kind or q that names nothing matches nothing (no 422 the schema could not predict).
  t.same((await callTool(entitiesTool, { kind: 'Spaceship' }, ctx)).entities, []);
  t.same((await callTool(entitiesTool, { q: '!!!' }, ctx)).entities, []);
  t.equal(entitiesTool.rest[0].path, '/entities');
  t.equal(entitiesTool.rest[1]?.path, '/entities/:id');
  for (const [name, field] of Object.entries(entitiesTool.input.shape))
    t.ok((field as { description?: string }).description, `${name} described`);
});
