import { STATUS_CODES } from 'node:http';
import type { Duplex } from 'node:stream';
import { SvcError, toProblem, type ErrorCode } from '../errors.js';

/** Node parser and timeout error codes → our codes (everything else the parser refuses is a plain 400). */
function codeFor(err: NodeJS.ErrnoException): { code: ErrorCode; detail: string } {
  switch (err.code) {
    case 'HPE_HEADER_OVERFLOW':
      return { code: 'headers_too_large', detail: 'the request line or headers exceed 16 KiB' };
    case 'ERR_HTTP_REQUEST_TIMEOUT':
    case 'HPE_HEADERS_TIMEOUT':
      return { code: 'request_timeout', detail: 'the request did not arrive in time' };
    default:
      // Never echo the parser's reason (it can quote the caller's bytes); the code names the class of fault.
      return {
        code: 'bad_request',
        detail: `the HTTP request is malformed (${String(err.code ?? 'parse error').replace(/[^A-Z0-9_]/g, '')})`,
      };
  }
}

/**
 * The server's `clientError` handler: requests Node's HTTP parser refuses (NUL or invalid bytes in the request line
 * or a header, Content-Length with Transfer-Encoding, duplicate Content-Length, a garbage method, an oversized
 * request line) and slow clients get a problem+json answer like every other error, then the connection closes.
 * Nothing is written when the socket is gone or a response is already under way on it (it is destroyed instead:
 * raw bytes there would corrupt that response).
 */
export function answerClientError(err: NodeJS.ErrnoException, socket: Duplex): void {
  const busy = (socket as Duplex & { _httpMessage?: unknown })._httpMessage;
  if (err.code === 'ECONNRESET' || !socket.writable || busy) {
    socket.destroy();
    return;
  }
  const { code, detail } = codeFor(err);
  const problem = toProblem(new SvcError(code, detail));
  const body = JSON.stringify(problem);
  socket.end(
    `HTTP/1.1 ${problem.status} ${STATUS_CODES[problem.status] ?? 'Error'}\r\n` +
      'Content-Type: application/problem+json\r\n' +
      `Content-Length: ${Buffer.byteLength(body)}\r\n` +
      'X-Content-Type-Options: nosniff\r\n' +
      'Cache-Control: no-store\r\n' +
      'Connection: close\r\n\r\n' +
      body,
  );
}
