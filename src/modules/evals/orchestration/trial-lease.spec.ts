import type { RecordedEvent } from '#infrastructure/event-store/event-store.port';
import { SagaState, SagaTrial } from './saga-state';
import { claimEvent, claimLapsed, renewalEvent, renewalIntervalMs } from './trial-lease';

const ref = { trialId: 'trl_1', runId: 'run_1', batchId: 'bat_1', organization: 'acme' };
const terms = { instanceId: 'alpha', leaseMs: 30_000 };
const at = (iso: string) => new Date(iso);

function trial(overrides: Partial<SagaTrial>): SagaTrial {
  return {
    ...ref,
    ordinal: 1,
    status: 'running',
    revision: 1,
    commands: 0,
    serviceFault: false,
    failure: null,
    costs: null,
    owner: 'bravo',
    startedAtMs: Date.parse('2025-01-01T00:00:00.000Z'),
    leaseExpiresAtMs: Date.parse('2025-01-01T00:00:30.000Z'),
    ...overrides,
  };
}

function recorded(type: string, data: object, revision: number): RecordedEvent {
  const metadata = { organization: 'acme', actor: 'system:test', correlationId: 'c', causationId: 'c' };
  return { id: `e${revision}`, type, data, metadata, streamName: 'trial-trl_1', revision, position: revision + 10, createdAt: '2025-01-01T00:00:00.000Z' };
}

describe('trial claims: what a claim says and when it lapses', () => {
  it('names its owner and a lease from now, and a renewal pushes the lease on', () => {
    const now = at('2025-01-01T00:00:00.000Z');
    expect(claimEvent(ref, terms, now)).toEqual({
      type: 'TrialStarted',
      data: { ...ref, startedAt: '2025-01-01T00:00:00.000Z', instanceId: 'alpha', leaseExpiresAt: '2025-01-01T00:00:30.000Z' },
    });
    expect(renewalEvent(ref, terms, at('2025-01-01T00:00:10.000Z')).data).toMatchObject({
      instanceId: 'alpha',
      renewedAt: '2025-01-01T00:00:10.000Z',
      leaseExpiresAt: '2025-01-01T00:00:40.000Z',
    });
    expect(renewalIntervalMs(30_000)).toBe(10_000);
    expect(renewalIntervalMs(1_000)).toBe(333);
  });

  it("leaves another instance's trial alone until its lease has passed, then calls it lapsed", () => {
    const running = trial({});
    expect(claimLapsed(running, at('2025-01-01T00:00:29.999Z'), terms)).toBe(false);
    expect(claimLapsed(running, at('2025-01-01T00:00:30.000Z'), terms)).toBe(true);
  });

  it('calls lapsed at once a claim of its own name that it is not running (an earlier life of this instance)', () => {
    expect(claimLapsed(trial({ owner: 'alpha' }), at('2025-01-01T00:00:01.000Z'), terms)).toBe(true);
  });

  it('gives a claim stored before leases one lease from its start', () => {
    const legacy = trial({ owner: null, leaseExpiresAtMs: null });
    expect(claimLapsed(legacy, at('2025-01-01T00:00:29.999Z'), terms)).toBe(false);
    expect(claimLapsed(legacy, at('2025-01-01T00:00:30.000Z'), terms)).toBe(true);
  });

  it('never calls lapsed a trial that is not running', () => {
    const late = at('2030-01-01T00:00:00.000Z');
    for (const status of ['planned', 'queued', 'passed', 'failed', 'void'] as const) expect(claimLapsed(trial({ status }), late, terms)).toBe(false);
  });

  it('folds the claim and its renewals into the saga state', () => {
    const state = new SagaState();
    const run = { runId: 'run_1', caseId: 'c', trialIds: ['trl_1'] };
    state.evolve(recorded('BatchStarted', { batchId: 'bat_1', organization: 'acme', runs: [run], cases: [] }, 0));
    state.evolve(recorded('TrialQueued', { ...ref, ordinal: 1, queuedAt: '2025-01-01T00:00:00.000Z' }, 0));
    state.evolve(recorded('TrialStarted', claimEvent(ref, { instanceId: 'bravo', leaseMs: 30_000 }, at('2025-01-01T00:00:00.000Z')).data, 1));
    expect(state.trials.get('trl_1')).toMatchObject({
      status: 'running',
      owner: 'bravo',
      revision: 1,
      leaseExpiresAtMs: Date.parse('2025-01-01T00:00:30.000Z'),
    });
    state.evolve(recorded('TrialLeaseRenewed', renewalEvent(ref, { instanceId: 'bravo', leaseMs: 30_000 }, at('2025-01-01T00:00:10.000Z')).data, 2));
    expect(state.trials.get('trl_1')).toMatchObject({
      status: 'running',
      owner: 'bravo',
      revision: 2,
      leaseExpiresAtMs: Date.parse('2025-01-01T00:00:40.000Z'),
    });
    expect(claimLapsed(state.trials.get('trl_1')!, at('2025-01-01T00:00:35.000Z'), terms)).toBe(false);
  });
});
