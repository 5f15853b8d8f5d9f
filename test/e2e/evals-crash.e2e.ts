import { startBody, waitForBatch } from '../support/evals';
import { ChildServer, INIT_KEY, startChild, tempDir, waitUntil } from '../support/servers';

const ABANDONED = 'abandoned: the instance running this trial stopped';

/**
 * SIGKILL in the middle of a batch: the restarted server voids what was running and finishes the
 * rest. Under a new instance name it waits for the dead claims to lapse (a short lease here);
 * under the same ASSAY_INSTANCE_ID it knows at once that they were its own.
 */
describe('evals: a batch survives the server being killed', () => {
  let server: ChildServer | null = null;

  afterEach(async () => {
    await server?.stop('SIGKILL');
  });

  it('voids the interrupted trials as abandoned once their claims lapse, runs the queued ones, and frees the slot', async () => {
    const env = {
      ASSAY_DATA_DIR: tempDir(),
      ASSAY_INIT_ORG: 'acme',
      ASSAY_INIT_API_KEY: INIT_KEY,
      ASSAY_MAX_PARALLEL_TRIALS: '2',
      ASSAY_TRIAL_LEASE_MS: '2000',
    };
    server = await startChild(env);
    const body = startBody({ variants: [{ harness: 'command', model: 'm', profile: { run: 'sleep 2; echo hello > out.txt' } }], trials: 5 });
    const started = await server.client.call('evals.batches.start', body);
    expect(started.status).toBe(200);
    const trialsOf = async () => (await server!.client.call('evals.batches.get', { id: started.body.id })).body.runs[0].trials;
    await waitUntil(async () => (await trialsOf()).filter((t: any) => t.status === 'running').length === 2, 20000);

    expect(await server.stop('SIGKILL')).toBeNull();
    server = await startChild(env);
    const batch = await waitForBatch(server.client, started.body.id, 60000);

    expect(batch.status).toBe('finished');
    const trials = batch.runs[0].trials;
    const abandoned = trials.filter((t: any) => t.failure === ABANDONED);
    expect(abandoned).toHaveLength(2);
    expect(abandoned.every((t: any) => t.status === 'void')).toBe(true);
    expect(trials.filter((t: any) => t.status === 'passed')).toHaveLength(3);
    expect(batch.runs[0].distribution).toMatchObject({ trials: 5, passed: 3, voided: 2 });

    const next = await Promise.all([1, 2, 3].map(() => server!.client.call('evals.batches.start', startBody())));
    expect(next.map((answer) => answer.status)).toEqual([200, 200, 200]);
    for (const answer of next) await waitForBatch(server.client, answer.body.id);
  });

  it('voids a conversation killed between its turns at once when restarted under the same instance name, and never resumes it', async () => {
    // The default lease (30 s) outlasts the wait below: only the instance's own name can void it in time.
    const env = { ASSAY_DATA_DIR: tempDir(), ASSAY_INIT_ORG: 'acme', ASSAY_INIT_API_KEY: INIT_KEY, ASSAY_INSTANCE_ID: 'the-only-one' };
    server = await startChild(env);
    // Turn 2 marks that it began, then waits: the kill lands mid-conversation.
    const run = 'if [ "$ASSAY_TURN" = 2 ]; then touch second-turn-began; sleep 30; fi; echo hello > out.txt';
    const body = startBody({
      cases: [{ id: 'talk', variables: { word: 'hello' }, user: { kind: 'scripted', replies: ['again', 'once more'] }, verify: 'true' }],
      variants: [{ harness: 'command', model: 'm', profile: { run } }],
    });
    const started = await server.client.call('evals.batches.start', body);
    expect(started.status).toBe(200);
    const trialOf = async () => (await server!.client.call('evals.batches.get', { id: started.body.id })).body.runs[0].trials[0];
    await waitUntil(async () => (await trialOf()).status === 'running', 20000);
    // The second turn starts about as soon as the first ends; a little slack lets it begin.
    await new Promise((resolve) => setTimeout(resolve, 1500));

    expect(await server.stop('SIGKILL')).toBeNull();
    server = await startChild(env);
    const batch = await waitForBatch(server.client, started.body.id, 20000);

    expect(batch.status).toBe('finished');
    const trial = batch.runs[0].trials[0];
    expect(trial).toMatchObject({ status: 'void', failure: ABANDONED, endReason: null });
    // Nothing of the half conversation is taken for a result: no turn was recorded, none re-run.
    expect(trial.trajectory).toEqual([]);
  });
});
