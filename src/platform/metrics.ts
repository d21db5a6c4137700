import { createServer } from 'node:http';
import { Counter, collectDefaultMetrics, Gauge, Histogram, Registry } from 'prom-client';

/** Latency buckets in seconds, from a cached read (1 ms) to a slow upload (10 s). */
const LATENCY_BUCKETS = [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10];

/**
 * The process's Prometheus metrics (docs/deployment.md, "Metrics"), on prom-client. One registry per server
 * instance, so several servers in one process (the tests) keep their own figures. Series are labelled by route
 * pattern, never by URL: URLs carry ids and tokens, and every distinct label value is a new series.
 */
export class Metrics {
  readonly registry = new Registry();
  private readonly requests: Counter<'method' | 'route' | 'status'>;
  private readonly requestSeconds: Histogram<'method' | 'route'>;
  private readonly fanoutSeconds: Histogram;
  private readonly busGaps: Counter<'topic' | 'reason'>;

  constructor() {
    collectDefaultMetrics({ register: this.registry, prefix: 'hearth_' });
    this.requests = new Counter({
      name: 'hearth_http_requests_total',
      help: 'HTTP requests answered, by method, route pattern and status',
      labelNames: ['method', 'route', 'status'],
      registers: [this.registry],
    });
    this.requestSeconds = new Histogram({
      name: 'hearth_http_request_duration_seconds',
      help: 'Time from the first byte of a request to its answer, by method and route pattern',
      labelNames: ['method', 'route'],
      buckets: LATENCY_BUCKETS,
      registers: [this.registry],
    });
    this.fanoutSeconds = new Histogram({
      name: 'hearth_gateway_dispatch_fanout_seconds',
      help: 'Time from publishing a gateway dispatch to writing it to the last of its sessions on this process',
      buckets: LATENCY_BUCKETS,
      registers: [this.registry],
    });
    this.busGaps = new Counter({
      name: 'hearth_gateway_bus_gaps_total',
      help: 'Losses of bus messages the gateway acted on, by topic and reason (sequence, reconnect)',
      labelNames: ['topic', 'reason'],
      registers: [this.registry],
    });
  }

  /** Bus messages found lost on a topic the gateway acts on (docs/gateway.md#across-nodes). */
  countBusGap(topic: string, reason: string): void {
    this.busGaps.inc({ topic, reason });
  }

  observeRequest(method: string, route: string, status: number, seconds: number): void {
    this.requests.inc({ method, route, status: String(status) });
    this.requestSeconds.observe({ method, route }, seconds);
  }

  observeFanout(seconds: number): void {
    this.fanoutSeconds.observe(Math.max(0, seconds));
  }

  /** A gauge read when Prometheus scrapes (connections, pool sizes, queue depths). */
  gauge(name: string, help: string, read: () => number | Partial<Record<string, number>>, labelName?: string): void {
    new Gauge({
      name,
      help,
      labelNames: labelName ? [labelName] : [],
      registers: [this.registry],
      collect() {
        const value = read();
        if (typeof value === 'number') this.set(value);
        else if (labelName)
          for (const [label, n] of Object.entries(value)) if (n !== undefined) this.set({ [labelName]: label }, n);
      },
    });
  }

  async render(): Promise<{ contentType: string; body: string }> {
    return { contentType: this.registry.contentType, body: await this.registry.metrics() };
  }
}

/**
 * A bare listener that answers `GET /metrics` and nothing else, for HEARTH_METRICS_PORT: Prometheus scrapes it
 * on a private address without a token.
 */
export async function listenForMetrics(metrics: Metrics, port: number, host: string): Promise<MetricsListener> {
  const server = createServer((request, response) => {
    const path = (request.url ?? '/').split('?')[0];
    if (request.method !== 'GET' || path !== '/metrics') {
      response.writeHead(404, { 'content-type': 'text/plain; charset=utf-8' }).end('Not found\n');
      return;
    }
    metrics.render().then(
      ({ contentType, body }) => response.writeHead(200, { 'content-type': contentType }).end(body),
      () => response.writeHead(500, { 'content-type': 'text/plain; charset=utf-8' }).end('Metrics unavailable\n'),
    );
  });
  server.requestTimeout = 10_000;
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, host, () => resolve());
  });
  const address = server.address();
  return {
    port: typeof address === 'object' && address ? address.port : port,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}

export interface MetricsListener {
  port: number;
  close(): Promise<void>;
}
