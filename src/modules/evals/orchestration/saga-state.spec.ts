import type { RecordedEvent } from '#infrastructure/event-store/event-store.port';
import { movesBatch, SagaState, SagaTrialStatus } from './saga-state';
import { TRIAL_EVENT_TYPES } from '../trials/trial.events';

const ref = { trialId: 'trl_1', runId: 'run_1', batchId: 'bat_1', organization: 'acme' };
const at = '2025-01-01T00:00:00.000Z';

function recorded(type: string, data: object, revision: number): RecordedEvent {
  const metadata = { organization: 'acme', actor: 'system:test', correlationId: 'c', causationId: 'c' };
  return { id: `e${revision}`, type, data, metadata, streamName: 'trial-trl_1', revision, position: revision + 10, createdAt: at };
}

/** Data of each trial event type, as the runner and the saga record them. */
const DATA: Record<string, object> = {
  TrialQueued: { ...ref, ordinal: 1, queuedAt: at },
  TrialStarted: { ...ref, startedAt: at, instanceId: 'alpha', leaseExpiresAt: '2025-01-01T00:00:30.000Z' },
  TrialCommandRecorded: { ...ref, entry: { kind: 'command', command: 'true' } },
  TrialMessageRecorded: { ...ref, entry: { kind: 'message', role: 'user', content: 'hi' } },
  TrialConversationEnded: { ...ref, entry: { kind: 'end', reason: 'done' } },
  TrialPrepared: { ...ref, entry: { kind: 'prepare' } },
  TrialModelCalled: { ...ref, entry: { _tag: 'model-call' } },
  TrialToolCalled: { ...ref, entry: { _tag: 'tool-call' } },
  TrialDiffRecorded: { ...ref, diff: { files: [], patch: '', truncated: false } },
  TrialVerified: { ...ref, passed: true },
  TrialValidated: { ...ref, passed: true },
  TrialScored: { ...ref, status: 'failed', costs: { usd: 0 }, failure: 'the verify failed' },
  TrialVoided: { ...ref, costs: { usd: 0 }, failure: 'the sandbox failed to start', serviceFault: true },
  TrialLeaseRenewed: { ...ref, instanceId: 'alpha', renewedAt: at, leaseExpiresAt: '2025-01-01T00:01:00.000Z' },
};

/** A state with one batch whose one trial is at `status`. */
function stateWith(status: SagaTrialStatus): SagaState {
  const state = new SagaState();
  state.evolve(
    recorded('BatchStarted', { batchId: 'bat_1', organization: 'acme', runs: [{ runId: 'run_1', caseId: 'c', trialIds: ['trl_1'] }], cases: [] }, 0),
  );
  if (status !== 'planned') state.evolve(recorded('TrialQueued', DATA.TrialQueued, 0));
  if (status === 'running') state.evolve(recorded('TrialStarted', DATA.TrialStarted, 1));
  return state;
}

/** What the saga decides on: the trial's status and outcome, not its record or its lease. */
function decided(state: SagaState): object {
  const { status, failure, costs, serviceFault } = state.trials.get('trl_1')!;
  return { status, failure, costs, serviceFault };
}

describe('the saga reacts to the events that change what it decides', () => {
  it.each(['planned', 'queued', 'running'] as const)('moves the batch on for every trial event that changes a %s trial', (status) => {
    const changers: string[] = [];
    for (const type of [...TRIAL_EVENT_TYPES, 'TrialLeaseRenewed']) {
      const state = stateWith(status);
      const before = decided(state);
      expect(state.evolve(recorded(type, DATA[type], 5))).toBe('bat_1');
      if (JSON.stringify(decided(state)) !== JSON.stringify(before)) {
        changers.push(type);
        expect(movesBatch(recorded(type, DATA[type], 5))).toBe(true);
      }
    }
    // The check above is not empty: each starting status has events that move it.
    expect(changers.length).toBeGreaterThan(0);
  });

  it('does not react to what only adds to a trial record or pushes its lease further', () => {
    for (const type of [
      'TrialCommandRecorded',
      'TrialMessageRecorded',
      'TrialConversationEnded',
      'TrialPrepared',
      'TrialVerified',
      'TrialValidated',
      'TrialLeaseRenewed',
    ])
      expect(movesBatch(recorded(type, DATA[type], 5))).toBe(false);
    for (const type of [
      'BatchStarted',
      'TrialQueued',
      'TrialStarted',
      'TrialScored',
      'TrialVoided',
      'RunFinished',
      'BatchFinished',
      'BatchFailed',
      'BatchSlotReleased',
    ])
      expect(movesBatch(recorded(type, {}, 5))).toBe(true);
  });

  it('still applies the events it does not react to', () => {
    const state = stateWith('running');
    state.evolve(recorded('TrialCommandRecorded', DATA.TrialCommandRecorded, 2));
    state.evolve(recorded('TrialLeaseRenewed', DATA.TrialLeaseRenewed, 3));
    expect(state.trials.get('trl_1')).toMatchObject({ commands: 1, revision: 3, leaseExpiresAtMs: Date.parse('2025-01-01T00:01:00.000Z') });
  });
});
