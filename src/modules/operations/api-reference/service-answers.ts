import type { OperationAnswer } from './responses/schema-builders';
import { integer, object, objectWith, oneOf, text } from './responses/schema-builders';

/** What the probes, this document and the metrics answer. */
export const SERVICE_ANSWERS: Record<string, OperationAnswer & { contentType?: string; description?: string }> = {
  'GET /health': { summary: 'Liveness: 200 while the process lives', answer: object({ status: { const: 'ok' } }), errors: [] },
  'GET /ready': {
    summary: 'Readiness: both stores answer and the read models caught up with the log (else 503)',
    answer: objectWith({ status: oneOf('ready', 'not_ready') }, { position: integer, head: integer, reason: text }),
    errors: [],
  },
  'GET /v1/openapi.json': {
    summary: 'This document (OpenAPI 3.1)',
    answer: { type: 'object', description: 'An OpenAPI 3.1 document' },
    errors: [],
  },
  'GET /metrics': {
    summary: 'Prometheus metrics (when ASSAY_METRICS=1; loopback peers unless ASSAY_METRICS_ALLOW says otherwise)',
    answer: { type: 'string' },
    contentType: 'text/plain',
    errors: [404],
  },
};
