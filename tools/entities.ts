/**
 * svc_entities / GET /api/v1/entities and GET /api/v1/entities/{id}: Canadian establishments, organizations and
 * places, merged from page JSON-LD and Statistics Canada open data, each with provenance, licence and
 * observations per source (docs/api-entities.md).
 */
import { z } from 'zod';
import { SvcError } from '../errors.js';
import { EntityQueryError, PAGE_LICENCE_NOTE, type EntityRecord } from '../state/entities.js';
import { DETAIL_LEVELS, provinceFilterSchema, type Detail } from './common-schemas.js';
import { defineTool } from './define-tool.js';

const addressSchema = z
  .object({
    street: z.string().nullable().describe('Street address, or null.'),
    locality: z.string().nullable().describe('City, town or municipality, or null.'),
    province: z.string().nullable().describe('ISO 3166-2:CA code of the province or territory (e.g. "CA-QC"), or null.'),
    postal_code: z.string().nullable().describe('Canadian postal code ("A1A 1A1"), or null.'),
    country: z.literal('CA').describe('Always CA: only Canadian establishments are admitted.'),
  })
  .describe('Postal address (each field from the most recent source that states it).');

export const entitySchema = z
  .object({
    id: z.string().describe('Durable entity id (ent_…): stable across recrawls and re-imports. Fetch one with GET /api/v1/entities/{id}.'),
    name: z.string().describe('Name as the most recent source gives it.'),
    kind: z.string().describe('schema.org type (the most specific any source declares), e.g. Hospital, Library, LocalBusiness.'),
    address: addressSchema,
    geo: z
      .object({ lat: z.number().describe('Latitude (WGS 84).'), lon: z.number().describe('Longitude (WGS 84).') })
      .nullable()
      .describe('Coordinates, or null.'),
    telephone: z.string().nullable().describe('Telephone as declared, or null.'),
    url: z.string().nullable().describe('Web site the establishment declares, or null.'),
    source_ids: z
      .array(z.string())
      .describe(
        'Ids of the sources of this record ("odcaf:row:…", "odhf:row:…" for open data, "page:…" for a crawled page); by id, or with detail "full", each comes with provenance and licence.',
      ),
    observations: z
      .array(
        z.object({
          field: z.string().describe('Which fact (name, kind, address.street, address.postal_code, geo.lat, telephone, url, …).'),
          value: z.union([z.string(), z.number()]).describe('The value this source states.'),
          source_id: z.string().describe('The source (see sources[].source_id).'),
          observed_at: z.string().describe('When svc observed it (ISO 8601).'),
        }),
      )
      .optional()
      .describe(
        '[by id, or detail "full"] Every fact as each source stated it. Declared data is an observation of its source, not guaranteed by svc.',
      ),
    sources: z
      .array(
        z.object({
          source_id: z.string().describe('Stable id of this source statement.'),
          type: z.enum(['page', 'dataset']).describe('page: schema.org JSON-LD on a crawled page; dataset: an open-data row.'),
          provenance: z
            .object({
              page_url: z.string().nullable().describe('The page that declared it (page sources).'),
              page_ref: z.number().int().nullable().describe('page_ref of that page (page sources).'),
              dataset: z.string().nullable().describe('Dataset id, e.g. odhf, odcaf (dataset sources).'),
              dataset_title: z.string().nullable().describe('Dataset title, version and publisher.'),
              row_id: z.string().nullable().describe('Row index in the dataset.'),
            })
            .describe('Where the facts come from.'),
          licence: z
            .object({
              name: z
                .string()
                .nullable()
                .describe('Licence name (Open Government Licence – Canada for the open databases); null for pages.'),
              url: z.string().nullable().describe('Licence URL; null for pages.'),
              statement: z.string().describe('Attribution statement, or for pages: no licence is granted by a page’s own declaration.'),
            })
            .describe('Licence of this source.'),
          observed_at: z.string().describe('When svc last observed this source (ISO 8601).'),
          verified_at: z
            .string()
            .describe('When the source itself last confirmed it: the page fetch, or the dataset version’s release date (ISO 8601).'),
        }),
      )
      .optional()
      .describe('[by id, or detail "full"] Each source with provenance and licence.'),
    last_verified_at: z
      .string()
      .describe(
        'When a source last confirmed this record: the newest verified_at of its sources (a page fetch, an open-data release), not an import time (ISO 8601).',
      ),
  })
  .describe('A structured Canadian establishment, organization or place.');

const input = z.object({
  q: z
    .string()
    .min(1)
    .max(200)
    .optional()
    .describe('Name words, accents and case ignored, last word a prefix ("gabrielle roy"). Kind words (library, hôpital) match that kind.'),
  province: provinceFilterSchema.optional().describe('Province or territory: code ("QC", "CA-QC") or English/French name.'),
  locality: z.string().min(1).max(100).optional().describe('City or municipality, exact name (accents and case ignored).'),
  kind: z
    .string()
    .min(2)
    .max(60)
    .optional()
    .describe('schema.org type, subtypes included (MedicalOrganization finds Hospital), or a kind word (library, hôpital).'),
  limit: z.number().int().min(1).max(20).default(10).describe('Records to return.'),
  id: z.string().min(1).max(64).optional().describe('A durable entity id (ent_…): just that record; other filters ignored.'),
  // Optional, not defaulted: by id the durable record is the point (spec §4: provenance, licence, observations,
  // verification time), so there it defaults to "full"; a list stays brief unless asked.
  detail: z
    .enum(DETAIL_LEVELS)
    .optional()
    .describe('"full" adds provenance, licence and observations per source. Default: "full" by id, brief for a list.'),
});

/**
 * The record as returned: brief, the facts, last_verified_at and the source ids (within the budget
 * test/tools/token-budgets.test.ts holds); "full" (the default by id) adds provenance, licences and observations.
 */
function shape(rec: EntityRecord, detail: Detail): z.input<typeof entitySchema> {
  const { observations, sources, ...facts } = rec;
  const brief = { ...facts, source_ids: sources.map((x) => x.source_id) };
  return detail === 'full' ? { ...brief, observations, sources } : brief;
}

const output = z.object({
  entities: z.array(entitySchema).describe('Matching records (best name match first when q is given, else by name). Empty when none.'),
  notice: z
    .string()
    .describe(
      'How to read licences: open-data sources are under the Open Government Licence – Canada; page declarations grant no licence.',
    ),
});

export const ENTITY_NOTICE = `Open-data sources: Open Government Licence – Canada (attribution in each source). ${PAGE_LICENCE_NOTE}`;

const field = (e: EntityQueryError): string => e.field;

export const entitiesTool = defineTool({
  name: 'svc_entities',
  title: 'Canadian establishments',
  description:
    'Canadian establishments (hospitals, libraries, museums, schools, businesses…) from Statistics Canada open data ' +
    'and schema.org JSON-LD on crawled pages, merged per establishment. Filter by name words, province, locality, ' +
    'kind. Each record: durable id, name, kind, address, geo, telephone, url, last_verified_at; by id also provenance.',
  input,
  output,
  annotations: { readOnlyHint: true, openWorldHint: true, idempotentHint: true },
  runsOn: 'main',
  rest: [
    { method: 'GET', path: '/entities', source: 'query', summary: 'Search Canadian establishments' },
    {
      method: 'GET',
      path: '/entities/:id',
      source: 'query',
      summary: 'One entity by durable id',
      respond: ((o: { entities: readonly unknown[] }) => o.entities[0]) as (output: never) => unknown,
    },
  ],
  run: async (inp, ctx) => {
    const store = ctx.deps.entities;
    if (inp.id !== undefined) {
      const rec = await store.get(inp.id);
      if (!rec) throw new SvcError('not_found', `no entity with id ${inp.id}`);
      return { entities: [shape(rec, inp.detail ?? 'full')], notice: ENTITY_NOTICE };
    }
    try {
      const list = await store.search({ q: inp.q, province: inp.province, locality: inp.locality, kind: inp.kind, limit: inp.limit });
      return { entities: list.map((r) => shape(r, inp.detail ?? 'default')), notice: ENTITY_NOTICE };
    } catch (e) {
      // The schema cannot list every kind word or say which text folds to no word: such a filter matches nothing
      // (an empty answer, as for any filter), never a 422 for a value the schema admits.
      if (e instanceof EntityQueryError && (e.field === 'kind' || e.field === 'q')) return { entities: [], notice: ENTITY_NOTICE };
      if (e instanceof EntityQueryError) {
        throw new SvcError('validation_failed', e.message, { errors: [{ path: [field(e)], issue: e.message }] });
      }
      throw e;
    }
  },
});
