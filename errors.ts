/**
 * The closed table of error codes. Every failure the service reports carries one of these codes, on REST
 * (application/problem+json, RFC 9457) and on MCP (an isError tool result) alike. docs/errors.md documents each
 * one, and a test keeps the table and the document in step.
 */
export const errorTable = {
  bad_request: { status: 400, title: 'Malformed request' },
  invalid_json: { status: 400, title: 'Body is not valid JSON' },
  invalid_url: { status: 400, title: 'Invalid URL' },
  invalid_host: { status: 400, title: 'Invalid host name' },
  invalid_encoding: { status: 400, title: 'Request text is not valid UTF-8' },
  blocked_address: { status: 400, title: 'Host resolves only to non-public addresses' },
  unauthorized: { status: 401, title: 'Missing or invalid API key' },
  forbidden_origin: { status: 403, title: 'Origin not allowed' },
  forbidden_host: { status: 403, title: 'Host not served here' },
  not_found: { status: 404, title: 'Resource not found' },
  route_not_found: { status: 404, title: 'No such route' },
  feature_disabled: { status: 404, title: 'Feature not enabled' },
  method_not_allowed: { status: 405, title: 'Method not allowed' },
  not_acceptable: { status: 406, title: 'Not acceptable' },
  request_timeout: { status: 408, title: 'Request not received in time' },
  conflict: { status: 409, title: 'Conflict with the current state' },
  payload_too_large: { status: 413, title: 'Request body too large' },
  unsupported_media_type: { status: 415, title: 'Unsupported media type' },
  validation_failed: { status: 422, title: 'Parameter types or bounds violated' },
  rate_limited: { status: 429, title: 'Rate limit exceeded' },
  submission_quota_exceeded: { status: 429, title: 'Daily submission quota exceeded' },
  headers_too_large: { status: 431, title: 'Request line or headers too large' },
  internal: { status: 500, title: 'Internal error' },
  unavailable: { status: 503, title: 'Temporarily unavailable' },
} as const satisfies Record<string, { status: number; title: string }>;

export type ErrorCode = keyof typeof errorTable;

/** One problem with one input field: `path` is the field path (e.g. ["limit"] or ["body", "url"]). */
export interface FieldIssue {
  readonly path: readonly (string | number)[];
  readonly issue: string;
}

/** The error every layer throws; adapters turn it into problem+json or an MCP error result. */
export class SvcError extends Error {
  readonly code: ErrorCode;
  readonly status: number;
  readonly errors: readonly FieldIssue[];
  /** Seconds until a retry can succeed (429, 503). */
  readonly retryAfter: number | undefined;

  constructor(code: ErrorCode, detail?: string, opts: { errors?: readonly FieldIssue[]; retryAfter?: number; cause?: unknown } = {}) {
    super(detail ?? errorTable[code].title, opts.cause === undefined ? undefined : { cause: opts.cause });
    this.name = 'SvcError';
    this.code = code;
    this.status = errorTable[code].status;
    this.errors = opts.errors ?? [];
    this.retryAfter = opts.retryAfter;
  }
}

export const isSvcError = (e: unknown): e is SvcError => e instanceof SvcError;

/** The RFC 9457 body for an error. 5xx bodies never carry internals. */
export interface Problem {
  readonly type: string;
  readonly title: string;
  readonly status: number;
  readonly detail: string;
  readonly code: ErrorCode;
  readonly errors: readonly FieldIssue[];
  readonly retry_after?: number;
}

export function toProblem(err: SvcError): Problem {
  const entry = errorTable[err.code];
  const detail = err.status >= 500 && err.code === 'internal' ? entry.title : err.message;
  return {
    type: `https://svc.invalid/errors/${err.code}`,
    title: entry.title,
    status: entry.status,
    detail,
    code: err.code,
    errors: err.errors,
    ...(err.retryAfter === undefined ? {} : { retry_after: err.retryAfter }),
  };
}
