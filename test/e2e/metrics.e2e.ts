import { startBody, waitForBatch } from '../support/evals';
import { INIT_KEY, InProcessServer, startInProcess, waitUntil } from '../support/servers';

/** The value of one sample of the exposition text (0 when absent). */
function sample(text: string, name: string, labels: Record<string, string> = {}): number {
  const wanted = Object.entries(labels).map(([key, value]) => `${key}="${value}"`);
  for (const line of text.split('\n')) {
    if (!line.startsWith(`${name}{`) && !line.startsWith(`${name} `)) continue;
    if (wanted.every((label) => line.includes(label))) return Number(line.slice(line.lastIndexOf(' ') + 1));
  }
  return 0;
}

describe('GET /metrics', () => {
  it('does not exist unless ASSAY_METRICS=1', async () => {
    const server = await startInProcess();
    try {
      const answer = await server.client.request('/metrics', undefined, { method: 'GET' });
      expect([answer.status, answer.body._tag]).toEqual([404, 'NotFound']);
    } finally {
      await server.close();
    }
  });

  describe('with ASSAY_METRICS=1', () => {
    let server: InProcessServer;
    const scrape = async () => {
      const answer = await server.client.request('/metrics', undefined, { method: 'GET', key: null });
      expect(answer.status).toBe(200);
      return answer.text;
    };

    beforeAll(async () => {
      server = await startInProcess({ ASSAY_INIT_ORG: 'acme', ASSAY_INIT_API_KEY: INIT_KEY, ASSAY_METRICS: '1' });
    });
    afterAll(() => server.close());

    it('answers a loopback peer without a key, in the Prometheus text format', async () => {
      const answer = await server.client.request('/metrics', undefined, { method: 'GET', key: null });
      expect(answer.status).toBe(200);
      expect(answer.headers.get('content-type')).toContain('text/plain');
      expect(answer.text).toContain('# TYPE assay_http_requests_total counter');
      expect(answer.text).toContain('# TYPE assay_trials gauge');
      expect(answer.text).toContain('assay_projection_lag_seconds');
      // The embedded store: this instance projects its own read models.
      expect(sample(answer.text, 'assay_projection_owner')).toBe(1);
    });

    it('moves its counters when a batch runs: requests by operation and status, trials by outcome, events', async () => {
      const before = await scrape();
      const passing = await server.client.call('evals.batches.start', startBody({ trials: 2 }));
      const failing = await server.client.call(
        'evals.batches.start',
        startBody({ cases: [{ id: 'no-file', variables: { word: 'x' }, verify: 'test -f nothing' }] }),
      );
      await waitForBatch(server.client, passing.body.id);
      await waitForBatch(server.client, failing.body.id);
      await server.client.call('evals.batches.get', { id: 'bat_none' });
      // The request's own line is counted once its answer is sent.
      let after = '';
      await waitUntil(async () => {
        after = await scrape();
        return sample(after, 'assay_http_requests_total', { operation: 'evals.batches.get', status: '404' }) >= 1;
      }, 5000);
      const delta = (name: string, labels: Record<string, string> = {}) => sample(after, name, labels) - sample(before, name, labels);
      expect(delta('assay_http_requests_total', { operation: 'evals.batches.start', method: 'POST', status: '200' })).toBe(2);
      expect(delta('assay_http_request_duration_seconds_count', { operation: 'evals.batches.start' })).toBe(2);
      expect(delta('assay_trials_finished_total', { outcome: 'passed' })).toBe(2);
      expect(delta('assay_trials_finished_total', { outcome: 'failed' })).toBe(1);
      expect(delta('assay_trials_started_total')).toBe(3);
      expect(delta('assay_events_appended_total', { type: 'BatchFinished' })).toBe(2);
      expect(sample(after, 'assay_trials', { state: 'running' })).toBe(0);
      // Unknown paths share one label instead of one each.
      await server.client.request('/no/such/path', undefined, { method: 'GET' });
      await waitUntil(async () => sample(await scrape(), 'assay_http_requests_total', { operation: 'unmatched', status: '404' }) >= 1, 5000);
    });

    it('counts a fourth running batch refused by the rule of three', async () => {
      const slow = startBody({ variants: [{ harness: 'command', model: 'none', profile: { run: 'sleep 3; echo hello > out.txt' } }] });
      const running = await Promise.all([1, 2, 3].map(() => server.client.call('evals.batches.start', slow)));
      const refused = await server.client.call('evals.batches.start', slow);
      expect(refused.status).toBe(409);
      let text = '';
      await waitUntil(async () => {
        text = await scrape();
        return sample(text, 'assay_refusals_total', { operation: 'evals.batches.start', reason: 'rule_of_three' }) === 1;
      }, 5000);
      expect(sample(text, 'assay_trials', { state: 'running' }) + sample(text, 'assay_trials', { state: 'queued' })).toBeGreaterThan(0);
      for (const started of running) await waitForBatch(server.client, started.body.id);
    });
  });

  it('refuses a peer outside ASSAY_METRICS_ALLOW with the 404 of an unknown path', async () => {
    const server = await startInProcess({ ASSAY_METRICS: '1', ASSAY_METRICS_ALLOW: '10.0.0.0/8' });
    try {
      const answer = await server.client.request('/metrics', undefined, { method: 'GET' });
      expect([answer.status, answer.body._tag]).toEqual([404, 'NotFound']);
    } finally {
      await server.close();
    }
  });
});
