/**
 * svc_request_status / GET /api/v1/requests/{id}: the status of an earlier URL request. Only the key that
 * submitted a request can see it; any other key gets the same 404 as for an unknown id (no existence oracle).
 */
import { z } from 'zod';
import { SvcError } from '../errors.js';
import { defineTool } from './define-tool.js';
import { publicRequest, requestRecordSchema } from './submit-url.js';

const input = z.object({
  id: z.string().min(1).max(64).describe('The request id (req_…) svc_submit_url returned.'),
});

const output = z.object({
  request: requestRecordSchema,
});

export const requestStatusTool = defineTool({
  name: 'svc_request_status',
  title: 'URL request status',
  description:
    'Status of a URL request this API key made with svc_submit_url: received, queued, in_progress, then completed ' +
    'with an outcome (indexed, unchanged, removed, excluded_by_robots…) or failed with a reason; every step timed.',
  input,
  output,
  annotations: { readOnlyHint: true, openWorldHint: true, idempotentHint: true },
  runsOn: 'main',
  rest: [{ method: 'GET', path: '/requests/:id', source: 'query', summary: 'Status of an earlier URL request' }],
  run: async (inp, ctx) => {
    const r = await ctx.deps.repos.requests.getForKey(inp.id, ctx.caller.digest);
    if (!r) throw new SvcError('not_found', 'no request with this id for this key');
    return { request: publicRequest(r) };
  },
});
