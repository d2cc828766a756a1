/**
 * Issue 10 (entities on PostgreSQL) and issue 11 (JSON-LD parse errors): two service instances on one real
 * PostgreSQL share one entity store. Replica A crawls ville-quebec.test (its crawler's entity sink writes to the
 * database) and `svc entities import` loads ODCAF's Gatineau rows with SVC_DATABASE_URL; replica B, which crawled
 * and imported nothing, answers svc_entities through the real MCP SDK client and REST with both, and webmaster
 * diagnostics read the parse errors A's crawler recorded.
 */
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import t from 'tap';
import { entitiesCommand } from '../../cli/entities.js';
import { startTestWeb } from '../../fixtures/test-web/index.js';
import type { EntityRecord } from '../../state/entities.js';
import { propertyDiagnostics } from '../../webmaster/diagnostics.js';
import { api, startTestService } from '../helpers/service.js';
import { postgresUnavailable, startPostgres } from '../helpers/postgres-server.js';
import { odcafGatineau, quietIo } from '../state/entities-contract.js';

const why = postgresUnavailable();
if (why) {
  if (process.env.CI) t.fail(`issue 10: PostgreSQL tests cannot run: ${why}`);
  else t.test('entities on PostgreSQL replicas', { skip: why }, async () => undefined);
} else {
  t.test('issue 10: entities crawled by one replica and imported by the CLI are answered by the other (MCP and REST)', async (t) => {
    const server = await startPostgres();
    t.teardown(() => server.stop());
    const url = await server.createDatabase('entities_replicas');
    const web = await startTestWeb({ generatedHosts: 0 });
    t.teardown(() => web.close());
    const a = await startTestService({
      perMinute: 1000,
      config: { databaseUrl: url, crawl: true, resolve: web.pins, crawlAllowLoopback: true, crawlGapMs: 10 },
    });
    t.teardown(a.close);
    const b = await startTestService({ perMinute: 1000, config: { databaseUrl: url } });
    t.teardown(b.close);

    // Import through the CLI into the database, and crawl through replica A.
    const file = join(a.dataDir, 'odcaf-gatineau.csv');
    writeFileSync(file, odcafGatineau());
    t.equal(await entitiesCommand(['import', '--odcaf', file, '--data-dir', a.dataDir], quietIo({ SVC_DATABASE_URL: url })), 0);
    const crawler = a.services.crawler!;
    const page = web.url('ville-quebec.test', '/bibliotheques/gabrielle-roy.html');
    const broken = web.url('ville-quebec.test', '/bibliotheques/json-casse.html');
    await crawler.enqueue(page, { priority: 'submitted', reason: 'seed' });
    await crawler.enqueue(broken, { priority: 'submitted', reason: 'seed' });
    const stats = await crawler.runUntilIdle({ maxPages: 2, timeoutMs: 30_000, idleHorizonMs: 300 });
    t.ok(stats.indexed >= 2, `A indexed ${stats.indexed} pages`);

    // B answers over MCP (the real SDK client) and REST alike, from the shared store.
    const client = new Client({ name: 'replica-b', version: '1' });
    await client.connect(
      new StreamableHTTPClientTransport(new URL(b.url + '/mcp'), { requestInit: { headers: { Authorization: `Bearer ${b.key}` } } }),
    );
    t.teardown(() => client.close());
    const viaMcp = async (args: Record<string, unknown>): Promise<EntityRecord[]> => {
      const r = await client.callTool({ name: 'svc_entities', arguments: args });
      t.notOk(r.isError, `svc_entities ${JSON.stringify(args)}`);
      return (r.structuredContent as { entities: EntityRecord[] }).entities;
    };
    const crawled = await viaMcp({ q: 'gabrielle roy', kind: 'Library', detail: 'full' });
    t.equal(crawled.length, 1, 'the library A crawled');
    t.match(crawled[0], { name: 'Bibliothèque Gabrielle-Roy', address: { postal_code: 'G1K 3B2', province: 'CA-QC' } });
    t.same(
      crawled[0]!.sources.map((s) => [s.type, s.provenance.page_url]),
      [['page', page]],
      'with the page it came from',
    );
    const imported = await viaMcp({ q: 'library', province: 'QC', locality: 'Gatineau', kind: 'Library', limit: 20, detail: 'full' });
    t.equal(imported.length, 12, 'the 12 Gatineau libraries the CLI imported');
    t.ok(imported.every((e) => e.sources.every((s) => s.type === 'dataset' && s.licence.name === 'Open Government Licence – Canada')));
    const rest = await api(b, `/api/v1/entities/${crawled[0]!.id}?detail=full`);
    t.equal(rest.status, 200);
    t.same(rest.body, crawled[0], 'REST on B gives the same record');
    const onA = await api(a, '/api/v1/entities?q=library&province=QC&locality=Gatineau&kind=Library&limit=20');
    t.same(
      (onA.body as { entities: EntityRecord[] }).entities.map((e) => e.id),
      imported.map((e) => e.id),
      'A answers the same',
    );
    // Nothing went to either replica's own SQLite file.
    for (const s of [a, b])
      t.same(
        s.services.local.entities.counts(),
        { entities: 0, sources: 0, pageSources: 0, datasetSources: 0 },
        'no entity in the local file',
      );

    // Issue 11: the broken block A's crawler met is in the database, and diagnostics report it with provenance.
    const held = await b.services.deps.repos.entities!.parseErrors(['ville-quebec.test']);
    t.match(held, [{ url: broken, host: 'ville-quebec.test', reason: 'invalid_json', blocks: 1 }]);
    t.equal(held.length, 1);
    const { property } = await a.services.deps.repos.webmaster.createProperty({
      account: 'acct_q',
      kind: 'host',
      name: 'ville-quebec.test',
      at: new Date().toISOString(),
    });
    const d = await propertyDiagnostics({ repos: b.services.deps.repos, index: a.services.deps.index }, property);
    t.same(d.structuredData.jsonLdParseErrors, held, 'diagnostics equal what PostgreSQL holds');
  });
}
