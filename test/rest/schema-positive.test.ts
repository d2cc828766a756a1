/**
 * Issue 46 item 3: the schema is honest. Values generated only from the positive side of the served OpenAPI
 * document (every bound, pattern, enum and format it states) are never refused as invalid: no 422 on REST, and the
 * same arguments over /mcp are never a validation_failed result. A caller may still hear 400 for a URL or host the
 * schema cannot describe (a host that is not public), 404 for an id that does not exist, and nothing else.
 */
import fc from 'fast-check';
import t from 'tap';
import { VERSION } from '../../main.js';
import { buildOpenApi } from '../../rest/openapi.js';
import { allTools } from '../../tools/registry.js';
import { startTestService } from '../helpers/service.js';

type Schema = Record<string, unknown>;
interface Parameter {
  name: string;
  in: 'query' | 'path' | 'header';
  required: boolean;
  schema: Schema;
}
interface Operation {
  parameters: Parameter[];
  requestBody?: { content: { 'application/json': { schema: Schema } } };
}

const RUNS = Number(process.env.FUZZ_RUNS ?? 40);

/** Values the schema admits, as a schema-driven client (schemathesis' positive phase) would generate them. */
function valid(schema: Schema): fc.Arbitrary<unknown> {
  if (Array.isArray(schema.enum)) return fc.constantFrom(...(schema.enum as unknown[]));
  if (Array.isArray(schema.anyOf)) return fc.oneof(...(schema.anyOf as Schema[]).map(valid));
  const type = Array.isArray(schema.type) ? (schema.type as string[])[0] : (schema.type as string | undefined);
  const minLength = Number(schema.minLength ?? 0);
  const maxLength = Number(schema.maxLength ?? 1e9);
  const fits = (s: string) => s.length >= minLength && s.length <= maxLength;
  switch (type) {
    case 'string':
      if (schema.format === 'uri') return fc.webUrl({ withQueryParameters: true, withFragments: true }).filter(fits);
      if (typeof schema.pattern === 'string') return fc.stringMatching(new RegExp(schema.pattern as string)).filter(fits);
      return fc.string({ minLength, maxLength: Math.min(maxLength, 60), unit: 'grapheme' });
    case 'integer':
      return fc.integer({ min: Number(schema.minimum ?? -(2 ** 31)), max: Number(schema.maximum ?? 2 ** 31 - 1) });
    case 'number':
      return fc.double({ min: Number(schema.minimum ?? -1e6), max: Number(schema.maximum ?? 1e6), noNaN: true });
    case 'boolean':
      return fc.boolean();
    case 'array':
      return fc.array(valid((schema.items as Schema | undefined) ?? {}), { maxLength: 4 });
    default:
      return fc.string({ maxLength: 20 });
  }
}

const headerValue = (schema: Schema): fc.Arbitrary<string> =>
  fc.stringMatching(/^[!-~]+$/).filter((v) => v.length >= Number(schema.minLength ?? 0) && v.length <= Number(schema.maxLength ?? 1e9));

const text = (v: unknown): string => (typeof v === 'string' ? v : JSON.stringify(v));

t.test('issue 46 item 3: values from the positive side of the OpenAPI schema never get 422 (REST and MCP)', async (t) => {
  const s = await startTestService({ perMinute: 1_000_000, perDay: 100_000_000, config: { submissionsPerDay: 1_000_000 } });
  t.teardown(s.close);
  const doc = buildOpenApi(allTools, VERSION) as { paths: Record<string, Record<string, Operation>> };
  const seen = new Map<number, number>();
  for (const [template, methods] of Object.entries(doc.paths)) {
    for (const [method, op] of Object.entries(methods)) {
      const group = (where: Parameter['in']) =>
        fc.record(
          Object.fromEntries(
            op.parameters
              .filter((p) => p.in === where)
              .map((p) => {
                // A header value is visible ASCII (RFC 9110 field-value), as schema-driven clients generate it.
                const arb = where === 'header' ? headerValue(p.schema) : valid(p.schema);
                return [p.name, p.required || where === 'path' ? arb : fc.option(arb, { nil: undefined })];
              }),
          ),
        );
      const bodySchema = op.requestBody?.content['application/json'].schema;
      const required = new Set((bodySchema?.required as string[] | undefined) ?? []);
      const body = bodySchema
        ? fc.record(
            Object.fromEntries(
              Object.entries((bodySchema.properties ?? {}) as Record<string, Schema>).map(([k, sch]) => [
                k,
                required.has(k) ? valid(sch) : fc.option(valid(sch), { nil: undefined }),
              ]),
            ),
          )
        : fc.constant(null);
      await fc.assert(
        fc.asyncProperty(fc.record({ path: group('path'), query: group('query'), header: group('header'), body }), async (req) => {
          let path = template;
          for (const [k, v] of Object.entries(req.path)) path = path.replace(`{${k}}`, encodeURIComponent(text(v)));
          const qs = new URLSearchParams();
          for (const [k, v] of Object.entries(req.query)) if (v !== undefined) qs.append(k, text(v));
          const headers: Record<string, string> = { authorization: `Bearer ${s.key}` };
          for (const [k, v] of Object.entries(req.header)) if (v !== undefined) headers[k] = text(v);
          let payload: string | undefined;
          if (req.body !== null) {
            headers['content-type'] = 'application/json';
            payload = JSON.stringify(req.body);
          }
          const res = await fetch(`${s.url}${path}${qs.size > 0 ? `?${qs}` : ''}`, {
            method: method.toUpperCase(),
            headers,
            body: payload,
          });
          const answer = await res.text();
          seen.set(res.status, (seen.get(res.status) ?? 0) + 1);
          const where = `${method.toUpperCase()} ${path}?${qs} ${payload ?? ''} → ${res.status} ${answer.slice(0, 300)}`;
          if (res.status === 422 || res.status >= 500) throw new Error(`schema-valid input refused: ${where}`);
          if (res.status >= 300 && ![400, 404].includes(res.status)) throw new Error(`unexpected status: ${where}`);
        }),
        { numRuns: RUNS, seed: Number(process.env.FUZZ_SEED ?? 46), endOnFailure: true },
      );
    }
  }
  t.ok((seen.get(200) ?? 0) + (seen.get(202) ?? 0) > 0, `answers by status: ${JSON.stringify(Object.fromEntries(seen))}`);
  t.equal(seen.get(422) ?? 0, 0, 'no 422');
});

t.test('issue 46 item 3: tools/list input schemas: schema-valid arguments are never validation_failed over MCP', async (t) => {
  const s = await startTestService({ perMinute: 1_000_000, perDay: 100_000_000, config: { submissionsPerDay: 1_000_000 } });
  t.teardown(s.close);
  const { toolJsonSchemas } = await import('../../tools/json-schema.js');
  let id = 0;
  for (const tool of allTools.filter((x) => !x.enabled || x.enabled(s.config))) {
    const input = toolJsonSchemas(tool).input;
    const required = new Set(input.required ?? []);
    const args = fc.record(
      Object.fromEntries(
        Object.entries(input.properties ?? {}).map(([k, sch]) => [
          k,
          required.has(k) ? valid(sch) : fc.option(valid(sch), { nil: undefined }),
        ]),
      ),
    );
    await fc.assert(
      fc.asyncProperty(args, async (a) => {
        const res = await fetch(`${s.url}/mcp`, {
          method: 'POST',
          headers: {
            authorization: `Bearer ${s.key}`,
            'content-type': 'application/json',
            accept: 'application/json, text/event-stream',
            'mcp-protocol-version': '2025-11-25',
          },
          body: JSON.stringify({ jsonrpc: '2.0', id: ++id, method: 'tools/call', params: { name: tool.name, arguments: a } }),
        });
        const msg = (await res.json()) as { error?: unknown; result?: { isError?: boolean; content: { text: string }[] } };
        const where = `${tool.name} ${JSON.stringify(a).slice(0, 300)} → ${JSON.stringify(msg).slice(0, 300)}`;
        if (res.status !== 200 || msg.error) throw new Error(`not a tool result: ${where}`);
        if (msg.result?.isError) {
          const p = JSON.parse(msg.result.content[0]!.text) as { status: number };
          if (p.status === 422 || p.status >= 500) throw new Error(`schema-valid arguments refused: ${where}`);
        }
      }),
      { numRuns: Math.ceil(RUNS / 2), seed: Number(process.env.FUZZ_SEED ?? 46), endOnFailure: true },
    );
  }
  t.pass('no schema-valid call was refused as invalid');
});
