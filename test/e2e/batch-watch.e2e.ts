import { startBody, waitForBatch } from '../support/evals';
import { readEventStream } from '../support/event-stream';
import { INIT_KEY, InProcessServer, keyFor, startInProcess, waitUntil } from '../support/servers';

/**
 * evals.batches.watch over real HTTP, on real batches: the events of a batch in order, then the
 * end of the stream; resuming with Last-Event-ID; the organization's batches only; a stream
 * opened on a running batch ends with it; the bound on open streams.
 */
describe('evals.batches.watch', () => {
  let server: InProcessServer;
  const watchUrl = (id: string) => `${server.url}/v1/evals.batches.watch?id=${encodeURIComponent(id)}`;

  beforeAll(async () => {
    server = await startInProcess({ ASSAY_INIT_ORG: 'acme', ASSAY_INIT_API_KEY: INIT_KEY, ASSAY_WATCH_STREAMS_PER_ORG: '2' });
  });
  afterAll(() => server.close());

  async function finishedBatch(body = startBody({ trials: 2 })): Promise<string> {
    const started = await server.client.call('evals.batches.start', body);
    expect(started.status).toBe(200);
    await waitForBatch(server.client, started.body.id);
    return started.body.id as string;
  }

  it('replays a finished batch event by event, in log order, then closes', async () => {
    const batchId = await finishedBatch();
    const batch = (await server.client.call('evals.batches.get', { id: batchId })).body;
    const stream = await readEventStream(watchUrl(batchId), INIT_KEY);
    expect(stream.status).toBe(200);
    const names = stream.events.map((event) => event.event);
    expect(names[0]).toBe('batch.started');
    expect(names.at(-1)).toBe('batch.finished');
    expect(names.filter((name) => name === 'trial.started')).toHaveLength(2);
    expect(names.filter((name) => name === 'trial.scored')).toHaveLength(2);
    expect(names.filter((name) => name === 'run.finished')).toHaveLength(1);
    expect(names.indexOf('run.finished')).toBeGreaterThan(names.lastIndexOf('trial.scored'));
    const ids = stream.events.map((event) => Number(event.id));
    expect(ids).toEqual([...ids].sort((a, b) => a - b));
    expect(new Set(ids).size).toBe(ids.length);
    const runId = batch.runs[0].id;
    for (const event of stream.events) expect(event.data.batchId).toBe(batchId);
    expect(stream.events[0].data).toMatchObject({ runs: 1, trials: 2 });
    const scored = stream.events.filter((event) => event.event === 'trial.scored');
    expect(scored.map((event) => event.data.trialId).sort()).toEqual(batch.runs[0].trials.map((trial: any) => trial.id).sort());
    expect(scored[0].data).toMatchObject({ runId, status: 'passed', failure: null });
    expect(stream.events.find((event) => event.event === 'run.finished')!.data).toMatchObject({ runId, status: 'finished', distribution: { passed: 2 } });
    expect(stream.events.at(-1)!.data).toMatchObject({ status: 'finished', failure: null });
  });

  it('resumes after Last-Event-ID with exactly the events that follow', async () => {
    const batchId = await finishedBatch();
    const all = (await readEventStream(watchUrl(batchId), INIT_KEY)).events;
    for (const cut of [0, 2, all.length - 2]) {
      const rest = await readEventStream(watchUrl(batchId), INIT_KEY, { headers: { 'last-event-id': all[cut].id } });
      expect(rest.events).toEqual(all.slice(cut + 1));
    }
    // After the last event nothing is left: the stream ends at once.
    const none = await readEventStream(watchUrl(batchId), INIT_KEY, { headers: { 'last-event-id': all.at(-1)!.id } });
    expect([none.status, none.events]).toEqual([200, []]);
  });

  it('reports each agent turn of a conversation as turn.ended, the user turns not', async () => {
    const batchId = await finishedBatch(
      startBody({
        cases: [{ id: 'two-turns', variables: { word: 'hello' }, user: { kind: 'scripted', replies: ['again'] }, verify: 'true' }],
        variants: [{ harness: 'command', model: 'none', profile: { run: 'cat > /dev/null; echo "turn $ASSAY_TURN"' } }],
      }),
    );
    const turns = (await readEventStream(watchUrl(batchId), INIT_KEY)).events.filter((event) => event.event === 'turn.ended');
    expect(turns.map((event) => [event.data.turn, event.data.text.trim()])).toEqual([
      [1, 'turn 1'],
      [2, 'turn 2'],
    ]);
  });

  it("answers 404 for another organization's batch and an unknown id, 400 for a bad id, 401 without a key", async () => {
    const batchId = await finishedBatch(startBody());
    const globex = await keyFor(server, 'globex', ['evals:read']);
    const foreign = await readEventStream(watchUrl(batchId), globex.key);
    expect([foreign.status, foreign.body._tag]).toEqual([404, 'NotFound']);
    expect(foreign.body.message).toContain(batchId);
    const unknown = await readEventStream(watchUrl('bat_unknown'), INIT_KEY);
    expect([unknown.status, unknown.body._tag]).toEqual([404, 'NotFound']);
    const tooLong = await readEventStream(watchUrl('b'.repeat(201)), INIT_KEY);
    expect([tooLong.status, tooLong.body._tag, tooLong.body.issues[0].path]).toEqual([400, 'HttpApiDecodeError', ['id']]);
    const missing = await readEventStream(`${server.url}/v1/evals.batches.watch`, INIT_KEY);
    expect([missing.status, missing.body._tag]).toEqual([400, 'HttpApiDecodeError']);
    const badResume = await readEventStream(watchUrl(batchId), INIT_KEY, { headers: { 'last-event-id': 'yesterday' } });
    expect([badResume.status, badResume.body._tag]).toEqual([400, 'BadRequest']);
    const anonymous = await readEventStream(watchUrl(batchId), null);
    expect([anonymous.status, anonymous.body._tag]).toEqual([401, 'Unauthorized']);
    const writer = await keyFor(server, 'acme', ['evals:write']);
    expect((await readEventStream(watchUrl(batchId), writer.key)).status).toBe(403);
    const post = await server.client.request('/v1/evals.batches.watch', { id: batchId });
    expect([post.status, post.body._tag]).toEqual([405, 'MethodNotAllowed']);
  });

  it('follows a running batch live and ends when the batch does', async () => {
    const slow = startBody({ variants: [{ harness: 'command', model: 'none', profile: { run: 'sleep 2; echo hello > out.txt' } }] });
    const started = await server.client.call('evals.batches.start', slow);
    let statusAtOpen = '';
    const stream = await readEventStream(watchUrl(started.body.id), INIT_KEY, {
      onOpen: () => {
        void server.client.call('evals.batches.get', { id: started.body.id }).then((answer) => (statusAtOpen = answer.body.status));
      },
    });
    expect(statusAtOpen).toBe('running');
    expect(stream.events.map((event) => event.event)).toEqual([
      'batch.started',
      'trial.started',
      'turn.ended',
      'trial.scored',
      'run.finished',
      'batch.finished',
    ]);
    expect((await server.client.call('evals.batches.get', { id: started.body.id })).body.status).toBe('finished');
  });

  it('holds at most ASSAY_WATCH_STREAMS_PER_ORG streams per organization, and frees a place when a client leaves', async () => {
    const slow = startBody({ variants: [{ harness: 'command', model: 'none', profile: { run: 'sleep 4; echo hello > out.txt' } }] });
    const started = await server.client.call('evals.batches.start', slow);
    const url = watchUrl(started.body.id);
    // A client that reads the first event and hangs up, then two that stay.
    const leaving = await readEventStream(url, INIT_KEY, { stopAfter: 1 });
    expect(leaving.events[0].event).toBe('batch.started');
    const staying = [readEventStream(url, INIT_KEY), readEventStream(url, INIT_KEY)];
    let refused: any = null;
    await waitUntil(async () => {
      refused = await readEventStream(url, INIT_KEY, { stopAfter: 1 });
      return refused.status === 429;
    }, 10000);
    expect(refused.body).toMatchObject({ _tag: 'TooManyRequests' });
    expect(refused.body.message).toContain('ASSAY_WATCH_STREAMS_PER_ORG');
    // Another organization has places of its own.
    const globex = await keyFor(server, 'globex', ['evals:read']);
    expect((await readEventStream(watchUrl('bat_unknown'), globex.key)).status).toBe(404);
    const ends = await Promise.all(staying);
    for (const end of ends) expect(end.events.at(-1)!.event).toBe('batch.finished');
    // Both ended with the batch: the places are free again.
    expect((await readEventStream(url, INIT_KEY)).status).toBe(200);
  });
});
