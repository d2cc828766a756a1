import { STATUS_CODES, type IncomingMessage, type ServerResponse } from 'node:http';
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

/** Responses whose request the edge answered (a body that broke framing or came too slowly), with the code sent. */
const edgeAnswers = new WeakMap<ServerResponse, ErrorCode>();

/**
 * The code `answerClientError` already sent for this response's request, if it did: the handler still running for
 * it then sees its body stream fail, and must count that answer instead of an internal error or a client abort.
 */
export function answeredAtEdge(res: ServerResponse): ErrorCode | undefined {
  return edgeAnswers.get(res);
}

/**
 * The server's `clientError` handler: requests Node's parser refuses and slow clients get problem+json, then the
 * connection closes. As in Node's own handler, an answer is written only while the in-flight response has sent
 * nothing; otherwise raw bytes would corrupt it, so the socket is destroyed.
 */
export function answerClientError(err: NodeJS.ErrnoException, socket: Duplex): void {
  const http = socket as Duplex & { _httpMessage?: ServerResponse | null; parser?: { incoming?: IncomingMessage | null } | null };
  const busy = http._httpMessage ?? undefined;
  // The request still arriving was answered already (e.g. a 401 before its body): another status line would be a
  // response to nothing.
  const answered = !busy && http.parser?.incoming?.complete === false;
  // A reset or an end of stream mid-request is the client leaving: nobody reads an answer (the request's handler,
  // if one runs, counts a client abort).
  if (err.code === 'ECONNRESET' || err.code === 'HPE_INVALID_EOF_STATE' || !socket.writable || busy?.headersSent || answered) {
    socket.destroy();
    return;
  }
  const { code, detail } = codeFor(err);
  if (busy) edgeAnswers.set(busy, code);
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
  // Once the answer is flushed the connection is done: a client that never closes its side must not keep it (or a
  // handler waiting on its body) alive.
  socket.once('finish', () => socket.destroy());
}
