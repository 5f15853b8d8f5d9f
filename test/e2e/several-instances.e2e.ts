import * as fs from 'node:fs';
import * as path from 'node:path';
import Database from 'better-sqlite3';
import { startBody, waitForBatch } from '../support/evals';
import { EventStoreDbTestServer } from '../support/eventstoredb/server';
import { ChildServer, INIT_KEY, startChild, tempDir, waitUntil } from '../support/servers';

const ABANDONED = 'abandoned: the instance running this trial stopped';
const RULE_OF_THREE = 'This organization already has 3 batches running, and may have 3 at once. Wait for one to finish.';

interface StoredEvent {
  stream: string;
  type: string;
  data: Record<string, unknown>;
}

/** The shared event log, read straight from its SQLite file (read-only, beside the servers). */
function readSqliteLog(dataDir: string): StoredEvent[] {
  const db = new Database(path.join(dataDir, 'events.sqlite'), { readonly: true, fileMustExist: true });
  try {
    const rows = db.prepare('SELECT stream, type, data FROM events ORDER BY position').all() as Array<{ stream: string; type: string; data: string }>;
    return rows.map((row) => ({ stream: row.stream, type: row.type, data: JSON.parse(row.data) as Record<string, unknown> }));
  } finally {
    db.close();
  }
}

/** Which instance claimed each trial (from its TrialStarted), and the trials with an outcome. */
function claimsIn(log: StoredEvent[]): { owner: Map<string, string>; ended: Set<string> } {
  const owner = new Map<string, string>();
  const ended = new Set<string>();
  for (const event of log) {
    const trialId = event.data.trialId as string | undefined;
    if (!trialId) continue;
    if (event.type === 'TrialStarted') owner.set(trialId, event.data.instanceId as string);
    if (event.type === 'TrialScored' || event.type === 'TrialVoided') ended.add(trialId);
  }
  return { owner, ended };
}

/** The event log the instances share: the data directory's SQLite file, or an EventStoreDB server. */
interface SharedLog {
  name: string;
  open(): Promise<void>;
  close(): Promise<void>;
  /** What an instance needs to use it. */
  env(): Record<string, string>;
  read(): StoredEvent[];
}

function sqliteLog(dir: () => string): SharedLog {
  return { name: 'one data directory (SQLite)', open: async () => undefined, close: async () => undefined, env: () => ({}), read: () => readSqliteLog(dir()) };
}

/** EventStoreDB's gRPC test server in this process, reached by each instance over the network; its domain events read in `$all` order. */
function eventStoreDbLog(): SharedLog {
  let server: EventStoreDbTestServer | null = null;
  const running = () => {
    if (!server) throw new Error('the EventStoreDB test server is not running');
    return server;
  };
  return {
    name: 'EventStoreDB over the gRPC test server',
    open: async () => {
      server = await EventStoreDbTestServer.start();
    },
    close: async () => {
      await server?.stop();
      server = null;
    },
    env: () => ({ EVENTSTORE_URL: running().url() }),
    read: () =>
      running()
        .log.all.filter((event) => !event.stream.startsWith('$') && !event.stream.startsWith('auditchain-'))
        .map((event) => ({ stream: event.stream, type: event.type, data: JSON.parse(event.data.toString()) as Record<string, unknown> })),
  };
}

/**
 * Operators run several instances on one store. Here, several `assay serve` processes share one
 * data directory, and one event log (its SQLite file, or an EventStoreDB server), each with its
 * own read models: each trial runs on exactly one of them, a killed one's trials are voided only
 * once its claims lapse, and all agree.
 */
describe.each([['sqlite'], ['eventstoredb']])('several server instances on one event log: %s', (kind) => {
  const children: ChildServer[] = [];
  let dataDir: string;
  const shared = kind === 'sqlite' ? sqliteLog(() => dataDir) : eventStoreDbLog();
  const readLog = () => shared.read();
  let markers: string;
  let config: string;

  const serve = async (instanceId: string, extra: Record<string, string> = {}) => {
    const env = {
      ASSAY_DATA_DIR: dataDir,
      ASSAY_INIT_ORG: 'acme',
      ASSAY_INIT_API_KEY: INIT_KEY,
      ASSAY_CONFIG: config,
      ASSAY_INSTANCE_ID: instanceId,
      ASSAY_MAX_PARALLEL_TRIALS: '2',
      ASSAY_TRIAL_LEASE_MS: '3000',
      ...shared.env(),
      ...extra,
    };
    const child = await startChild(env);
    children.push(child);
    return child;
  };

  /** A batch whose every trial appends its own line ("mark <batch>-<case>") to the markers file, outside any sandbox. */
  const markingBatch = (batch: string, cases: number, seconds: number) =>
    startBody({
      suite: { id: `suite-${batch}`, prompt: 'mark {{word}}' },
      cases: Array.from({ length: cases }, (_, index) => ({ id: `case-${index}`, variables: { word: `${batch}-${index}` }, verify: 'grep -q hello out.txt' })),
      variants: [{ harness: 'command', model: 'm', profile: { run: `echo "$ASSAY_PROMPT" >> ${markers}; sleep ${seconds}; echo hello > out.txt` } }],
      trials: 1,
    });

  const markerCounts = (): Map<string, number> => {
    const counts = new Map<string, number>();
    const lines = fs.existsSync(markers) ? fs.readFileSync(markers, 'utf8').split('\n').filter(Boolean) : [];
    for (const line of lines) counts.set(line, (counts.get(line) ?? 0) + 1);
    return counts;
  };

  beforeEach(async () => {
    await shared.open();
    dataDir = tempDir();
    const outside = tempDir('assay-markers-');
    markers = path.join(outside, 'ran.log');
    config = path.join(outside, 'assay.yaml');
    // The process driver, so a trial's command can append to a file of the host.
    fs.writeFileSync(config, 'allowUnsandboxed: true\ndefaultSandbox: process\n');
  });

  afterEach(async () => {
    await Promise.all(children.splice(0).map((child) => child.stop('SIGKILL')));
    await shared.close();
  });

  it('runs each trial once when two instances could both claim it', async () => {
    const [one, two] = await Promise.all([serve('one'), serve('two')]);
    const started = await one.client.call('evals.batches.start', markingBatch('pair', 6, 1));
    expect(started.status).toBe(200);
    // The other instance reads the shared log a moment later: its first answer may be 404.
    await waitUntil(async () => (await two.client.call('evals.batches.get', { id: started.body.id })).status === 200, 10000);
    const batch = await waitForBatch(two.client, started.body.id, 60000);
    expect(batch.runs.flatMap((run: any) => run.trials).map((trial: any) => trial.status)).toEqual(Array(6).fill('passed'));
    const counts = markerCounts();
    expect(Object.fromEntries(counts)).toEqual(Object.fromEntries(Array.from({ length: 6 }, (_, index) => [`mark pair-${index}`, 1])));
  });

  it('runs every trial exactly once across three instances, one killed mid-batch and restarted, and all agree', async () => {
    const [alpha, bravo, charlie] = await Promise.all([serve('alpha'), serve('bravo'), serve('charlie')]);
    const servers = [alpha, bravo, charlie];

    // One batch through each instance: the organization's three slots.
    const started = await Promise.all(servers.map((server, index) => server.client.call('evals.batches.start', markingBatch(`b${index}`, 5, 3))));
    expect(started.map((answer) => answer.status)).toEqual([200, 200, 200]);
    const batchIds = started.map((answer) => answer.body.id as string);

    // The rule of three holds across the instances: a fourth is refused whichever receives it.
    for (const server of servers) {
      const fourth = await server.client.call('evals.batches.start', markingBatch('refused', 1, 0));
      expect(fourth.status).toBe(409);
      expect(fourth.body).toEqual({ _tag: 'Conflict', message: RULE_OF_THREE });
    }

    // Kill charlie while it runs trials of its own claim.
    let charlieRunning: string[] = [];
    await waitUntil(async () => {
      const { owner, ended } = claimsIn(readLog());
      charlieRunning = [...owner].filter(([trialId, instance]) => instance === 'charlie' && !ended.has(trialId)).map(([trialId]) => trialId);
      return charlieRunning.length > 0;
    }, 30000);
    expect(await charlie.stop('SIGKILL')).toBeNull();
    // Restarted under a new name: its old claims lapse like those of any stopped instance.
    const restarted = await serve('charlie-2');
    const live = [alpha, bravo, restarted];

    const finished = await Promise.all(batchIds.map((id, index) => waitForBatch(live[index].client, id, 90000)));
    expect(finished.map((batch) => batch.status)).toEqual(['finished', 'finished', 'finished']);

    const log = readLog();
    const { owner } = claimsIn(log);
    const counts = markerCounts();
    const trials = finished.flatMap((batch, index) =>
      batch.runs.flatMap((run: any) => run.trials.map((trial: any) => ({ ...trial, marker: `mark b${index}-${run.case.id.replace('case-', '')}` }))),
    );
    expect(trials).toHaveLength(15);
    // Every trial has one claim in the log, by one of the instances.
    for (const trial of trials) expect(['alpha', 'bravo', 'charlie', 'charlie-2']).toContain(owner.get(trial.id));
    const startedEvents = log.filter((event) => event.type === 'TrialStarted');
    expect(startedEvents).toHaveLength(15);
    // Voided: only trials the killed instance was running, once their claims lapsed; every other trial passed.
    const voided = trials.filter((trial) => trial.status === 'void');
    expect(voided.length).toBeGreaterThan(0);
    for (const trial of voided) {
      expect(trial.failure).toBe(ABANDONED);
      expect(owner.get(trial.id)).toBe('charlie');
    }
    // What charlie was seen running when it was killed is among them (it may have claimed more before the kill landed).
    for (const trialId of charlieRunning) expect(voided.map((trial) => trial.id)).toContain(trialId);
    for (const trial of trials.filter((candidate) => candidate.status !== 'void')) expect(trial.status).toBe('passed');
    // Each command ran exactly once: a passed trial's line is in the file once; a voided one's at most once (it began on the killed instance).
    for (const trial of trials) {
      if (trial.status === 'passed') expect([trial.marker, counts.get(trial.marker)]).toEqual([trial.marker, 1]);
      else expect(counts.get(trial.marker) ?? 0).toBeLessThanOrEqual(1);
    }
    expect([...counts.keys()].every((line) => trials.some((trial) => trial.marker === line))).toBe(true);

    // Every slot came back: three new batches start, one through each live instance, and finish.
    const again = await Promise.all(live.map((server, index) => server.client.call('evals.batches.start', markingBatch(`again${index}`, 1, 0))));
    expect(again.map((answer) => answer.status)).toEqual([200, 200, 200]);
    const allIds = [...batchIds, ...again.map((answer) => answer.body.id as string)];
    for (const [index, answer] of again.entries()) expect((await waitForBatch(live[index].client, answer.body.id)).status).toBe('finished');
    const slots = readLog().filter((event) => event.stream === 'batchslots-acme');
    expect(slots.filter((event) => event.type === 'BatchSlotReleased')).toHaveLength(slots.filter((event) => event.type === 'BatchSlotTaken').length);

    // Every instance reads the same, and so does a new one that rebuilt its read models from the log.
    const rebuilt = await serve('delta');
    const readers = [...live, rebuilt];
    for (const id of allIds) {
      const answers = await Promise.all(readers.map((server) => server.client.call('evals.batches.get', { id })));
      expect(answers.map((answer) => answer.status)).toEqual([200, 200, 200, 200]);
      for (const answer of answers.slice(1)) expect(answer.body).toEqual(answers[0].body);
    }
    const lists = await Promise.all(readers.map((server) => server.client.call('evals.batches.list', {})));
    for (const list of lists.slice(1)) expect(list.body).toEqual(lists[0].body);
  });

  it('lets a second instance start while the first runs trials, and a stopping instance voids its own trials at once', async () => {
    // A lease far longer than the test: only the stopping instance itself can void its trials in time.
    const first = await serve('first', { ASSAY_TRIAL_LEASE_MS: '600000' });
    const started = await first.client.call('evals.batches.start', markingBatch('rolling', 2, 4));
    expect(started.status).toBe(200);
    const trialsOf = async (server: ChildServer) =>
      (await server.client.call('evals.batches.get', { id: started.body.id })).body.runs.flatMap((run: any) => run.trials);
    await waitUntil(async () => (await trialsOf(first)).filter((trial: any) => trial.status === 'running').length === 2, 30000);

    // A rolling deploy starts the next instance beside it: the trials running on the first are not its to void.
    const second = await serve('second', { ASSAY_TRIAL_LEASE_MS: '600000' });
    const batch = await waitForBatch(second.client, started.body.id, 60000);
    expect(batch.runs.flatMap((run: any) => run.trials).map((trial: any) => trial.status)).toEqual(['passed', 'passed']);

    // Then the instance running the next trial stops (SIGTERM) in its middle: it records the trial abandoned as it goes.
    const next = await first.client.call('evals.batches.start', markingBatch('stopping', 1, 30));
    expect(next.status).toBe(200);
    // Another instance's reads follow the shared log a moment later (it polls the file).
    const nextTrials = async () => ((await second.client.call('evals.batches.get', { id: next.body.id })).body.runs ?? []).flatMap((run: any) => run.trials);
    await waitUntil(async () => (await nextTrials())[0]?.status === 'running', 30000);
    const { owner } = claimsIn(readLog());
    const runningOn = owner.get((await nextTrials())[0].id);
    const stopping = runningOn === 'first' ? first : second;
    const staying = stopping === first ? second : first;
    expect(await stopping.stop('SIGTERM')).toBe(0);
    const ended = await waitForBatch(staying.client, next.body.id, 20000);
    expect(ended.status).toBe('finished');
    expect(ended.runs[0].trials[0]).toMatchObject({ status: 'void', failure: ABANDONED });
  });
});
