import { writeFileSync } from 'node:fs';
import * as path from 'node:path';
import { makeRepositoryIn, startBody, waitForBatch } from '../support/evals';
import type { ApiClient } from '../support/http-client';
import { INIT_KEY, InProcessServer, startInProcess } from '../support/servers';
import { TempDirs } from '../support/trial-fixtures';

const dirs = new TempDirs();
afterAll(() => dirs.removeAll());

/** A server on `dataDir` whose ASSAY_CONFIG is `yaml`. */
function serverWith(yaml: string, dataDir = dirs.make('assay-data-')): Promise<InProcessServer> {
  const config = path.join(dirs.make('assay-cfg-'), 'assay.yaml');
  writeFileSync(config, yaml);
  return startInProcess({ ASSAY_INIT_ORG: 'acme', ASSAY_INIT_API_KEY: INIT_KEY, ASSAY_DATA_DIR: dataDir, ASSAY_CONFIG: config });
}

const repoCase = (url: string) => ({ id: 'c', variables: { word: 'x' }, verify: 'true', source: { kind: 'repo', url, ref: null } });

describe('repository sources: only https unless the operator allows more', () => {
  let server: InProcessServer;
  let api: ApiClient;

  beforeAll(async () => {
    // A server that allows unsandboxed trials (for hosts without bubblewrap) and nothing else.
    server = await serverWith('allowUnsandboxed: true\n');
    api = server.client;
  });
  afterAll(() => server.close());

  async function refused(body: unknown): Promise<string> {
    const before = await server.runtime.eventStore.headPosition();
    const answer = await api.call('evals.batches.start', body);
    expect(answer.status).toBe(400);
    expect(answer.body._tag).toBe('BadRequest');
    expect(await server.runtime.eventStore.headPosition()).toBe(before);
    return answer.body.message;
  }

  it.each([
    ['file:///srv/repo.git', /cases\[0\]\.source\.url names a repository on the server itself/],
    ['/srv/repo.git', /cases\[0\]\.source\.url names a repository on the server itself/],
    ['../repo', /cases\[0\]\.source\.url names a repository on the server itself/],
    ['http://example.com/repo.git', /cases\[0\]\.source\.url uses http:\/\/, which is not allowed; use https:\/\//],
    ['git://example.com/repo.git', /uses git:\/\//],
    ['ext::sh -c touch% /tmp/x', /contains a backslash, a space or a control character|remote helper/],
    ['ext::true', /names a git remote helper/],
    ['https://127.0.0.1/x.git', /names 127\.0\.0\.1, a loopback, link-local or private address/],
    ['https://2130706433/x.git', /names 127\.0\.0\.1/],
    ['https://localhost/x.git', /names localhost/],
    ['https://LOCALHOST./x.git', /names localhost/],
    ['https://[::1]/x.git', /names ::1/],
    ['https://[::ffff:127.0.0.1]/x.git', /names ::ffff:7f00:1/],
    ['https://169.254.169.254/latest', /names 169\.254\.169\.254/],
    ['https://10.1.2.3/x.git', /names 10\.1\.2\.3/],
    ['https://0.0.0.0/x.git', /names 0\.0\.0\.0/],
    ['ssh://git@example.com/org/repo.git', /uses ssh, which this server does not allow/],
    ['git@example.com:org/repo.git', /uses ssh, which this server does not allow/],
  ])('refuses %s with 400 naming cases[0].source.url', async (url, message) => {
    expect(await refused(startBody({ cases: [repoCase(url)] }))).toMatch(message);
  });

  it('names suite.source.url for the suite source', async () => {
    const body = startBody({ suite: { id: 'greetings', prompt: 'p {{word}}', source: { kind: 'repo', url: '/srv/repo', ref: null } } });
    expect(await refused(body)).toMatch(/^suite\.source\.url names a repository on the server itself/);
  });

  it('accepts an https url of a public host name (the clone resolves it later)', async () => {
    const answer = await api.call(
      'evals.batches.start',
      startBody({
        cases: [repoCase('https://example.com/org/repo.git')],
        variants: [{ harness: 'command', model: 'm', sandbox: 'sandbox_kind_3', profile: { run: 'true' } }],
      }),
    );
    // sandbox_kind_3 has no driver here: the trial is voided before any clone is tried.
    expect(answer.status).toBe(200);
    const batch = await waitForBatch(api, answer.body.id);
    expect(batch.status).toBe('finished');
  });
});

describe('repository sources the operator allows', () => {
  it('clones a local repository with repositories.allowLocal, and refuses it again at evals.cases.run once the setting is gone', async () => {
    const dataDir = dirs.make('assay-data-');
    const repo = makeRepositoryIn(dirs.make('assay-repo-'));
    const local = await serverWith('allowUnsandboxed: true\nrepositories: { allowLocal: true }\n', dataDir);
    try {
      const body = startBody({
        cases: [{ id: 'local', variables: { word: 'x' }, verify: 'grep -q two version.txt', source: { kind: 'repo', url: `file://${repo.url}`, ref: null } }],
      });
      const started = await local.client.call('evals.batches.start', body);
      expect(started.status).toBe(200);
      const run = (await local.client.call('evals.runs.get', { id: started.body.runs[0].id })).body;
      await waitForBatch(local.client, started.body.id);
      expect((await local.client.call('evals.runs.get', { id: run.id })).body.trials[0].status).toBe('passed');
    } finally {
      await local.close();
    }
    const strict = await serverWith('allowUnsandboxed: true\n', dataDir);
    try {
      const before = await strict.runtime.eventStore.headPosition();
      const rerun = await strict.client.call('evals.cases.run', { id: 'local', trials: 1 });
      expect(rerun.status).toBe(400);
      expect(rerun.body.message).toMatch(/^cases\[0\]\.source\.url names a repository on the server itself/);
      expect(await strict.runtime.eventStore.headPosition()).toBe(before);
    } finally {
      await strict.close();
    }
  });

  it('accepts ssh with repositories.allowSsh and loopback hosts with allowPrivateHosts (the clone then fails on the closed port)', async () => {
    const server = await serverWith('allowUnsandboxed: true\nrepositories: { allowSsh: true, allowPrivateHosts: true }\n');
    try {
      for (const url of ['ssh://git@127.0.0.1:1/repo.git', 'https://127.0.0.1:1/repo.git']) {
        const started = await server.client.call('evals.batches.start', startBody({ cases: [repoCase(url)] }));
        expect(started.status).toBe(200);
        await waitForBatch(server.client, started.body.id);
        const trial = (await server.client.call('evals.runs.get', { id: started.body.runs[0].id })).body.trials[0];
        expect(trial.status).toBe('void');
        expect(trial.failure).toMatch(/^git clone of .*127\.0\.0\.1:1\/repo\.git failed/);
      }
    } finally {
      await server.close();
    }
  });
});
