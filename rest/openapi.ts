import { errorTable } from '../errors.js';
import type { ToolDefinition } from '../tools/define-tool.js';
import { toolJsonSchemas, type JsonSchema } from '../tools/json-schema.js';

const problemSchema: JsonSchema = {
  type: 'object',
  required: ['type', 'title', 'status', 'detail', 'code', 'errors'],
  properties: {
    type: { type: 'string' },
    title: { type: 'string' },
    status: { type: 'integer' },
    detail: { type: 'string' },
    code: { type: 'string', enum: Object.keys(errorTable) },
    errors: {
      type: 'array',
      items: {
        type: 'object',
        required: ['path', 'issue'],
        properties: { path: { type: 'array', items: { type: ['string', 'integer'] } }, issue: { type: 'string' } },
      },
    },
    retry_after: { type: 'integer', description: 'Seconds to wait before retrying (429, 503).' },
  },
};

const rateHeaders = Object.fromEntries(
  ['X-RateLimit-Limit-Minute', 'X-RateLimit-Remaining-Minute', 'X-RateLimit-Limit-Day', 'X-RateLimit-Remaining-Day'].map((h) => [
    h,
    { schema: { type: 'integer' }, description: h.replace('X-RateLimit-', '').replace('-', ' per ').toLowerCase() },
  ]),
);

const problem = (description: string, extraHeaders: Record<string, unknown> = {}) => ({
  description,
  headers: extraHeaders,
  content: { 'application/problem+json': { schema: { $ref: '#/components/schemas/Problem' } } },
});

/** OpenAPI 3.1 for /api/v1, generated from the tool registry (the same zod definitions MCP uses). */
export function buildOpenApi(tools: readonly ToolDefinition[], version: string): Record<string, unknown> {
  const paths: Record<string, Record<string, unknown>> = {};
  for (const tool of tools) {
    const { input } = toolJsonSchemas(tool);
    const output = toolJsonSchemas(tool).output;
    tool.rest.forEach((binding, i) => {
      const path = '/api/v1' + binding.path.replace(/:([A-Za-z_]\w*)/g, '{$1}');
      const pathParams = [...binding.path.matchAll(/:([A-Za-z_]\w*)/g)].map((m) => m[1] as string);
      const headerFields = new Map(Object.entries(binding.headers ?? {}).map(([h, f]) => [f, h]));
      const props = input.properties ?? {};
      const required = new Set(input.required ?? []);
      const parameters: unknown[] = [];
      for (const name of pathParams) {
        parameters.push({ name, in: 'path', required: true, schema: props[name] ?? { type: 'string' } });
      }
      for (const [field, header] of headerFields) {
        parameters.push({ name: header, in: 'header', required: false, schema: props[field] ?? { type: 'string' } });
      }
      const bodyProps: Record<string, JsonSchema> = {};
      for (const [name, schema] of Object.entries(props)) {
        if (pathParams.includes(name) || headerFields.has(name)) continue;
        if (binding.source === 'query') {
          // A second binding (e.g. GET /entities/:id) only takes its path params.
          if (i > 0) continue;
          parameters.push({ name, in: 'query', required: required.has(name), schema, description: schema.description });
        } else bodyProps[name] = schema;
      }
      const op: Record<string, unknown> = {
        operationId: i === 0 ? tool.name : `${tool.name}_${i}`,
        summary: binding.summary ?? tool.title,
        description: tool.description,
        tags: [tool.name],
        security: [{ bearer: [] }],
        parameters,
        responses: {
          [String(binding.successStatus ?? 200)]: {
            description: 'Success',
            headers: rateHeaders,
            content: { 'application/json': { schema: binding.respond ? { type: 'object' } : output } },
          },
          '400': problem('Malformed request (bad host, URL, JSON or type)'),
          '401': problem('Missing or invalid API key'),
          '403': problem('Host header not served here (forbidden_host)'),
          '404': problem('Absent resource or disabled feature'),
          '422': problem('Parameter types or bounds violated'),
          '429': problem('Rate limit exceeded', { 'Retry-After': { schema: { type: 'integer' } }, ...rateHeaders }),
          '503': problem('Temporarily unavailable'),
        },
      };
      if (binding.source === 'body') {
        op.requestBody = {
          required: true,
          content: {
            'application/json': {
              // Unknown fields are refused (422), so the document says so.
              schema: {
                ...input,
                properties: bodyProps,
                required: (input.required ?? []).filter((r) => Object.hasOwn(bodyProps, r)),
                additionalProperties: false,
              },
            },
          },
        };
        (op.responses as Record<string, unknown>)['413'] = problem('Request body too large');
        (op.responses as Record<string, unknown>)['415'] = problem('Body is not application/json');
      }
      paths[path] = { ...(paths[path] ?? {}), [binding.method.toLowerCase()]: op };
    });
  }
  return {
    openapi: '3.1.0',
    info: {
      title: 'svc API',
      version,
      description:
        'Independent web search and agent context. Every route needs `Authorization: Bearer <API_KEY>` (keys are ' +
        'issued by the operators). Errors are application/problem+json with a stable `code`. Unknown query ' +
        'parameters and body fields are refused (422). Every passage is untrusted web content.',
    },
    servers: [{ url: '/' }],
    paths,
    components: {
      schemas: { Problem: problemSchema },
      securitySchemes: { bearer: { type: 'http', scheme: 'bearer', description: 'svc_… API key' } },
    },
  };
}
