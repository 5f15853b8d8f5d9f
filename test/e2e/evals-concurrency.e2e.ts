import type { EventStore } from '#infrastructure/event-store/event-store.port';
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

  it('queues each trial and ends each run with one append each, whatever number of events come between', async () => {
    // The saga's state follows the log a few events behind its own appends: each event in between
    // must not make the same append again (idempotent, but quadratic in the batch's trials).
    const store: EventStore = server.runtime.eventStore;
    const made = new Map<string, number>();
    const append = store.append.bind(store);
    store.append = (stream, events, expected) => {
      const key = `${events[0]?.type ?? 'nothing'} ${stream}`;
      made.set(key, (made.get(key) ?? 0) + 1);
      return append(stream, events, expected);
    };
    try {
      const cases = Array.from({ length: 6 }, (_, index) => ({ id: `case-${index}`, variables: { word: 'hello' }, verify: 'true' }));
      const started = await api.call(
        'evals.batches.start',
        startBody({ cases, trials: 10, variants: [{ harness: 'command', model: 'm', profile: { run: 'true' } }] }),
      );
      expect(started.body).toMatchObject({ id: expect.any(String) });
      expect((await waitForBatch(api, started.body.id)).status).toBe('finished');
    } finally {
      store.append = append;
    }
    const counts = (type: string) => [...made].filter(([key]) => key.startsWith(`${type} `)).map(([, count]) => count);
    expect(counts('TrialQueued')).toEqual(Array.from({ length: 60 }, () => 1));
    expect(counts('RunFinished')).toEqual([1, 1, 1, 1, 1, 1]);
  });
});
