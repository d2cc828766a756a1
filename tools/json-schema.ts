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

/** The input (as callers send it) and output JSON Schemas of a tool, derived once from its zod definition. */
export function toolJsonSchemas(tool: ToolDefinition): { input: JsonSchema; output: JsonSchema } {
  let hit = cache.get(tool);
  if (!hit) {
    const strip = (s: Record<string, unknown>): JsonSchema => {
      const { $schema: _drop, ...rest } = s;
      return rest as JsonSchema;
    };
    hit = {
      input: strip(z.toJSONSchema(tool.input, { io: 'input', unrepresentable: 'any', override }) as Record<string, unknown>),
      output: strip(z.toJSONSchema(tool.output, { io: 'output', unrepresentable: 'any', override }) as Record<string, unknown>),
    };
    cache.set(tool, hit);
  }
  return hit;
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
