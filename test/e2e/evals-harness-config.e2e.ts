import * as fs from 'node:fs';
import * as path from 'node:path';
import { ApiClient } from '../support/http-client';
import { startBody, waitForBatch } from '../support/evals';
import { INIT_KEY, InProcessServer, startInProcess, tempDir } from '../support/servers';

const CONFIG = `
allowUnsandboxed: true
repositories: { allowLocal: true, allowPrivateHosts: true }
harnesses:
  harness_kind_1:
    version: "9.9.9"
    run: "printf '%s' {{prompt}} > prompt.txt; printf '%s' {{model}} > model.txt; echo 'usage in=1200 out=300'"
    usage:
      format: regex
      inputTokens: "in=(\\\\d+)"
      outputTokens: "out=(\\\\d+)"
sandboxes:
  sandbox_kind_1: { driver: process }
`;

/** Harness kinds and sandbox kinds defined by the operator's ASSAY_CONFIG. */
describe('evals: operator-configured harness and sandbox kinds', () => {
  let server: InProcessServer;
  let api: ApiClient;

  beforeAll(async () => {
    const dir = tempDir();
    const configPath = path.join(dir, 'assay.yaml');
    fs.writeFileSync(configPath, CONFIG);
    server = await startInProcess({ ASSAY_INIT_ORG: 'acme', ASSAY_INIT_API_KEY: INIT_KEY, ASSAY_CONFIG: configPath });
    api = server.client;
  });

  afterAll(() => server.close());

  it('runs a configured harness with the prompt and model, reads its usage and estimates the model cost', async () => {
    const body = startBody({
      cases: [{ id: 'configured', variables: { word: 'it' }, verify: 'grep -q "Write it into out.txt" prompt.txt && grep -q claude-sonnet-4-5 model.txt' }],
      variants: [{ harness: 'harness_kind_1', model: 'claude-sonnet-4-5' }],
    });
    const started = await api.call('evals.batches.start', body);
    const batch = await waitForBatch(api, started.body.id);
    const run = batch.runs[0];
    const trial = run.trials[0];
    expect(trial.status).toBe('passed');
    expect(run.harnessVersion).toBe('9.9.9');
    expect(trial.usage).toMatchObject({ inputTokens: 1200, outputTokens: 300, totalTokens: 1500 });
    const model = trial.costs.components.find((c: any) => c.component === 'model');
    expect(model).toMatchObject({ classification: 'estimate', usd: 0.0081, source: 'model-catalogue' });
    expect(trial.costs).toMatchObject({ estimatedEquivalentUsd: 0.0081, knownActualUsd: 0, allocatedUsd: 0, incomplete: false });
    expect(run.costs.estimatedEquivalentUsd).toBe(0.0081);
    expect(batch.costs.estimatedEquivalentUsd).toBe(0.0081);
  });

  it('maps a sandbox kind to a driver, and voids the trials of an unmapped one', async () => {
    const variant = (sandbox: string) => ({ harness: 'command', model: 'm', sandbox, profile: { run: 'echo hello > out.txt' } });
    const started = await api.call('evals.batches.start', startBody({ variants: [variant('sandbox_kind_1'), variant('sandbox_kind_2')] }));
    const batch = await waitForBatch(api, started.body.id);
    expect(batch.runs[0].trials[0].status).toBe('passed');
    expect(batch.runs[1].trials[0]).toMatchObject({ status: 'void', failure: 'sandbox_kind_2 has no driver configured on this server' });
    const sandboxCost = batch.runs[1].trials[0].costs.components.find((c: any) => c.component === 'sandbox');
    expect(sandboxCost).toMatchObject({ classification: 'unknown', usd: null });
    expect(batch.runs[1].trials[0].costs.incomplete).toBe(true);
  });

  it('prices nothing for an unknown model: unknown, null, incomplete', async () => {
    const started = await api.call(
      'evals.batches.start',
      startBody({ variants: [{ harness: 'harness_kind_1', model: 'not-in-catalogue' }], cases: [{ id: 'u', variables: { word: 'x' }, verify: 'true' }] }),
    );
    const batch = await waitForBatch(api, started.body.id);
    const model = batch.runs[0].trials[0].costs.components.find((c: any) => c.component === 'model');
    expect(model).toMatchObject({ classification: 'unknown', usd: null });
  });
});
