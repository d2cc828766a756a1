/**
 * svc_images / GET /api/v1/images (only with SVC_IMAGES=1): image metadata found by text (alt text). Metadata
 * only: no image bytes are fetched, stored or served, no previews, and no usage rights are implied.
 */
import { z } from 'zod';
import { defineTool } from './define-tool.js';
import { runCovered } from './shard-coverage.js';

/** Said in every response. */
export const IMAGE_RIGHTS_NOTICE =
  'Metadata only: svc never fetches, stores or serves image bytes or previews. No usage rights are implied; the rights belong to the image owners.';

const input = z.object({
  q: z.string().min(1).max(300).describe('Words to find in image alt text.'),
  limit: z.number().int().min(1).max(20).default(10).describe('Images to return.'),
});

const output = z.object({
  images: z
    .array(
      z.object({
        image_url: z.string().describe('Absolute URL of the image as the page references it (not fetched by svc).'),
        alt: z.string().describe('The alt text the page gives (untrusted web content).'),
        width: z.number().nullable().describe('Declared width attribute in CSS pixels, or null.'),
        height: z.number().nullable().describe('Declared height attribute in CSS pixels, or null.'),
        page_ref: z.number().int().describe('Reference of the page showing the image.'),
        page_url: z.string().describe('URL of the page showing the image.'),
        host: z.string().describe('Host name of that page.'),
      }),
    )
    .describe('Image metadata, best alt-text match first. Empty when nothing matched.'),
  notice: z.string().describe('No usage rights are implied; metadata only.'),
});

export const imagesTool = defineTool({
  name: 'svc_images',
  title: 'Image metadata',
  description:
    'Finds images by their alt text on pages svc has indexed and returns metadata only: image URL, alt text, declared ' +
    'width and height, and the page (page_ref, URL, host). No bytes, no previews, and no usage rights are implied.',
  input,
  output,
  annotations: { readOnlyHint: true, openWorldHint: true, idempotentHint: true },
  runsOn: 'main',
  readsIndex: true,
  enabled: (c) => c.images,
  rest: [{ method: 'GET', path: '/images', source: 'query', summary: 'Image metadata by alt text (when enabled)' }],
  run: async (inp, ctx) => {
    const hits = (await runCovered(ctx.deps.index, () => ctx.deps.index.searchImages(inp.q, inp.limit))).value;
    return {
      images: hits.map((h) => ({
        image_url: h.src,
        alt: h.alt,
        width: h.width,
        height: h.height,
        page_ref: h.pageRef,
        page_url: h.pageUrl,
        host: h.host,
      })),
      notice: IMAGE_RIGHTS_NOTICE,
    };
  },
});
