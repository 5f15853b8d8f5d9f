import * as fs from 'node:fs';
import { tmpdir } from 'node:os';
import * as path from 'node:path';
import { describeWithBubblewrap } from '../support/bubblewrap';
import { startBody, waitForBatch } from '../support/evals';
import { ApiClient } from '../support/http-client';
import { INIT_KEY, InProcessServer, startInProcess } from '../support/servers';

/** The trial limits of ASSAY_CONFIG over real HTTP: the trial is failed, and says which limit. */
describeWithBubblewrap('per-trial limits from ASSAY_CONFIG', () => {
  let server: InProcessServer;
  let api: ApiClient;
  let configDir: string;

  beforeAll(async () => {
    configDir = fs.mkdtempSync(path.join(tmpdir(), 'assay-cfg-'));
    const configPath = path.join(configDir, 'assay.yaml');
    fs.writeFileSync(configPath, 'defaultSandbox: bubblewrap\nlimits: { workspaceMb: 8, tmpMb: 8 }\n');
    server = await startInProcess({ ASSAY_INIT_ORG: 'acme', ASSAY_INIT_API_KEY: INIT_KEY, ASSAY_CONFIG: configPath });
    api = server.client;
  });

  afterAll(async () => {
    await server.close();
    fs.rmSync(configDir, { recursive: true, force: true });
  });

  it('fails a trial whose agent fills its workspace, naming the limit, and passes one that stays within it', async () => {
    const variants = [
      {
        harness: 'command',
        model: 'greedy',
        profile: { run: 'dd if=/dev/zero of=a bs=1M count=6 && dd if=/dev/zero of=b bs=1M count=6 && echo hello > out.txt' },
      },
      { harness: 'command', model: 'modest', profile: { run: 'dd if=/dev/zero of=a bs=1M count=2 && echo hello > out.txt' } },
    ];
    const started = await api.call('evals.batches.start', startBody({ variants }));
    expect(started.status).toBe(200);
    const batch = await waitForBatch(api, started.body.id);
    const trialOf = (model: string) => batch.runs.find((run: { variant: { model: string } }) => run.variant.model === model).trials[0];
    expect({ status: trialOf('greedy').status, failure: trialOf('greedy').failure }).toEqual({
      status: 'failed',
      failure: expect.stringMatching(/^the agent hit a limit: the trial's directory .* over limits\.workspaceMb \(8 MB\)$/),
    });
    expect({ status: trialOf('modest').status, failure: trialOf('modest').failure }).toEqual({ status: 'passed', failure: null });
  });
});
