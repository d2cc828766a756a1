/**
 * svc_fresh / GET /api/v1/fresh: pages first seen, or whose content changed, within a window, newest first.
 * Reads the document registry (state/documents.ts), which records first_seen and last_changed from the content
 * hash of each fetch; a page that left the index (noindex, removal, 404/410) is not listed.
 */
import { z } from 'zod';
import { defineTool } from './define-tool.js';

/** The windows the spec allows, in milliseconds. */
export const FRESH_WINDOWS = {
  '1h': 3_600_000,
  '6h': 6 * 3_600_000,
  '24h': 24 * 3_600_000,
  '7d': 7 * 86_400_000,
  '30d': 30 * 86_400_000,
} as const;

const input = z.object({
  window: z.enum(['1h', '6h', '24h', '7d', '30d']).default('24h').describe('How far back to look.'),
  limit: z.number().int().min(1).max(50).default(20).describe('Pages to return.'),
});

const itemSchema = z.object({
  url: z.string().describe('URL of the page.'),
  title: z.string().describe('Page title as published (untrusted web content).'),
  host: z.string().describe('Host name of the page.'),
  page_ref: z.number().int().describe('Reference of the indexed page; read its passages with svc_page.'),
  first_seen: z.string().describe('When SvcBot first indexed this page (ISO 8601).'),
  last_changed: z.string().describe('When SvcBot last saw its content change (ISO 8601); equals first_seen for a new page.'),
  change: z
    .enum(['new', 'changed'])
    .describe('new: first seen within the window; changed: known before, content changed within the window.'),
});

const output = z.object({
  window: z.enum(['1h', '6h', '24h', '7d', '30d']).describe('The window applied.'),
  since: z.string().describe('Start of the window (ISO 8601); pages changed at or after this instant are listed.'),
  pages: z.array(itemSchema).describe('Pages newest change first. Empty when nothing was seen or changed in the window.'),
});

export const freshTool = defineTool({
  name: 'svc_fresh',
  title: 'New and changed pages',
  description:
    'Pages the svc crawler first saw or saw change within a recent window, newest first: url, title, host, page_ref ' +
    '(read with svc_page), first_seen, last_changed, new or changed. Empty means nothing new was crawled.',
  input,
  output,
  annotations: { readOnlyHint: true, openWorldHint: true, idempotentHint: true },
  runsOn: 'main',
  rest: [{ method: 'GET', path: '/fresh', source: 'query', summary: 'Pages first seen or changed within a window' }],
  run: async (inp, ctx) => {
    const since = new Date(ctx.deps.now().getTime() - FRESH_WINDOWS[inp.window]).toISOString();
    const rows = await ctx.deps.repos.documents.fresh(since, inp.limit);
    return {
      window: inp.window,
      since,
      pages: rows
        .filter((r) => r.firstSeen !== null && r.lastChanged !== null)
        .map((r) => ({
          url: r.url,
          title: r.title,
          host: r.host,
          page_ref: r.pageRef,
          first_seen: r.firstSeen!,
          last_changed: r.lastChanged!,
          change: r.change,
        })),
    };
  },
});
