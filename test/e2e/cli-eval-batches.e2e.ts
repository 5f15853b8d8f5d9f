import * as fs from 'node:fs';
import * as path from 'node:path';
import { localBody } from '../support/runner';
import { batchIdsIn, evalCli } from '../support/eval-cli';
import { INIT_KEY, InProcessServer, startInProcess, tempDir, TEST_CONSENT_CONFIG, waitUntil } from '../support/servers';

/** A suite of `cases` cases, `variants` variants (the command harness: echo hello) and `trials` trials. */
function suiteYaml(options: { id: string; cases: number; variants: number; trials: number; run?: string }): string {
  const cases = Array.from({ length: options.cases }, (_, index) => `  - { id: ${options.id}-${index + 1}, verify: grep -q hello out.txt }`);
  const variants = Array.from(
    { length: options.variants },
    (_, index) => `  - { harness: command, model: model-${index + 1}, profile: { run: '${options.run ?? 'echo hello > out.txt'}' } }`,
  );
  return [
    `name: ${options.id}`,
    `suite: { id: ${options.id}, prompt: "Write hello" }`,
    'cases:',
    ...cases,
    'variants:',
    ...variants,
    `trials: ${options.trials}`,
    '',
  ].join('\n');
}

/**
 * A suite over a batch's 100 trials, and an organization running its 3 batches: `assay eval`
 * splits the suite by case, starts each batch as a slot frees, and follows them as one.
 */
describe('assay eval, a suite of several batches', () => {
  let server: InProcessServer;
  let dir: string;
  const holders: string[] = [];

  beforeAll(async () => {
    server = await startInProcess({ ASSAY_INIT_ORG: 'acme', ASSAY_INIT_API_KEY: INIT_KEY });
  });
  afterAll(() => server.close());
  beforeEach(() => {
    dir = tempDir('assay-cli-batches-');
  });
  afterEach(async () => {
    for (const id of holders.splice(0)) await release(id);
  });

  const cli = evalCli({
    dir: () => dir,
    env: () => ({ ASSAY_URL: server.url, ASSAY_API_KEY: INIT_KEY, ASSAY_CONFIG: TEST_CONSENT_CONFIG, TMPDIR: tempDir('assay-cli-tmp-') }),
  });

  /** A batch of the organization that holds a slot until released: a local batch whose runner never leases. */
  const holdSlot = async (id: string): Promise<string> => {
    const answer = await server.client.call('runner.batches.start', localBody({ suite: { id, prompt: 'Write {{word}} into out.txt' } }));
    expect(answer.status).toBe(200);
    holders.push(answer.body.id);
    return answer.body.id as string;
  };
  const release = async (id: string) => {
    const index = holders.indexOf(id);
    if (index >= 0) holders.splice(index, 1);
    await server.client.call('runner.batches.finish', { id, cancelled: true });
  };
  const running = async (): Promise<string[]> =>
    (await server.client.call('evals.batches.list', { limit: 50 })).body.batches.filter((b: any) => b.status === 'running').map((b: any) => b.id);
  const getBatch = async (id: string) => (await server.client.call('evals.batches.get', { id })).body;

  it('runs 102 trials as 2 batches of whole cases beside a third batch of the organization, never more than 3 at once, as one summary, JUnit and JSON', async () => {
    const holder = await holdSlot('slot-holder');
    const file = cli.write('textkit.yaml', suiteYaml({ id: 'textkit', cases: 17, variants: 2, trials: 3 }));
    const json = path.join(dir, 'textkit.json');
    const junit = path.join(dir, 'textkit.xml');
    const startedAt = Date.now();
    const running$ = cli.start([file, '--json', json, '--junit', junit]);
    // Sampled while the suite runs: the organization never runs more than 3 batches.
    const seen: number[] = [];
    while (running$.child.exitCode === null) {
      seen.push((await running()).length);
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
    const result = await running$.finished;
    expect(result.stderr).toBe('');
    expect(result.code).toBe(0);
    expect(Date.now() - startedAt).toBeLessThan(60_000);
    expect(Math.max(...seen)).toBe(3);
    expect(result.stdout.split('\n')[0]).toBe('textkit: 2 batches (17 cases × 2 variants × 3 trials = 102 trials)');
    expect(result.stdout).not.toContain('waits for a slot');

    const ids = batchIdsIn(result.stdout);
    expect(ids).toHaveLength(2);
    expect(result.stdout).toContain(`textkit: batch ${ids[0]} (1/2)`);
    expect(result.stdout).toContain(`textkit: batch ${ids[1]} (2/2)`);
    const batches = await Promise.all(ids.map(getBatch));
    // Whole cases in each, 9 and 8 of them; every case once; each batch within 100 trials.
    const casesOf = (batch: any) => [...new Set(batch.runs.map((run: any) => run.case.id))];
    expect(batches.map((batch) => casesOf(batch).length)).toEqual([9, 8]);
    expect(batches.flatMap(casesOf).sort()).toEqual(Array.from({ length: 17 }, (_, index) => `textkit-${index + 1}`).sort());
    for (const batch of batches) {
      expect(batch.status).toBe('finished');
      expect(batch.runs).toHaveLength(casesOf(batch).length * 2);
      expect(batch.runs.flatMap((run: any) => run.trials).length).toBeLessThanOrEqual(100);
    }
    // The two ran together, beside the holder: the second started before the first ended.
    expect(Date.parse(batches[1].startedAt)).toBeLessThan(Date.parse(batches[0].finishedAt));
    expect(await running()).toEqual([holder]);

    // One summary over both: 51 trials a variant.
    expect(result.stdout).toContain(`textkit: batch ${ids[0]} finished, batch ${ids[1]} finished`);
    expect(result.stdout).toMatch(/command\/model-1\s+51\s+51\s+0\s+0\s+100%/);
    expect(result.stdout).toMatch(/command\/model-2\s+51\s+51\s+0\s+0\s+100%/);
    const written = JSON.parse(fs.readFileSync(json, 'utf8'));
    expect(written).toMatchObject({ name: 'textkit', suite: 'textkit' });
    expect(written.batches.map((batch: any) => batch.id)).toEqual(ids);
    expect(written.batches).toEqual(batches);
    const xml = fs.readFileSync(junit, 'utf8');
    expect(xml.match(/<testsuite /g)).toHaveLength(2);
    expect(xml.match(/<testcase /g)).toHaveLength(34);
  }, 90_000);

  it('waits for a slot while the organization runs 3 batches, and starts once one ends', async () => {
    const slots = [await holdSlot('hold-a'), await holdSlot('hold-b'), await holdSlot('hold-c')];
    const file = cli.write('queued.yaml', suiteYaml({ id: 'queued', cases: 2, variants: 1, trials: 1 }));
    const queued = cli.start([file, '--wait-timeout', '2m']);
    await waitUntil(async () => {
      if (queued.child.exitCode !== null) throw new Error(`assay eval ended before waiting: ${queued.stdout()}${queued.stderr()}`);
      return queued.stdout().includes('waits for a slot');
    }, 10_000);
    expect(queued.stdout().split('\n')[0]).toBe(
      'queued: batch waits for a slot: this organization runs as many batches as it may at once (3); waiting up to 2m',
    );
    // Still waiting a while later: it started nothing, and did not give up.
    await new Promise((resolve) => setTimeout(resolve, 2500));
    expect(batchIdsIn(queued.stdout())).toEqual([]);
    expect(await running()).toHaveLength(3);
    expect(queued.child.exitCode).toBeNull();

    const releasedAt = Date.now();
    await release(slots[0]);
    const result = await queued.finished;
    expect(result.code).toBe(0);
    const [batchId] = batchIdsIn(result.stdout);
    const batch = await getBatch(batchId);
    expect(batch.status).toBe('finished');
    // It started after the slot came free, within one pause of the backoff (at most 30 s; here a few).
    expect(Date.parse(batch.startedAt)).toBeGreaterThanOrEqual(releasedAt - 5);
    expect(Date.parse(batch.startedAt) - releasedAt).toBeLessThan(10_000);
  }, 60_000);

  it('gives up after --wait-timeout with exit 1, saying why and which cases did not run', async () => {
    for (const id of ['full-a', 'full-b', 'full-c']) await holdSlot(id);
    const file = cli.write('late.yaml', suiteYaml({ id: 'late', cases: 2, variants: 1, trials: 1 }));
    const startedAt = Date.now();
    const result = await cli.run([file, '--wait-timeout', '2s']);
    const took = Date.now() - startedAt;
    expect(result.code).toBe(1);
    expect(took).toBeGreaterThanOrEqual(2000);
    expect(took).toBeLessThan(8000);
    expect(result.stderr).toContain('late.yaml: batch could not start: no slot came free within --wait-timeout 2s');
    expect(result.stderr).toContain('already has 3 batches running');
    expect(result.stderr).toContain('its cases did not run (late-1, late-2)');
    expect(await running()).toHaveLength(3);
    // A local suite's start takes a slot too, and waits the same way.
    const local = await cli.run([file, '--local', '--wait-timeout', '1s']);
    expect(local.code).toBe(1);
    expect(local.stdout).toContain('late: batch waits for a slot');
    expect(local.stderr).toContain('late.yaml: batch could not start: no slot came free within --wait-timeout 1s');
  }, 30_000);

  it('refuses a --wait-timeout it cannot read', async () => {
    const file = cli.write('suite.yaml', suiteYaml({ id: 'bad-wait', cases: 1, variants: 1, trials: 1 }));
    for (const value of ['soon', '25h', '-1m']) {
      const result = await cli.run([file, '--wait-timeout', value]);
      expect(result.code).toBe(2);
      expect(result.stderr).toContain('--wait-timeout takes a duration such as 90s, 30m or 2h, at most 24h');
    }
  });

  it('runs a local suite of several batches one after another, so --concurrency bounds the trials here', async () => {
    const file = cli.write('local.yaml', suiteYaml({ id: 'local-many', cases: 21, variants: 1, trials: 5 }));
    const result = await cli.run([file, '--local', '--concurrency', '16']);
    expect(result.code).toBe(0);
    expect(result.stdout.split('\n')[0]).toBe('local-many: 2 batches (21 cases × 1 variant × 5 trials = 105 trials)');
    const ids = batchIdsIn(result.stdout);
    expect(result.stdout).toContain(`local-many: batch ${ids[0]} (local, 1/2)`);
    const [first, second] = await Promise.all(ids.map(getBatch));
    expect([first.local, second.local]).toEqual([true, true]);
    expect(Date.parse(second.startedAt)).toBeGreaterThanOrEqual(Date.parse(first.finishedAt));
    expect(result.stdout).toMatch(/command\/model-1\s+105\s+105\s+0\s+0/);
    // Sixteen trials at once listen on one signal: no warning of a leak.
    expect(result.stderr).not.toContain('MaxListenersExceededWarning');
  }, 90_000);
});
