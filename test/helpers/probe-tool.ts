import { z } from 'zod';
import { SvcError } from '../../errors.js';
import { defineTool } from '../../tools/define-tool.js';

/**
 * A small tool used only to exercise the adapters (auth, limits, coercion, errors) independently of the real
 * tools' stores. It reads the real document registry (its indexed pages) through the repositories so the call path touches a real store.
 */
export const probeTool = defineTool({
  name: 'svc_probe',
  title: 'Probe',
  description: 'Adapter test tool.',
  input: z.object({
    q: z.string().min(1).max(300).describe('text'),
    limit: z.number().int().min(1).max(20).default(10).describe('limit'),
    offset: z.number().int().min(0).max(90).default(0).describe('offset'),
    flag: z.boolean().optional().describe('flag'),
    fail: z.enum(['none', 'internal', 'unavailable']).default('none').describe('make the call fail'),
  }),
  output: z.object({
    length: z.number().int(),
    limit: z.number().int(),
    offset: z.number().int(),
    flag: z.boolean().nullable(),
    known_pages: z.number().int(),
  }),
  annotations: { readOnlyHint: true, openWorldHint: false },
  runsOn: 'main',
  rest: [{ method: 'GET', path: '/probe', source: 'query' }],
  run: async (input, ctx) => {
    if (input.fail === 'internal') throw new Error('secret internal detail /etc/passwd');
    if (input.fail === 'unavailable') throw new SvcError('unavailable', 'store is busy', { retryAfter: 2 });
    const pages = await ctx.deps.repos.documents.fresh('1970-01-01T00:00:00.000Z', 50);
    return { length: input.q.length, limit: input.limit, offset: input.offset, flag: input.flag ?? null, known_pages: pages.length };
  },
});

export const probePostTool = defineTool({
  name: 'svc_probe_post',
  title: 'Probe (POST)',
  description: 'Adapter test tool with a JSON body and a path parameter.',
  input: z.object({
    id: z.string().min(1).max(20).describe('path id'),
    text: z.string().max(50).describe('text'),
    idem: z.string().optional().describe('header'),
  }),
  output: z.object({ id: z.string(), text: z.string(), idem: z.string().nullable() }),
  annotations: { readOnlyHint: false, openWorldHint: false },
  runsOn: 'main',
  rest: [{ method: 'POST', path: '/probe/:id', source: 'body', successStatus: 202, headers: { 'idempotency-key': 'idem' } }],
  run: async (input) => ({ id: input.id, text: input.text, idem: input.idem ?? null }),
});
