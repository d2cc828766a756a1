/**
 * /metrics in the Prometheus text format (0.0.4): per-process aggregates an operator watches (docs/deploy.md).
 * Label values are only route patterns, status or error codes, or words the service chose, never a key, query,
 * URL or address, so metrics cannot leak caller data.
 */
import type { ErrorCode } from '../errors.js';

/** One sample of a gauge or counter the process reports (labels are the service's own words, never caller input). */
export interface MetricSample {
  readonly labels?: Readonly<Record<string, string>>;
  readonly value: number;
}

export interface MetricFamily {
  /** `svc_…`, snake case. */
  readonly name: string;
  readonly help: string;
  readonly type: 'gauge' | 'counter';
  readonly samples: readonly MetricSample[];
}

/** Request latency buckets (seconds): from a cached /healthz to a slow hybrid search under load. */
const BUCKETS = [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10] as const;

interface Histogram {
  readonly counts: number[];
  sum: number;
  count: number;
}

/** Counters the HTTP layer keeps; the process reads them with families(). */
export class HttpMetrics {
  readonly #requests = new Map<string, number>();
  readonly #latency = new Map<string, Histogram>();
  readonly #errors = new Map<ErrorCode, number>();
  #quotaRejections = 0;
  #clientAborts = 0;

  /** One finished request: `route` is the matched pattern (or "unmatched"), never the URL. */
  observe(method: string, route: string, status: number, seconds: number): void {
    const key = `${method}\u0000${route}\u0000${status}`;
    this.#requests.set(key, (this.#requests.get(key) ?? 0) + 1);
    const hk = `${method}\u0000${route}`;
    let h = this.#latency.get(hk);
    if (!h) this.#latency.set(hk, (h = { counts: BUCKETS.map(() => 0), sum: 0, count: 0 }));
    for (let i = 0; i < BUCKETS.length; i++) if (seconds <= BUCKETS[i]!) h.counts[i]!++;
    h.sum += seconds;
    h.count++;
  }

  /** An error answered with its stable code (REST problem or MCP isError result). */
  error(code: ErrorCode): void {
    this.#errors.set(code, (this.#errors.get(code) ?? 0) + 1);
  }

  /** A call refused by a key's per-minute or per-day quota (REST 429 or MCP rate_limited result). */
  quotaRejected(): void {
    this.#quotaRejections++;
  }

  /** A request whose client closed the connection before its answer (not an error of ours). */
  clientAborted(): void {
    this.#clientAborts++;
  }

  families(): MetricFamily[] {
    const requests: MetricSample[] = [];
    for (const [key, value] of this.#requests) {
      const [method, route, status] = key.split('\u0000') as [string, string, string];
      requests.push({ labels: { method, route, status }, value });
    }
    return [
      {
        name: 'svc_http_requests_total',
        help: 'HTTP requests answered, by method, matched route pattern and status.',
        type: 'counter',
        samples: requests,
      },
      {
        name: 'svc_errors_total',
        help: 'Errors answered, by stable error code (REST problem documents and MCP error results).',
        type: 'counter',
        samples: [...this.#errors].map(([code, value]) => ({ labels: { code }, value })),
      },
      {
        name: 'svc_quota_rejections_total',
        help: "Calls refused by a key's per-minute or per-day quota.",
        type: 'counter',
        samples: [{ value: this.#quotaRejections }],
      },
      {
        name: 'svc_client_aborts_total',
        help: 'Requests whose client closed the connection before the answer (logged with status 499).',
        type: 'counter',
        samples: [{ value: this.#clientAborts }],
      },
    ];
  }

  /** The latency histograms, rendered (a histogram family has its own sample shape). */
  renderHistograms(): string {
    const name = 'svc_http_request_duration_seconds';
    const out = [`# HELP ${name} HTTP request latency, by method and matched route pattern.`, `# TYPE ${name} histogram`];
    for (const [hk, h] of this.#latency) {
      const [method, route] = hk.split('\u0000') as [string, string];
      const base = `method="${escapeLabel(method)}",route="${escapeLabel(route)}"`;
      BUCKETS.forEach((le, i) => out.push(`${name}_bucket{${base},le="${le}"} ${h.counts[i]}`));
      out.push(`${name}_bucket{${base},le="+Inf"} ${h.count}`);
      out.push(`${name}_sum{${base}} ${round(h.sum)}`);
      out.push(`${name}_count{${base}} ${h.count}`);
    }
    return `${out.join('\n')}\n`;
  }
}

function escapeLabel(v: string): string {
  return v.replace(/\\/g, '\\\\').replace(/"/g, '\\"').replace(/\n/g, '\\n');
}

function round(n: number): number {
  return Math.round(n * 1e6) / 1e6;
}

function formatValue(n: number): string {
  if (Number.isNaN(n)) return 'NaN';
  if (n === Infinity) return '+Inf';
  if (n === -Infinity) return '-Inf';
  return String(round(n));
}

/** Renders families in the text exposition format. */
export function renderFamilies(families: readonly MetricFamily[]): string {
  const out: string[] = [];
  for (const f of families) {
    out.push(`# HELP ${f.name} ${f.help.replace(/\\/g, '\\\\').replace(/\n/g, '\\n')}`, `# TYPE ${f.name} ${f.type}`);
    for (const s of f.samples) {
      const labels = s.labels ? Object.entries(s.labels) : [];
      const l = labels.length > 0 ? `{${labels.map(([k, v]) => `${k}="${escapeLabel(v)}"`).join(',')}}` : '';
      out.push(`${f.name}${l} ${formatValue(s.value)}`);
    }
  }
  return out.length > 0 ? `${out.join('\n')}\n` : '';
}

/** Process gauges every role reports: memory and uptime. */
export function processFamilies(role: string, version: string): MetricFamily[] {
  const m = process.memoryUsage();
  return [
    {
      name: 'svc_info',
      help: 'The process: its role and the service version (value always 1).',
      type: 'gauge',
      samples: [{ labels: { role, version }, value: 1 }],
    },
    { name: 'svc_process_resident_memory_bytes', help: 'Resident set size.', type: 'gauge', samples: [{ value: m.rss }] },
    { name: 'svc_process_heap_used_bytes', help: 'V8 heap in use.', type: 'gauge', samples: [{ value: m.heapUsed }] },
    {
      name: 'svc_process_uptime_seconds',
      help: 'Seconds since the process started.',
      type: 'gauge',
      samples: [{ value: process.uptime() }],
    },
  ];
}
