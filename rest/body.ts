import type { IncomingMessage } from 'node:http';
import { SvcError } from '../errors.js';

/**
 * Reads a request body up to `limit` bytes. Over the limit → 413 payload_too_large (checked against
 * Content-Length first, then while streaming, so a lying or absent length cannot make us buffer more).
 */
export async function readBody(req: IncomingMessage, limit: number): Promise<Buffer> {
  const declared = Number(req.headers['content-length'] ?? NaN);
  if (Number.isFinite(declared) && declared > limit) {
    req.resume();
    throw new SvcError('payload_too_large', `request body exceeds ${limit} bytes`);
  }
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of req as AsyncIterable<Buffer>) {
    size += chunk.length;
    if (size > limit) {
      req.resume();
      throw new SvcError('payload_too_large', `request body exceeds ${limit} bytes`);
    }
    chunks.push(chunk);
  }
  return Buffer.concat(chunks);
}

/** Reads and parses a JSON body: wrong media type → 415, bad JSON → 400 invalid_json. Empty body → undefined. */
export async function readJsonBody(req: IncomingMessage, limit: number): Promise<unknown> {
  const type = String(req.headers['content-type'] ?? '').split(';')[0]?.trim().toLowerCase() ?? '';
  const buf = await readBody(req, limit);
  if (buf.length === 0) return undefined;
  if (type !== 'application/json' && !type.endsWith('+json')) {
    throw new SvcError('unsupported_media_type', 'send the body as application/json');
  }
  try {
    return JSON.parse(buf.toString('utf8')) as unknown;
  } catch {
    throw new SvcError('invalid_json', 'the request body is not valid JSON');
  }
}
