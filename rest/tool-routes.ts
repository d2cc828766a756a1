import type Router from '@koa/router';
import type { Context } from 'koa';
import { SvcError } from '../errors.js';
import { callTool, parseToolInput } from '../tools/call-tool.js';
import type { RestBinding, ToolContext, ToolDefinition } from '../tools/define-tool.js';
import { propertyTypes, toolJsonSchemas, type JsonSchema } from '../tools/json-schema.js';
import { readJsonBody } from './body.js';

/** An integer as a query string writes it: plain decimal digits, an optional "-", no leading zero, no "-0". */
const INTEGER = /^(0|-?[1-9][0-9]*)$/;
/** A number as JSON writes it (RFC 8259); "-0" is refused as for an integer. */
const NUMBER = /^-?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)?$/;

/**
 * Query strings carry text; the tool schemas are typed. Each value is converted to the JSON type its property
 * declares when it is written exactly as that type (no sign "+", spaces, leading zeros, "5.0" for an integer);
 * otherwise it is left as text so validation names the field (422 validation_failed; docs/api.md).
 */
export function coerceQuery(query: Record<string, string | string[] | undefined>, schema: JsonSchema): Record<string, unknown> {
  // No prototype: a parameter named `__proto__` stays a field (and is refused as unknown) instead of vanishing.
  const out = Object.create(null) as Record<string, unknown>;
  for (const [name, raw] of Object.entries(query)) {
    if (raw === undefined) continue;
    const prop = schema.properties && Object.hasOwn(schema.properties, name) ? schema.properties[name] : undefined;
    const types = propertyTypes(prop);
    const one = (v: string): unknown => {
      if (types.has('number') ? NUMBER.test(v) && v !== '-0' : types.has('integer') && INTEGER.test(v)) return Number(v);
      if (types.has('boolean') && (v === 'true' || v === 'false')) return v === 'true';
      return v;
    };
    if (types.has('array')) out[name] = (Array.isArray(raw) ? raw : [raw]).map(one);
    else if (Array.isArray(raw))
      out[name] = raw.map(one); // repeated scalar: validation reports the type
    else out[name] = one(raw);
  }
  return out;
}

/** The raw tool input for one REST request: query or JSON body, then path params and mapped headers on top. */
async function restInput(ctx: Context, tool: ToolDefinition, binding: RestBinding, bodyLimit: number): Promise<Record<string, unknown>> {
  let base: Record<string, unknown> = {};
  if (binding.source === 'query') {
    base = coerceQuery(ctx.query, toolJsonSchemas(tool).input);
  } else {
    const body = await readJsonBody(ctx.req, bodyLimit);
    if (body !== undefined && (typeof body !== 'object' || body === null || Array.isArray(body))) {
      throw new SvcError('bad_request', 'the request body must be a JSON object');
    }
    base = Object.assign(Object.create(null) as Record<string, unknown>, body as Record<string, unknown> | undefined);
  }
  const params = (ctx as Context & { params?: Record<string, string> }).params ?? {};
  const schema = toolJsonSchemas(tool).input;
  for (const [name, value] of Object.entries(params)) {
    base[name] = coerceQuery({ [name]: value }, schema)[name];
  }
  for (const [header, field] of Object.entries(binding.headers ?? {})) {
    const v = ctx.get(header);
    if (v !== '') base[field] = v;
  }
  return base;
}

/**
 * Mounts every REST binding of every tool onto the router. `context(ctx)` authenticates; its `count()` counts the
 * call against the key's quotas, once the input is valid: a 422 uses up no quota and `show()`s it (docs/errors.md).
 */
export function mountToolRoutes(
  router: Router,
  tools: readonly ToolDefinition[],
  opts: {
    bodyLimit: number;
    context: (ctx: Context) => Promise<{ toolCtx: ToolContext; count: () => Promise<void>; show: () => Promise<void> }>;
  },
): void {
  for (const tool of tools) {
    for (const binding of tool.rest) {
      const handler = async (ctx: Context): Promise<void> => {
        const { toolCtx, count, show } = await opts.context(ctx);
        const input = await restInput(ctx, tool, binding, opts.bodyLimit);
        try {
          parseToolInput(tool, input);
        } catch (err) {
          await show(); // the quota headers, as they stand: this call is not counted
          throw err;
        }
        await count();
        const out = await callTool(tool, input, toolCtx);
        ctx.status = binding.successStatus ?? 200;
        ctx.body = binding.respond ? (binding.respond as (o: unknown) => unknown)(out) : out;
      };
      if (binding.method === 'GET') router.get(binding.path, handler);
      else router.post(binding.path, handler);
    }
  }
}
