import { execFileSync } from 'node:child_process';
import { mkdirSync, symlinkSync, writeFileSync } from 'node:fs';
import * as path from 'node:path';
import { detectDefaultSandbox } from '#trial-runner';
import { startBody, waitForBatch } from '../support/evals';
import type { ApiClient } from '../support/http-client';
import { ChildServer, INIT_KEY, startChild, startInProcess } from '../support/servers';
import { TempDirs } from '../support/trial-fixtures';

const dirs = new TempDirs();
afterAll(() => dirs.removeAll());

function configFile(yaml: string): string {
  const file = path.join(dirs.make('assay-cfg-'), 'assay.yaml');
  writeFileSync(file, yaml);
  return file;
}

const env = (yaml: string) => ({
  ASSAY_INIT_ORG: 'acme',
  ASSAY_INIT_API_KEY: INIT_KEY,
  ASSAY_DATA_DIR: dirs.make('assay-data-'),
  ASSAY_CONFIG: configFile(yaml),
});

async function runOf(api: ApiClient, body: Record<string, unknown>): Promise<any> {
  const started = await api.call('evals.batches.start', body);
  expect(started.status).toBe(200);
  await waitForBatch(api, started.body.id);
  return (await api.call('evals.runs.get', { id: started.body.runs[0].id })).body;
}

describe("the process sandbox needs the operator's consent", () => {
  it.each([
    ['sandboxes:\n  sandbox_kind_2: { driver: process }\n', /sandboxes\.sandbox_kind_2\.driver: runs trials as plain processes .*set allowUnsandboxed: true/],
    ['defaultSandbox: process\n', /defaultSandbox: runs trials as plain processes .*set allowUnsandboxed: true/],
  ])('a configured process driver without allowUnsandboxed stops the start (%#)', async (yaml, message) => {
    await expect(startInProcess(env(yaml))).rejects.toThrow(message);
  });

  it('with allowUnsandboxed, warns at start and per batch, and every run shows its sandbox driver', async () => {
    const server = await startInProcess(env('defaultSandbox: process\nallowUnsandboxed: true\n'));
    try {
      const warnings = () => server.logs.entries().filter((entry) => entry.level === 'warn' && String(entry.msg ?? entry.message).startsWith('UNSANDBOXED'));
      expect(warnings()).toHaveLength(1);
      const run = await runOf(server.client, startBody());
      expect(run.trials[0].status).toBe('passed');
      expect(run.sandbox).toBe('process');
      expect(warnings()).toHaveLength(2);
      expect(JSON.stringify(warnings()[1])).toContain(run.batchId);
      // A trial voided before any sandbox was made leaves the driver unknown.
      const unmapped = await runOf(
        server.client,
        startBody({ variants: [{ harness: 'command', model: 'm', sandbox: 'sandbox_kind_4', profile: { run: 'true' } }] }),
      );
      expect(unmapped.sandbox).toBeNull();
    } finally {
      await server.close();
    }
  });

  it('shows bubblewrap on runs that ran in it', async () => {
    if ((await detectDefaultSandbox()).driver !== 'bubblewrap') {
      console.log('skipped: bubblewrap does not work on this host');
      return;
    }
    const server = await startInProcess(env('network: false\n'));
    try {
      expect((await runOf(server.client, startBody())).sandbox).toBe('bubblewrap');
    } finally {
      await server.close();
    }
  });
});

describe('a host without bubblewrap (a child server whose PATH has no bwrap)', () => {
  let children: ChildServer[] = [];
  afterEach(async () => {
    await Promise.all(children.map((child) => child.stop()));
    children = [];
  });

  /** A PATH with the tools trials use here, and no bwrap. */
  function pathWithoutBwrap(): string {
    const bin = path.join(dirs.make('assay-bin-'), 'bin');
    mkdirSync(bin);
    for (const tool of ['sh', 'grep', 'cat', 'git', 'sleep']) {
      symlinkSync(execFileSync('sh', ['-c', `command -v ${tool}`], { encoding: 'utf8' }).trim(), path.join(bin, tool));
    }
    return bin;
  }

  async function child(yaml: string): Promise<ChildServer> {
    const started = await startChild({ ...env(yaml), PATH: pathWithoutBwrap(), TMPDIR: dirs.make('assay-tmp-') });
    children.push(started);
    return started;
  }

  it('refuses batches of variants without a sandbox with 409 saying how to allow them, and stores nothing', async () => {
    const server = await child('network: false\n');
    expect(server.output()).toContain('bubblewrap does not work here');
    const answer = await server.client.call('evals.batches.start', startBody());
    expect(answer.status).toBe(409);
    expect(answer.body).toEqual({
      _tag: 'Conflict',
      message: expect.stringMatching(/^variants\[0\]: variants without a sandbox would run as plain processes .*allowUnsandboxed: true/),
    });
    expect((await server.client.call('evals.batches.list', {})).body.total).toBe(0);
  });

  it('runs them as plain processes with allowUnsandboxed, loudly', async () => {
    const server = await child('allowUnsandboxed: true\n');
    expect(server.output()).toContain('UNSANDBOXED');
    const run = await runOf(server.client, startBody());
    expect(run.trials[0].status).toBe('passed');
    expect(run.sandbox).toBe('process');
  });
});
