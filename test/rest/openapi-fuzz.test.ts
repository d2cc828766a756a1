/**
 * Schema fuzzing over the served OpenAPI document (issue 12): fast-check generates requests from each operation's
 * parameter and body schemas, mixed with out-of-bounds numbers, hostile strings and unknown fields, and every
 * answer must be: not 5xx; an error as problem+json with a documented code whose status is the one answered and
 * documented for the operation; a success that validates against the documented response schema and carries the
 * X-RateLimit-* headers. The same generated arguments go to /mcp tools/call, where no call may end in -32603.
 * Bounded: FUZZ_RUNS examples per operation (default 25; about 10 s here).
 */
import { Ajv2020 } from 'ajv/dist/2020.js';
import fc from 'fast-check';
import t from 'tap';
import { errorTable } from '../../errors.js';
import { VERSION } from '../../main.js';
import { buildOpenApi } from '../../rest/openapi.js';
import { allTools } from '../../tools/registry.js';
import { startTestService, type TestService } from '../helpers/service.js';

type Schema = Record<string, unknown>;
interface Parameter {
  name: string;
  in: 'query' | 'path' | 'header';
  required: boolean;
  schema: Schema;
}
interface Operation {
  operationId: string;
  parameters: Parameter[];
  requestBody?: { content: { 'application/json': { schema: Schema } } };
  responses: Record<string, { headers?: Record<string, unknown>; content: Record<string, { schema: Schema }> }>;
}

const RUNS = Number(process.env.FUZZ_RUNS ?? 25);

const HOSTILE: readonly unknown[] = [
  '',
  ' ',
  '\u0000',
  '%',
  '%00',
  'a'.repeat(5000),
  '9'.repeat(30),
  '-1',
  '1e309',
  'NaN',
  '__proto__',
  'constructor',
  '<script>alert(1)</script>',
  '../../etc/passwd',
  '🙂🙂',
  "' OR 1=1 --",
  'page_ref = 1 OR 1=1',
  2 ** 31,
  2 ** 53 + 2,
  -(2 ** 31) - 1,
  1.5,
  true,
  null,
  [],
  {},
];

/** A fast-check arbitrary for values valid under a (simple) JSON Schema, as zod writes them. */
function valid(schema: Schema): fc.Arbitrary<unknown> {
  if (Array.isArray(schema.enum)) return fc.constantFrom(...(schema.enum as unknown[]));
  if (Array.isArray(schema.anyOf)) return fc.oneof(...(schema.anyOf as Schema[]).map(valid));
  const type = Array.isArray(schema.type) ? (schema.type as string[])[0] : (schema.type as string | undefined);
  switch (type) {
    case 'string': {
      if (typeof schema.pattern === 'string') {
        return fc
          .stringMatching(new RegExp(schema.pattern))
          .filter((s) => s.length <= Number(schema.maxLength ?? 1e9) && s.length >= Number(schema.minLength ?? 0));
      }
      return fc.string({
        minLength: Number(schema.minLength ?? 0),
        maxLength: Math.min(Number(schema.maxLength ?? 40), 60),
        unit: 'grapheme',
      });
    }
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

/** Valid most of the time; otherwise a boundary neighbour or a hostile value. */
function value(schema: Schema): fc.Arbitrary<unknown> {
  const edges: unknown[] = [];
  if (typeof schema.minimum === 'number') edges.push(schema.minimum - 1);
  if (typeof schema.maximum === 'number') edges.push(schema.maximum + 1);
  if (typeof schema.maxLength === 'number') edges.push('x'.repeat(schema.maxLength + 1));
  return fc.oneof({ arbitrary: valid(schema), weight: 6 }, { arbitrary: fc.constantFrom(...HOSTILE, ...edges), weight: 2 });
}

const text = (v: unknown): string => (typeof v === 'string' ? v : JSON.stringify(v));

/** One generated request for an operation: path, query and body fields, plus maybe an unknown field. */
function requestArb(op: Operation): fc.Arbitrary<{
  path: Record<string, unknown>;
  query: Record<string, unknown>;
  body: Record<string, unknown> | null;
  extra: string | null;
}> {
  const fields = (where: 'query' | 'path') =>
    fc.record(
      Object.fromEntries(
        op.parameters
          .filter((p) => p.in === where)
          .map((p) => [p.name, p.required ? value(p.schema) : fc.option(value(p.schema), { nil: undefined })]),
      ),
      { requiredKeys: [] },
    );
  const bodySchema = op.requestBody?.content['application/json'].schema;
  const body = bodySchema
    ? fc.record(
        Object.fromEntries(
          Object.entries((bodySchema.properties ?? {}) as Record<string, Schema>).map(([k, s]) => [
            k,
            ((bodySchema.required as string[] | undefined) ?? []).includes(k) ? value(s) : fc.option(value(s), { nil: undefined }),
          ]),
        ),
        { requiredKeys: [] },
      )
    : fc.constant(null);
  return fc.record({
    path: fields('path'),
    query: fields('query'),
    body,
    extra: fc.option(fc.constantFrom('limt', '__proto__', 'constructor', 'toString', 'zz'), { nil: null, freq: 5 }),
  });
}

async function send(
  s: TestService,
  method: string,
  template: string,
  req: { path: Record<string, unknown>; query: Record<string, unknown>; body: Record<string, unknown> | null; extra: string | null },
): Promise<{ status: number; type: string; headers: Headers; body: unknown }> {
  let path = template;
  for (const [k, v] of Object.entries(req.path)) path = path.replace(`{${k}}`, encodeURIComponent(v === undefined ? 'x' : text(v)) || 'x');
  path = path.replace(/\{[^}]+\}/g, 'x');
  const qs = new URLSearchParams();
  for (const [k, v] of Object.entries(req.query)) if (v !== undefined) qs.append(k, text(v));
  let body: string | undefined;
  if (req.body !== null) {
    const b: Record<string, unknown> = {};
    for (const [k, v] of Object.entries(req.body)) if (v !== undefined) b[k] = v;
    if (req.extra) b[req.extra] = 1;
    body = JSON.stringify(b);
  } else if (req.extra) qs.append(req.extra, '1');
  const url = `${s.url}${path}${qs.size > 0 ? `?${qs}` : ''}`;
  const res = await fetch(url, {
    method,
    headers: { authorization: `Bearer ${s.key}`, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
    body,
  });
  const raw = await res.text();
  let parsed: unknown;
  try {
    parsed = JSON.parse(raw);
  } catch {
    parsed = raw;
  }
  return { status: res.status, type: res.headers.get('content-type') ?? '', headers: res.headers, body: parsed };
}

t.test('issue 12: OpenAPI schema fuzzing: no 5xx, documented problem codes, documented success shapes', async (t) => {
  const s = await startTestService({ perMinute: 1_000_000, perDay: 100_000_000, config: { submissionsPerDay: 1_000_000 } });
  t.teardown(s.close);
  const doc = buildOpenApi(allTools, VERSION) as {
    paths: Record<string, Record<string, Operation>>;
    components: { schemas: Record<string, Schema> };
  };
  const ajv = new Ajv2020({ strict: false, allErrors: false });
  const documentedCodes = new Set(Object.keys(errorTable));
  let requests = 0;
  for (const [template, methods] of Object.entries(doc.paths)) {
    for (const [method, op] of Object.entries(methods)) {
      const okStatus = Object.keys(op.responses).find((c) => c.startsWith('2'))!;
      const validate = ajv.compile(op.responses[okStatus]!.content['application/json']!.schema);
      await fc.assert(
        fc.asyncProperty(requestArb(op), async (req) => {
          requests++;
          const r = await send(s, method.toUpperCase(), template, req);
          const where = `${method.toUpperCase()} ${template} ${JSON.stringify(req).slice(0, 300)} → ${r.status} ${JSON.stringify(r.body).slice(0, 300)}`;
          if (r.status >= 500) throw new Error(`5xx: ${where}`);
          if (r.status >= 400) {
            if (!r.type.startsWith('application/problem+json')) throw new Error(`not problem+json: ${where}`);
            const p = r.body as { code?: string; status?: number };
            if (!p.code || !documentedCodes.has(p.code)) throw new Error(`undocumented code: ${where}`);
            if (errorTable[p.code as keyof typeof errorTable].status !== r.status || p.status !== r.status)
              throw new Error(`status/code mismatch: ${where}`);
            if (!op.responses[String(r.status)]) throw new Error(`status not documented for the operation: ${where}`);
            return;
          }
          if (String(r.status) !== okStatus) throw new Error(`undocumented success status: ${where}`);
          if (!validate(r.body)) throw new Error(`response does not match its schema (${ajv.errorsText(validate.errors)}): ${where}`);
          if (!r.headers.get('x-ratelimit-remaining-minute')) throw new Error(`no rate headers: ${where}`);
        }),
        { numRuns: RUNS, seed: Number(process.env.FUZZ_SEED ?? 12), endOnFailure: true },
      );
    }
  }
  t.ok(requests >= RUNS * 10, `${requests} generated requests, all within the contract`);
  t.notOk(
    s.logLines.some((l) => l.includes('"level":50')),
    'no internal error logged',
  );
});

t.test('issue 12: the same fuzzed arguments on /mcp never end in an internal JSON-RPC error', async (t) => {
  const s = await startTestService({ perMinute: 1_000_000, perDay: 100_000_000, config: { submissionsPerDay: 1_000_000 } });
  t.teardown(s.close);
  const { toolJsonSchemas } = await import('../../tools/json-schema.js');
  let id = 0;
  for (const tool of allTools.filter((x) => !x.enabled || x.enabled(s.config))) {
    const input = toolJsonSchemas(tool).input;
    const args = fc.record(
      Object.fromEntries(Object.entries(input.properties ?? {}).map(([k, sch]) => [k, fc.option(value(sch), { nil: undefined, freq: 3 })])),
      { requiredKeys: [] },
    );
    await fc.assert(
      fc.asyncProperty(args, fc.constantFrom('2025-06-18', '2025-11-25'), async (a, version) => {
        const res = await fetch(`${s.url}/mcp`, {
          method: 'POST',
          headers: {
            authorization: `Bearer ${s.key}`,
            'content-type': 'application/json',
            accept: 'application/json, text/event-stream',
            'mcp-protocol-version': version,
          },
          body: JSON.stringify({
            jsonrpc: '2.0',
            id: ++id,
            method: 'tools/call',
            params: { name: tool.name, arguments: JSON.parse(JSON.stringify(a)) },
          }),
        });
        const msg = (await res.json()) as { error?: { code: number }; result?: { isError?: boolean; content: { text: string }[] } };
        const where = `${tool.name} ${version} ${JSON.stringify(a).slice(0, 200)} → ${JSON.stringify(msg).slice(0, 300)}`;
        if (res.status !== 200) throw new Error(`HTTP ${res.status}: ${where}`);
        if (msg.error) {
          if (msg.error.code !== -32602 || version >= '2025-11-25') throw new Error(`unexpected JSON-RPC error: ${where}`);
          return;
        }
        if (msg.result?.isError) {
          const p = JSON.parse(msg.result.content[0]!.text) as { code: string; status: number };
          if (p.status >= 500 || !(p.code in errorTable)) throw new Error(`internal or undocumented: ${where}`);
        }
      }),
      { numRuns: Math.ceil(RUNS / 2), seed: Number(process.env.FUZZ_SEED ?? 12), endOnFailure: true },
    );
  }
  t.notOk(
    s.logLines.some((l) => l.includes('"level":50')),
    'no internal error logged',
  );
});
