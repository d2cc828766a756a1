import { z } from 'zod';
import type { ToolDefinition } from './define-tool.js';

/** A JSON Schema object (draft 2020-12, which OpenAPI 3.1 uses as is). */
export type JsonSchema = Record<string, unknown> & {
  type?: string | string[];
  properties?: Record<string, JsonSchema>;
  required?: string[];
  items?: JsonSchema;
  anyOf?: JsonSchema[];
};

const cache = new WeakMap<ToolDefinition, { input: JsonSchema; output: JsonSchema }>();

/**
 * JSON Schema patterns have no flags, and zod drops a regex's `i` when it writes `pattern`; so a case-insensitive
 * check (e.g. province "QC" or "qc") would be documented as lower case only. Simple sources (no classes, no
 * escapes) are rewritten letter by letter into [xX]; others are left as zod wrote them.
 */
function caselessPattern(source: string): string | null {
  if (/[[\\]/.test(source)) return null;
  return source.replace(/[a-z]/gi, (c) => `[${c.toLowerCase()}${c.toUpperCase()}]`);
}

const override = (ctx: { zodSchema: unknown; jsonSchema: Record<string, unknown> }): void => {
  const checks = (ctx.zodSchema as { _zod?: { def?: { checks?: { _zod?: { def?: { pattern?: unknown } } }[] } } })._zod?.def?.checks ?? [];
  for (const c of checks) {
    const re = c._zod?.def?.pattern;
    if (re instanceof RegExp && re.flags.includes('i') && ctx.jsonSchema.pattern === re.source) {
      const p = caselessPattern(re.source);
      if (p !== null) ctx.jsonSchema.pattern = p;
    }
  }
};

/**
 * A copy of `schema` common tools can read: `prefixItems` tuples become `items` with min/maxItems, and nullable
 * `type: [x, "null"]` becomes anyOf, because draft-07 validators and single-`type` dialects (e.g. Gemini) refuse
 * them. Annotations stay on the outer schema, constraints on the non-null branch.
 */
export function portableSchema(schema: unknown): unknown {
  if (Array.isArray(schema)) return schema.map(portableSchema);
  if (schema === null || typeof schema !== 'object') return schema;
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(schema)) {
    // zod writes the safe-integer range on every .int(): no caller can exceed it, and it costs tokens on every field.
    if ((k === 'minimum' && v === Number.MIN_SAFE_INTEGER) || (k === 'maximum' && v === Number.MAX_SAFE_INTEGER)) continue;
    out[k] = k === 'properties' || k === '$defs' ? mapValues(v) : portableSchema(v);
  }
  const tuple = out.prefixItems;
  if (Array.isArray(tuple)) {
    delete out.prefixItems;
    const distinct = [...new Map(tuple.map((m) => [JSON.stringify(m), m])).values()];
    out.items = distinct.length === 1 ? distinct[0] : { anyOf: distinct };
    out.minItems = tuple.length;
    out.maxItems = tuple.length;
  }
  if (Array.isArray(out.type)) {
    const types = out.type as string[];
    const outer: Record<string, unknown> = {};
    const inner: Record<string, unknown> = {};
    for (const [k, v] of Object.entries(out)) {
      if (k === 'type') continue;
      (ANNOTATIONS.has(k) ? outer : inner)[k] = v;
    }
    outer.anyOf = types.map((t) => (t === 'null' ? { type: 'null' } : { type: t, ...inner }));
    return outer;
  }
  return out;
}

const ANNOTATIONS = new Set(['description', 'default', 'title', 'examples']);

function mapValues(v: unknown): unknown {
  if (v === null || typeof v !== 'object' || Array.isArray(v)) return v;
  return Object.fromEntries(Object.entries(v).map(([k, x]) => [k, portableSchema(x)]));
}

const DROPPED_FROM_OUTPUT = new Set([
  'description',
  'title',
  'examples',
  '$schema',
  'required',
  'enum',
  'const',
  'pattern',
  'minimum',
  'maximum',
  'minLength',
  'maxLength',
  'minItems',
  'maxItems',
  'format',
]);

/**
 * The output schema as tools/list shows it: field names and JSON types of the root and its array records, nothing
 * deeper, no descriptions or bounds. Enough for clients to validate structuredContent; meanings live once in
 * docs/api-*.md and OpenAPI rather than in every agent's listing tokens.
 */
export function compactOutputSchema(schema: unknown, expand: 'root' | 'record' | 'none' = 'root'): unknown {
  if (Array.isArray(schema)) return schema.map((x) => compactOutputSchema(x, expand));
  if (schema === null || typeof schema !== 'object') return schema;
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(schema)) {
    if (DROPPED_FROM_OUTPUT.has(k)) continue;
    if (k === 'additionalProperties' || k === 'propertyNames' || k === 'properties') {
      if (expand === 'none' || v === false) continue;
      if (k === 'properties') {
        const next = expand === 'root' ? 'field' : 'none';
        out[k] = Object.fromEntries(Object.entries(v as Record<string, unknown>).map(([n, x]) => [n, compactField(x, next)]));
      } else out[k] = compactOutputSchema(v, 'none');
    } else if (k === 'items') out[k] = compactOutputSchema(v, expand === 'root' ? 'none' : expand);
    else out[k] = compactOutputSchema(v, expand);
  }
  return out;
}

/** A root field: an array of records shows the records' fields, anything else only its type. */
function compactField(schema: unknown, mode: 'field' | 'none'): unknown {
  if (mode === 'none' || schema === null || typeof schema !== 'object') return compactOutputSchema(schema, 'none');
  const s = schema as Record<string, unknown>;
  if (s.type === 'array') return { ...(compactOutputSchema(s, 'none') as object), items: compactOutputSchema(s.items, 'record') };
  return compactOutputSchema(s, 'none');
}

/**
 * The input (as callers send it) and output JSON Schemas of a tool, derived once from its zod definition, in the
 * portable form (see `portableSchema`). REST coercion, OpenAPI and tools/list all read these.
 */
export function toolJsonSchemas(tool: ToolDefinition): { input: JsonSchema; output: JsonSchema } {
  let hit = cache.get(tool);
  if (!hit) {
    const strip = (s: Record<string, unknown>): JsonSchema => {
      const { $schema: _drop, ...rest } = s;
      return portableSchema(rest) as JsonSchema;
    };
    hit = {
      input: strip(z.toJSONSchema(tool.input, { io: 'input', unrepresentable: 'any', override }) as Record<string, unknown>),
      output: strip(z.toJSONSchema(tool.output, { io: 'output', unrepresentable: 'any', override }) as Record<string, unknown>),
    };
    cache.set(tool, hit);
  }
  return hit;
}

/** A tool as tools/list shows it: described input schema, compact output schema (see `compactOutputSchema`). */
export function listedTool(
  tool: ToolDefinition,
): Record<string, unknown> & { name: string; inputSchema: JsonSchema; outputSchema: JsonSchema } {
  const { input, output } = toolJsonSchemas(tool);
  return {
    name: tool.name,
    title: tool.title,
    description: tool.description,
    inputSchema: input,
    outputSchema: compactOutputSchema(output) as JsonSchema,
    annotations: { ...tool.annotations },
  };
}

/** The scalar JSON type(s) a property accepts (looking through anyOf/nullable). */
export function propertyTypes(schema: JsonSchema | undefined): Set<string> {
  const out = new Set<string>();
  if (!schema) return out;
  const t = schema.type;
  if (typeof t === 'string') out.add(t);
  else if (Array.isArray(t)) for (const x of t) out.add(x);
  for (const alt of schema.anyOf ?? []) for (const x of propertyTypes(alt)) out.add(x);
  return out;
}
