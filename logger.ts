import { pino, type Logger, type DestinationStream } from 'pino';

export type { Logger };

/**
 * Structured logs (pino). Privacy is a feature: callers' keys, Authorization headers, IP addresses, query text
 * and bodies are never passed to the logger; the redact list is a second line of defence for fields that must
 * never appear even if someone logs a whole object by mistake.
 */
export function createLogger(opts: { level: string; destination?: DestinationStream }): Logger {
  return pino(
    {
      level: opts.level,
      base: { svc: 'svc' },
      redact: {
        paths: [
          'key',
          '*.key',
          'authorization',
          '*.authorization',
          'headers.authorization',
          'req.headers.authorization',
          'ip',
          '*.ip',
          'remoteAddress',
          '*.remoteAddress',
          'q',
          '*.q',
          'query',
          '*.query',
          'body',
          '*.body',
        ],
        censor: '[redacted]',
      },
      timestamp: pino.stdTimeFunctions.isoTime,
    },
    opts.destination,
  );
}
