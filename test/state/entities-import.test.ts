/**
 * `svc entities import`: the CLI (arguments, counts, exit codes) and the ODEF / ODBus column mappings. ODEF and ODBus
 * samples are not available here, so their files are written from the published column layouts (ODEF v2.x:
 * Statistics Canada LODE script output; ODBus v1: the 32 columns of ODBus_v1.csv) with made-up rows.
 */
import t from 'tap';
import { join } from 'node:path';
import { writeFileSync } from 'node:fs';
import { Writable } from 'node:stream';
import { entitiesCommand } from '../../cli/entities.js';
import { openStateDb } from '../../state/db.js';
import { EntityStore } from '../../state/entities.js';

function io() {
  const out: string[] = [];
  const err: string[] = [];
  const sink = (arr: string[]) =>
    new Writable({
      write(chunk: Buffer, _e, cb) {
        arr.push(chunk.toString('utf8'));
        cb();
      },
    });
  return { io: { stdout: sink(out), stderr: sink(err), env: {} }, out, err };
}

const ODEF_HEADER =
  'Index,Source_ID,Facility_Name,Facility_Type,Authority_Name,ISCED010,ISCED020,ISCED1,ISCED2,ISCED3,ISCED4Plus,OLMS_Status,Full_Addr,Unit,Street_No,Street_Name,City,Prov_Terr,Postal_Code,Provider,Latitude,Longitude,Geo_Source,CSDUID,CSDNAME,PRUID';
const ODEF_ROWS = [
  '9b5765dc757079c8a5de,S1,École Champlain,Elementary,CSDC,1,1,1,0,0,0,..,..,..,12,rue des Pins,Gatineau,QC,J8T 1A1,Quebec,45.49,-75.7,Source,2481017,Gatineau,24',
  'a1,S2,Lakeshore Collegiate,Secondary,TDSB,0,0,0,0,1,0,..,..,..,350,Kipling Ave,Toronto,ON,M8V 3L1,Ontario,43.6,-79.5,Source,3520005,Toronto,35',
  'a2,S3,Collège Example,Post-secondary,..,0,0,0,0,0,1,..,..,..,1,Main St,Halifax,NS,B3H 1A1,Nova Scotia,..,..,..,..,..,12',
  'a3,S4,K-12 Academy,K-12,..,0,1,1,1,1,0,..,..,..,..,..,Regina,SK,S4P 3Y2,Saskatchewan,..,..,..,..,..,47',
];
const ODBUS_HEADER =
  'idx,business_name,alt_business_name,business_sector,business_subsector,business_description,business_id_no,licence_number,licence_type,derived_NAICS,source_NAICS_primary,source_NAICS_secondary,NAICS_descr,NAICS_descr2,latitude,longitude,full_address,postal_code,unit,street_no,street_name,street_direction,street_type,city,prov_terr,total_no_employees,status,provider,geo_source,CSDUID,CSDNAME,PRUID';
const ODBUS_ROWS = [
  '8bcde34e196bcbb440a2,Healthconnect Pharmacy,..,Community Pharmacy,..,..,..,..,..,44,446110,..,..,..,46.09593,-64.87099,"10 Desbrisay Avenue, Unit 2, Moncton Nb",..,Unit 2,10,Desbrisay Avenue,..,..,Moncton,NB,..,..,City of Moncton,Source,1307022,Moncton,13',
  // Same idx twice (ODBus v1 repeats ids): two sources, kept apart by occurrence.
  'dup1,Café Central,..,Restaurant,..,..,..,..,..,72,722511,..,..,..,..,..,..,V6B 1A1,..,100,Main St,..,..,Vancouver,BC,..,Active,City of Vancouver,..,..,..,59',
  'dup1,Café Central,..,Restaurant,..,..,..,..,..,72,722511,..,..,..,..,..,..,V6B 2B2,..,200,Main St,..,..,Vancouver,BC,..,Active,City of Vancouver,..,..,..,59',
  // Two branches of a chain in one city without postal codes: different streets → two entities.
  'c1,Coffee Chain,..,..,..,..,..,..,..,72,..,..,..,..,..,..,..,..,..,1,King St,..,..,Toronto,ON,..,..,City of Toronto,..,..,..,35',
  'c2,Coffee Chain,..,..,..,..,..,..,..,72,..,..,..,..,..,..,..,..,..,9,Queen St,..,..,Toronto,ON,..,..,City of Toronto,..,..,..,35',
  'x1,Closed Shop,..,..,..,..,..,..,..,44,..,..,..,..,..,..,..,K1A 0B1,..,..,..,..,..,Ottawa,ON,..,Not Active,City of Ottawa,..,..,..,35',
  'x2,No Sector Ltd,..,..,..,..,..,..,..,..,..,..,..,..,..,..,..,T2P 1J9,..,..,..,..,..,Calgary,AB,..,Pending,City of Calgary,..,..,..,48',
];

t.test('issue 5: ODEF import (ISCED levels → school types), idempotent', async (t) => {
  const dir = t.testdir();
  const file = join(dir, 'odef.csv');
  writeFileSync(file, `${ODEF_HEADER}\n${ODEF_ROWS.join('\n')}\n`);
  const a = io();
  t.equal(await entitiesCommand(['import', '--odef', file, '--data-dir', dir], a.io), 0);
  t.match(a.out.join(''), /Open Database of Educational Facilities: read 4, admitted 4, merged 0, updated 0, rejected 0/);
  const b = io();
  t.equal(await entitiesCommand(['import', `--odef=${file}`, `--data-dir=${dir}`], b.io), 0);
  t.match(b.out.join(''), /read 4, admitted 0, merged 0, updated 4, rejected 0/);
  const db = openStateDb(join(dir, 'state.sqlite'));
  t.teardown(() => db.close());
  const s = new EntityStore(db);
  const kinds = Object.fromEntries(s.search({ kind: 'EducationalOrganization', limit: 20 }).map((e) => [e.name, e.kind]));
  t.same(kinds, {
    'École Champlain': 'ElementarySchool',
    'Lakeshore Collegiate': 'HighSchool',
    'Collège Example': 'CollegeOrUniversity',
    'K-12 Academy': 'School',
  });
  const ec = s.search({ q: 'ecole champlain' })[0]!;
  t.equal(ec.address.province, 'CA-QC');
  t.equal(ec.sources[0]?.provenance.dataset_title, 'Open Database of Educational Facilities v2 (Statistics Canada)');
  t.equal(ec.sources[0]?.licence.name, 'Open Government Licence – Canada');
});

t.test('issue 5: ODBus import (NAICS → types, repeated idx, chain branches, inactive refused)', async (t) => {
  const dir = t.testdir();
  const file = join(dir, 'odbus.csv');
  writeFileSync(file, `\uFEFF${ODBUS_HEADER}\r\n${ODBUS_ROWS.join('\r\n')}\r\n`);
  const a = io();
  t.equal(await entitiesCommand(['import', '--odbus', file, '--data-dir', dir], a.io), 0);
  t.match(a.out.join(''), /Open Database of Businesses: read 7, admitted 6, merged 0, updated 0, rejected 1 \(inactive 1\)/);
  const b = io();
  t.equal(await entitiesCommand(['import', '--odbus', file, '--data-dir', dir], b.io), 0);
  t.match(b.out.join(''), /read 7, admitted 0, merged 0, updated 6, rejected 1/, 'repeated idx stays idempotent');
  const db = openStateDb(join(dir, 'state.sqlite'));
  t.teardown(() => db.close());
  const s = new EntityStore(db);
  t.equal(s.search({ q: 'healthconnect' })[0]?.kind, 'Pharmacy');
  t.equal(s.search({ q: 'healthconnect' })[0]?.address.street, 'Unit 2-10 Desbrisay Avenue');
  t.equal(s.search({ q: 'cafe central' }).length, 2, 'same idx, different places: two entities');
  t.equal(s.search({ q: 'coffee chain', locality: 'toronto' }).length, 2, 'branches on different streets are not merged');
  t.equal(s.search({ q: 'no sector' })[0]?.kind, 'LocalBusiness');
  t.equal(s.search({ q: 'closed shop' }).length, 0);
  t.equal(s.search({ kind: 'FoodEstablishment', province: 'BC' }).length, 2);
});

t.test('CLI: usage, wrong file, missing columns → clear messages and exit codes', async (t) => {
  const dir = t.testdir();
  const cases: [string[], number, RegExp][] = [
    [[], 2, /usage: svc entities import/],
    [['export'], 2, /usage/],
    [['import'], 2, /usage/],
    [['import', '--odhf'], 2, /usage/],
    [['import', '--odhf', 'a.csv', '--odcaf', 'b.csv'], 2, /exactly one/],
    [['import', '--nope', 'x'], 2, /unknown argument --nope/],
    [['import', '--odhf', join(dir, 'missing.csv.gz'), '--data-dir', dir], 1, /no such file/],
  ];
  for (const [argv, code, msg] of cases) {
    const c = io();
    t.equal(await entitiesCommand(argv, c.io), code, argv.join(' '));
    t.match(c.err.join(''), msg);
  }
  const wrong = join(dir, 'wrong.csv');
  writeFileSync(wrong, 'a,b,c\n1,2,3\n');
  const c = io();
  t.equal(await entitiesCommand(['import', '--odbus', wrong, '--data-dir', dir], c.io), 1);
  t.match(c.err.join(''), /does not look like Open Database of Businesses v1\.0: missing column\(s\) idx, business_name/);
  const h = io();
  t.equal(await entitiesCommand(['--help'], h.io), 0);
  t.match(h.out.join(''), /--odef FILE/);
});
