import type { IncomingMessage } from 'node:http';
import { SvcError } from '../errors.js';

const strictUtf8 = new TextDecoder('utf-8', { fatal: true, ignoreBOM: true });

/** Decodes UTF-8 or refuses: invalid bytes are a 400 invalid_encoding, never silently replaced with U+FFFD. */
export function decodeUtf8(bytes: Uint8Array, where: string): string {
  try {
    return strictUtf8.decode(bytes);
  } catch {
    throw new SvcError('invalid_encoding', `${where} is not valid UTF-8`);
  }
}

/**
 * Refuses a request target whose percent-escapes (path or query) decode to bytes that are not UTF-8. Koa's query
 * parser and the router would otherwise turn them into U+FFFD and search for text nobody sent.
 */
export function assertUtf8Url(url: string): void {
  // Node hands raw bytes of the request line over as latin1 characters; unescapeBuffer keeps them as bytes.
  if (!/[%\u0080-\u00ff]/.test(url)) return;
  const bytes = Buffer.alloc(url.length);
  let n = 0;
  for (let i = 0; i < url.length; i++) {
    const hex = url.charCodeAt(i) === 0x25 ? url.slice(i + 1, i + 3) : '';
    if (/^[0-9a-fA-F]{2}$/.test(hex)) {
      bytes[n++] = parseInt(hex, 16);
      i += 2;
    } else bytes[n++] = url.charCodeAt(i) & 0xff;
  }
  decodeUtf8(bytes.subarray(0, n), 'the request URL');
}

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
  const type =
    String(req.headers['content-type'] ?? '')
      .split(';')[0]
      ?.trim()
      .toLowerCase() ?? '';
  const buf = await readBody(req, limit);
  if (buf.length === 0) return undefined;
  if (type !== 'application/json' && !type.endsWith('+json')) {
    throw new SvcError('unsupported_media_type', 'send the body as application/json');
  }
  const text = decodeUtf8(buf, 'the request body');
  try {
    return JSON.parse(text) as unknown;
  } catch {
    throw new SvcError('invalid_json', 'the request body is not valid JSON');
  }
}
