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

/** The input (as callers send it) and output JSON Schemas of a tool, derived once from its zod definition. */
export function toolJsonSchemas(tool: ToolDefinition): { input: JsonSchema; output: JsonSchema } {
  let hit = cache.get(tool);
  if (!hit) {
    const strip = (s: Record<string, unknown>): JsonSchema => {
      const { $schema: _drop, ...rest } = s;
      return rest as JsonSchema;
    };
    hit = {
      input: strip(z.toJSONSchema(tool.input, { io: 'input', unrepresentable: 'any' }) as Record<string, unknown>),
      output: strip(z.toJSONSchema(tool.output, { io: 'output', unrepresentable: 'any' }) as Record<string, unknown>),
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
