import { collectDefaultMetrics, Counter, Gauge, Histogram, Registry } from 'prom-client';
import type { EventStore } from '../event-store/event-store.port';
import type { ProjectionRunner } from '../processing/projection-runner';

const SECONDS = [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30];

/**
 * The service's Prometheus metrics, in a registry of its own (not prom-client's global one, so
 * two servers in one process never mix). The HTTP and event-log metrics are here; the contexts
 * add theirs to `registry` (trials, provider calls, sandboxes).
 */
export class ServiceMetrics {
  readonly registry = new Registry();
  private readonly requests = new Counter({
    name: 'assay_http_requests_total',
    help: 'HTTP requests answered, by operation, method and status.',
    labelNames: ['operation', 'method', 'status'],
    registers: [this.registry],
  });
  private readonly latency = new Histogram({
    name: 'assay_http_request_duration_seconds',
    help: 'Time to answer an HTTP request, by operation and method (a watch stream: until it ends).',
    labelNames: ['operation', 'method'],
    buckets: SECONDS,
    registers: [this.registry],
  });
  private readonly refusals = new Counter({
    name: 'assay_refusals_total',
    help: 'Requests refused for a counted reason (rule_of_three: a fourth running batch of an organization).',
    labelNames: ['operation', 'reason'],
    registers: [this.registry],
  });
  private readonly appended = new Counter({
    name: 'assay_events_appended_total',
    help: 'Events appended to the log since this process caught up with it, by type.',
    labelNames: ['type'],
    registers: [this.registry],
  });

  constructor(eventStore: EventStore, projections: ProjectionRunner) {
    collectDefaultMetrics({ register: this.registry, prefix: 'assay_' });
    new Gauge({
      name: 'assay_projection_lag_seconds',
      help: 'Age of the oldest event the read models have not applied yet (0 when caught up).',
      registers: [this.registry],
      async collect() {
        const next = (await eventStore.readAll({ after: projections.position, maxCount: 1 })).at(0);
        this.set(next ? Math.max(0, (Date.now() - Date.parse(next.createdAt)) / 1000) : 0);
      },
    });
    new Gauge({
      name: 'assay_projection_position',
      help: 'Position in the log of the last event the read models reflect.',
      registers: [this.registry],
      collect() {
        this.set(projections.position);
      },
    });
    new Gauge({
      name: 'assay_projection_owner',
      help: 'Whether this instance applies events to the read models (1), or follows the owner of a shared MongoDB read store (0).',
      registers: [this.registry],
      collect() {
        this.set(projections.role === 'owner' ? 1 : 0);
      },
    });
    projections.observe((event, live) => {
      if (live) this.appended.inc({ type: event.type });
    });
  }

  observeRequest(request: { operation: string; method: string; status: number; seconds: number; refusal: string | undefined }): void {
    const { operation, method } = request;
    this.requests.inc({ operation, method, status: String(request.status) });
    this.latency.observe({ operation, method }, request.seconds);
    if (request.refusal) this.refusals.inc({ operation, reason: request.refusal });
  }

  /** The exposition text and its content type. */
  async scrape(): Promise<{ text: string; contentType: string }> {
    return { text: await this.registry.metrics(), contentType: this.registry.contentType };
  }
}
