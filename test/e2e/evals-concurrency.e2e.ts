import { ApiClient } from '../support/http-client';
import { startBody, waitForBatch } from '../support/evals';
import { INIT_KEY, InProcessServer, startInProcess } from '../support/servers';

const RULE_OF_THREE = 'This organization already has 3 batches running, and may have 3 at once. Wait for one to finish.';

/** The rule of three, enforced by the slots stream's expected revision. */
describe('evals: at most three running batches per organization', () => {
  let server: InProcessServer;
  let api: ApiClient;
  const sleeper = (seconds: number) =>
    startBody({ variants: [{ harness: 'command', model: 'm', profile: { run: `sleep ${seconds}; echo hello > out.txt` } }] });

  beforeAll(async () => {
    server = await startInProcess({ ASSAY_INIT_ORG: 'acme', ASSAY_INIT_API_KEY: INIT_KEY });
    api = server.client;
  });

  afterAll(() => server.close());

  it('answers 409 to a fourth start, and admits one again once a batch finished', async () => {
    const started = [];
    for (let i = 0; i < 3; i += 1) {
      const answer = await api.call('evals.batches.start', sleeper(1 + i));
      expect(answer.status).toBe(200);
      started.push(answer.body.id);
    }
    const fourth = await api.call('evals.batches.start', sleeper(1));
    expect(fourth.status).toBe(409);
    expect(fourth.body).toEqual({ _tag: 'Conflict', message: RULE_OF_THREE });
    await waitForBatch(api, started[0]);
    const admitted = await api.call('evals.batches.start', sleeper(0));
    expect(admitted.status).toBe(200);
    for (const id of [...started, admitted.body.id]) await waitForBatch(api, id);
  });

  it('admits exactly 3 of 20 simultaneous starts, and frees every slot at the end', async () => {
    const answers = await Promise.all(Array.from({ length: 20 }, () => api.call('evals.batches.start', sleeper(1))));
    const admitted = answers.filter((answer) => answer.status === 200);
    const refused = answers.filter((answer) => answer.status === 409);
    expect(admitted).toHaveLength(3);
    expect(refused).toHaveLength(17);
    expect(refused.every((answer) => answer.body.message === RULE_OF_THREE)).toBe(true);
    for (const answer of admitted) expect((await waitForBatch(api, answer.body.id)).status).toBe('finished');

    const slots = await server.runtime.eventStore.readStream('batchslots-acme');
    const taken = slots.filter((event) => event.type === 'BatchSlotTaken').length;
    const released = slots.filter((event) => event.type === 'BatchSlotReleased').length;
    expect(released).toBe(taken);
    const again = await Promise.all(Array.from({ length: 3 }, () => api.call('evals.batches.start', sleeper(0))));
    expect(again.map((answer) => answer.status)).toEqual([200, 200, 200]);
    for (const answer of again) await waitForBatch(api, answer.body.id);
  });
});
