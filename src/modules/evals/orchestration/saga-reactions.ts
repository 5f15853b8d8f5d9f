import { AppendTooLarge, EventMetadata, EventStore, NewEvent, WrongExpectedVersion } from '#infrastructure/event-store/event-store.port';
import { executeOnStream, DomainEvent } from '#infrastructure/event-store/stream-command';
import type { JsonLogger } from '#infrastructure/logging/json-logger';
import { pausePoint } from '#infrastructure/testing/pause-points';
import type { Clock } from '#shared/clock';
import { derivedEventId } from '#shared/ids';
import { batchSlotsDecider, batchSlotsStream } from '../batches/batch-slots.decider';
import { batchStream } from '../batches/batch.events';
import { runStream } from '../runs/run.events';
import type { TrialCostInput } from '../trials/costs';
import { TrialRef, trialStream } from '../trials/trial.events';
import { abandonedTrial, batchEnding, hasSimulatedUser, runFinished, serviceFaultOutcome } from './saga-decisions';
import { callsModelProviders, MODEL_PROVIDER_INTEGRATIONS, oneLine, trialResultEvents, trialSpec } from '../trials/trial-decisions';
import { runByRunner } from '../batches/local-runs';
import { withRunnerFailure } from './runner-watch';
import { isTerminal, SagaBatch, SagaRun, SagaState, SagaTrial } from './saga-state';
import { TrialOutcome, TrialRunner, voidOutcome } from '#trial-runner';
import type { ResolvedTrialEnvironment, TrialEnvironment } from '../trials/trial-environment';
import { TrialClaim } from './trial-claim';
import { replaySource } from './replay-calls';
import type { ModelReplay } from '#shared/eval-definitions';
import type { ReplaySource } from '#trial-runner';
import { ClaimTerms, claimLapsed } from './trial-lease';

type Causation = Pick<EventMetadata, 'correlationId' | 'causationId'>;

/** How many TrialQueued appends are made together: a group commit's worth, and the first trials' places. */
const QUEUE_CHUNK = 8;

/** Waits for every promise, then throws the first failure, if any: none is left running unobserved. */
async function settleAll(promises: Array<Promise<void>>): Promise<void> {
  const failed = (await Promise.allSettled(promises)).find((result) => result.status === 'rejected');
  if (failed) throw failed.reason;
}

/** The saga's side effects: each one an append guarded by an expected revision or derived ids. */
export class SagaReactions {
  /** The trials this process is claiming or running: never voided as lapsed by it. */
  private readonly inFlight = new Set<string>();
  /**
   * Trials whose outcome this process stored, until the saga's state shows them ended: between
   * the two (the subscription lags the append) such a trial reads as running, owned by this
   * instance and no longer in flight, and must not be taken for one a stopped instance left.
   */
  private readonly concluded = new Set<string>();
  /** Their runs, so a stop can wait for each to record how it ended. */
  private readonly running = new Set<Promise<void>>();
  private readonly replays = new Map<string, Promise<ReplaySource>>();
  /** The claims this process holds, by trial: what a stop records as abandoned if their trials do not. */
  private readonly claims = new Map<string, { claim: TrialClaim; ref: TrialRef; run: SagaRun }>();
  /**
   * Trials whose TrialQueued, and runs whose RunFinished, this process has appended (or is
   * appending) while the saga's state does not show it yet: the state follows the log a few events
   * behind, and each event in between would otherwise append them again (idempotent, but an
   * append each: quadratic in a batch's trials). Dropped once the state shows them, or on failure.
   */
  private readonly queuedAhead = new Set<string>();
  private readonly finishedAhead = new Set<string>();

  constructor(
    private readonly eventStore: EventStore,
    private readonly runner: TrialRunner,
    private readonly environment: TrialEnvironment,
    private readonly state: SagaState,
    private readonly logger: JsonLogger,
    private readonly signal: AbortSignal,
    private readonly clock: Clock,
    /** Who this instance is when it claims a trial, and how long a claim holds. */
    private readonly terms: ClaimTerms,
    /** The failure a local batch ends with when its runner went silent (see RunnerWatch); null otherwise. */
    private readonly runnerFailure: (batchId: string) => string | null = () => null,
  ) {}

  /**
   * Moves a batch on as far as its stored events allow, handing each trial to run to `schedule`
   * the moment its TrialQueued is stored. The batch's planned trials are queued QUEUE_CHUNK at a
   * time, each chunk's appends made together: the embedded store commits them as one group (one
   * fsync per chunk, not per trial), and the first trials start before the whole batch is queued.
   * A running trial this process does not run is voided once its claim lapsed (its owner
   * stopped), never before: it may be running on another live instance.
   */
  async advanceBatch(batchId: string, causation: Causation, schedule: (trialId: string) => void): Promise<void> {
    const batch = this.state.batches.get(batchId);
    if (!batch) return;
    if (batch.finished) {
      await this.releaseSlot(batch, causation);
      return;
    }
    const runs = this.state.runsOf(batch);
    let queuing: Array<Promise<void>> = [];
    for (const run of runs) {
      // A local runner's trials are queued here for it to lease; it runs them, not this process.
      const byRunner = batch.started.local === true && runByRunner(run.run);
      for (const trial of this.state.trialsOf(run)) {
        if (trial.status === 'planned') {
          if (this.queuedAhead.has(trial.trialId)) continue;
          const queued = this.queueTrial(batch, trial, causation);
          queuing.push(byRunner ? queued : queued.then(() => schedule(trial.trialId)));
        } else {
          this.queuedAhead.delete(trial.trialId);
          if (trial.status === 'queued' && !byRunner) schedule(trial.trialId);
        }
        if (queuing.length < QUEUE_CHUNK) continue;
        await settleAll(queuing);
        queuing = [];
      }
    }
    await settleAll(queuing);
    for (const run of runs) {
      for (const trial of this.state.trialsOf(run)) {
        if (isTerminal(trial.status)) this.concluded.delete(trial.trialId);
        else if (this.lapsed(trial)) await this.abandon(batch, trial, causation);
      }
      await this.finishRun(batch, run, causation);
    }
    await this.endBatch(batch, causation);
  }

  /** Whether a server trial lost its runner: not this process's, and its claim lapsed (a local runner's lease is the runner watch's). */
  lapsed(trial: SagaTrial): boolean {
    // Asked for every trial of a batch at each of its events: the cheap answers first.
    if (trial.status !== 'running' || this.inFlight.has(trial.trialId) || this.concluded.has(trial.trialId)) return false;
    if (!claimLapsed(trial, this.clock.now(), this.terms)) return false;
    const run = this.state.runs.get(trial.runId);
    const batch = this.state.batches.get(trial.batchId);
    return run !== undefined && batch !== undefined && !(batch.started.local === true && runByRunner(run.run));
  }

  /**
   * Claims the trial and runs it, unless another instance claimed it first. Settles when the
   * trial's place can go to the next one: once its outcome's append is made (or it did not run
   * here), while that append is committed and its directory removed; `drain` waits for both.
   */
  runTrial(trialId: string): Promise<void> {
    const trial = this.state.trials.get(trialId);
    // Another instance's claim, or this process's own: nothing to run.
    if (!trial || this.inFlight.has(trialId) || (trial.status !== 'planned' && trial.status !== 'queued')) return Promise.resolve();
    this.inFlight.add(trialId);
    let placeFreed!: () => void;
    const place = new Promise<void>((resolve) => (placeFreed = resolve));
    const running = this.claimAndRun(trial, placeFreed)
      // A failed append of the outcome leaves the claim to lapse: this instance's own sweep then voids the trial.
      .catch((error: unknown) => this.logger.error('a trial could not record its end', { trialId, error: (error as Error).message }))
      .finally(() => {
        this.inFlight.delete(trialId);
        this.running.delete(running);
        placeFreed();
      });
    this.running.add(running);
    return place;
  }

  /** Waits (at most `timeoutMs`) for the trials this process runs to record how they ended. */
  async drain(timeoutMs: number): Promise<void> {
    let timer: NodeJS.Timeout | undefined;
    const deadline = new Promise<void>((resolve) => (timer = setTimeout(resolve, timeoutMs)));
    await Promise.race([Promise.allSettled([...this.running]), deadline]);
    clearTimeout(timer);
  }

  private async claimAndRun(trial: SagaTrial, placeFreed: () => void): Promise<void> {
    const { trialId } = trial;
    const run = this.state.runs.get(trial.runId);
    const batch = this.state.batches.get(trial.batchId);
    if (!run || !batch || this.signal.aborted) return;
    if (batch.started.local === true && runByRunner(run.run)) return;
    const metadata = this.metadata(batch, { correlationId: batch.started.batchId, causationId: trialId });
    const ref = { trialId, runId: run.run.runId, batchId: batch.started.batchId, organization: batch.started.organization };
    // Appended at the revision of TrialQueued with a new id: of two instances, one claims and the other gets nothing.
    const claim = await TrialClaim.take(this.eventStore, ref, this.terms, { clock: this.clock, metadata, logger: this.logger });
    if (!claim) return;
    this.claims.set(trialId, { claim, ref, run });
    try {
      await pausePoint('trial:after-claim');
      // Stopped while claiming: the trial is not started, and ends as abandoned at once.
      // eslint-disable-next-line @typescript-eslint/no-unnecessary-condition -- the stop can come while the claim is appended
      if (this.signal.aborted) {
        await claim.finish([abandonedTrial(ref, run.run, this.clock.now())]);
        return;
      }
      // The place is freed once the outcome's append is made: the next trial's claim goes into the
      // same group commit, after it, so no reader sees more trials running than there are places;
      // not when the runner has removed the trial's directory.
      const conclude = (outcome: TrialOutcome, environment: ResolvedTrialEnvironment | null) =>
        this.conclude(claim, ref, batch, run, outcome, environment, placeFreed).finally(placeFreed);
      await this.execute(batch, run, trialId, AbortSignal.any([this.signal, claim.signal]), conclude);
    } finally {
      claim.release();
      this.claims.delete(trialId);
    }
  }

  /**
   * At a stop, once the grace is over: the trials that have not recorded their end (a step that
   * does not heed the stop) are recorded as abandoned here, through their claims, which stop
   * renewing; an outcome they record later is refused. No lease is renewed past the stop.
   */
  async abandonUnfinished(): Promise<void> {
    const unfinished = [...this.claims.values()];
    this.claims.clear();
    for (const { claim, ref, run } of unfinished) {
      try {
        if (await claim.finish([abandonedTrial(ref, run.run, this.clock.now())])) {
          this.logger.warn('a trial did not stop within the grace: recorded it as abandoned', { trialId: ref.trialId });
        }
      } catch (error) {
        claim.release();
        this.logger.error('could not record a trial as abandoned at stop', { trialId: ref.trialId, error: (error as Error).message });
      }
    }
  }

  /** Records how a trial this instance ran ended, through its claim. */
  private async conclude(
    claim: TrialClaim,
    ref: TrialRef,
    batch: SagaBatch,
    run: SagaRun,
    outcome: TrialOutcome,
    environment: ResolvedTrialEnvironment | null,
    issued: () => void,
  ): Promise<void> {
    // Taken over after this owner's lease lapsed: the trial is already void, its outcome is not recorded.
    if (claim.signal.aborted) return;
    if (this.signal.aborted) {
      // This instance is stopping: it says so itself rather than leave the trial to lapse.
      await claim.finish([abandonedTrial(ref, run.run, this.clock.now())]);
      return;
    }
    const variant = run.run.variant;
    const costInput = {
      harness: variant.harness,
      model: variant.model,
      sandbox: variant.sandbox,
      usage: outcome.usage,
      hasSimulatedUser: hasSimulatedUser(batch, run),
      userModel: outcome.userModel ?? null,
    };
    const recorded = await this.recordOutcome(claim, ref, outcome, costInput, issued);
    if (recorded !== null) this.concluded.add(ref.trialId);
    if (recorded !== null && environment) await this.recordUse(ref.organization, environment, recorded, ref.trialId);
  }

  /**
   * Appends the trial's outcome through its claim (null when the claim was lost); one the event
   * store refuses as too large for one write is recorded as a void trial that says so, so that
   * the trial ends and the batch with it.
   */
  private async recordOutcome(
    claim: TrialClaim,
    ref: TrialRef,
    outcome: TrialOutcome,
    costInput: TrialCostInput,
    issued: () => void,
  ): Promise<TrialOutcome | null> {
    try {
      return (await claim.finish(trialResultEvents(ref, outcome, costInput, this.clock.now()), issued)) ? outcome : null;
    } catch (error) {
      if (!(error instanceof AppendTooLarge)) throw error;
      this.logger.error('trial result too large for the event store; voiding the trial', { trialId: ref.trialId, bytes: error.bytes, limit: error.limit });
      const failure = `the trial's result (${error.bytes} bytes) exceeds the event store's limit of ${error.limit} bytes per write; lower ASSAY_OUTPUT_CAP or raise MaxAppendSize on the server`;
      const voided = voidOutcome({ failure, voidFields: [], serviceFault: true, harnessVersion: outcome.harnessVersion ?? null });
      return (await claim.finish(trialResultEvents(ref, { ...voided, usage: outcome.usage }, costInput, this.clock.now()))) ? voided : null;
    }
  }

  /**
   * Resolves the trial's credentials (a trial whose credentials are unavailable is void), runs it,
   * and concludes it with its outcome: as soon as the runner hands the outcome over, while the
   * runner tears the trial down. Settles when both are done.
   */
  private async execute(
    batch: SagaBatch,
    run: SagaRun,
    trialId: string,
    signal: AbortSignal,
    conclude: (outcome: TrialOutcome, environment: ResolvedTrialEnvironment | null) => Promise<void>,
  ): Promise<void> {
    let environment: ResolvedTrialEnvironment;
    try {
      const providerIntegrations = callsModelProviders(batch.started, run.run) ? MODEL_PROVIDER_INTEGRATIONS : [];
      environment = await this.environment.resolve(batch.started.organization, run.run.variant, batch.requester, { providerIntegrations });
    } catch (error) {
      const outcome = voidOutcome({ failure: oneLine((error as Error).message), voidFields: ['credentials'], serviceFault: false });
      await conclude(outcome, null);
      return;
    }
    const replay = run.run.variant.profile?.replay;
    const spec = {
      ...trialSpec(batch.started, run.run, trialId, environment),
      ...(replay ? { replay: await this.replaySource(batch.started.organization, replay) } : {}),
    };
    const handover: { concluded?: Promise<void> } = {};
    const handedOver = (outcome: TrialOutcome) => {
      handover.concluded = conclude(outcome, environment);
      // Awaited below, once the runner has torn the trial down: not an unhandled rejection meanwhile.
      handover.concluded.catch(() => undefined);
    };
    const outcome = await this.runner.run(spec, signal, handedOver).catch((error: unknown) => serviceFaultOutcome(error as Error));
    // A runner that failed before handing its outcome over: the trial is concluded as a service fault.
    await (handover.concluded ?? conclude(outcome, environment));
  }

  /** A replayed batch's recorded calls, read once for all the trials that replay it while they run. */
  private replaySource(organization: string, replay: ModelReplay): Promise<ReplaySource> {
    const key = `${organization}\n${replay.batchId}\n${replay.mode}`;
    let loading = this.replays.get(key);
    if (loading === undefined) {
      loading = replaySource(this.eventStore, organization, replay);
      this.replays.set(key, loading);
      // Kept for a minute: a batch's trials start within it; a later batch reads the recording again.
      setTimeout(() => this.replays.delete(key), 60_000).unref();
    }
    return loading;
  }

  private async recordUse(organization: string, environment: ResolvedTrialEnvironment, outcome: TrialOutcome, trialId: string): Promise<void> {
    const refused = outcome.refusedProviderKey ? environment.providerConnections?.[outcome.refusedProviderKey] : undefined;
    const connectionIds = (environment.connectionIds ?? []).filter((connectionId) => connectionId !== refused);
    if (!this.environment.recordUse) return;
    // The connector whose key the agent's provider refused is invalid, whatever else happened.
    if (refused !== undefined) await this.environment.recordUse(organization, [refused], { authFailed: true, trialId });
    if (connectionIds.length === 0 && (environment.variableNames ?? []).length === 0) return;
    await this.environment.recordUse(organization, connectionIds, {
      authFailed: outcome.authFailed === true,
      trialId,
      variableNames: environment.variableNames,
    });
  }

  private async queueTrial(batch: SagaBatch, trial: SagaTrial, causation: Causation): Promise<void> {
    const ref = { trialId: trial.trialId, runId: trial.runId, batchId: trial.batchId, organization: batch.started.organization };
    const event = { type: 'TrialQueued', data: { ...ref, ordinal: trial.ordinal, queuedAt: this.clock.now().toISOString() } };
    // Appended or found appended (another instance's, or a claim after it): queued either way.
    await this.appendAhead(this.queuedAhead, trial.trialId, trialStream(trial.trialId), event, this.metadata(batch, causation), 'no_stream');
  }

  private async abandon(batch: SagaBatch, trial: SagaTrial, causation: Causation): Promise<void> {
    const run = this.state.runs.get(trial.runId);
    if (!run) throw new Error(`The saga has no run "${trial.runId}" for trial "${trial.trialId}".`);
    const ref = { trialId: trial.trialId, runId: trial.runId, batchId: trial.batchId, organization: batch.started.organization };
    // At the revision read: the owner's renewal or outcome, or another instance's void, makes this one fail and back off.
    const voided = await this.appendIfExpected(
      trialStream(trial.trialId),
      [abandonedTrial(ref, run.run, this.clock.now())],
      this.metadata(batch, causation),
      trial.revision,
    );
    if (voided)
      this.logger.warn('voided a trial whose instance stopped (its claim lapsed)', { trialId: trial.trialId, batchId: trial.batchId, owner: trial.owner });
  }

  private async finishRun(batch: SagaBatch, run: SagaRun, causation: Causation): Promise<void> {
    const { runId } = run.run;
    if (run.finished) this.finishedAhead.delete(runId);
    if (run.finished || this.finishedAhead.has(runId)) return;
    const trials = this.state.trialsOf(run);
    if (!trials.every((trial) => isTerminal(trial.status))) return;
    const event = runFinished(batch.started, run, trials, this.clock.now());
    await this.appendAhead(this.finishedAhead, runId, runStream(runId), event, this.metadata(batch, causation), 'no_stream');
  }

  /**
   * An append the state will show a few events later: marked in `ahead` under `key` from now on,
   * so that the events in between do not make it again; unmarked if it fails, to be tried again.
   */
  private async appendAhead(
    ahead: Set<string>,
    key: string,
    stream: string,
    event: DomainEvent,
    metadata: EventMetadata,
    expected: number | 'no_stream',
  ): Promise<void> {
    ahead.add(key);
    try {
      await this.appendIfExpected(stream, [event], metadata, expected);
    } catch (error) {
      ahead.delete(key);
      throw error;
    }
  }

  private async endBatch(batch: SagaBatch, causation: Causation): Promise<void> {
    const runs = this.state.runsOf(batch);
    if (!runs.every((run) => run.finished)) return;
    // The slot goes back before the batch reads as ended, so a client that saw it end can start another.
    await this.releaseSlot(batch, causation);
    const event = withRunnerFailure(batchEnding(batch.started, runs, this.clock.now()), this.runnerFailure(batch.started.batchId));
    const appended = await this.appendIfExpected(batchStream(batch.started.batchId), [event], this.metadata(batch, causation), 0);
    if (appended) this.logger.info('batch ended', { batchId: batch.started.batchId, status: event.type });
  }

  private async releaseSlot(batch: SagaBatch, causation: Causation): Promise<void> {
    if (batch.slotReleased) {
      if (batch.finished) this.forget(batch);
      return;
    }
    const { organization, batchId } = batch.started;
    const command = { type: 'ReleaseSlot' as const, organization, batchId, reason: 'the batch ended', now: this.clock.now() };
    await executeOnStream(this.eventStore, batchSlotsStream(organization), batchSlotsDecider, command, this.metadata(batch, causation), { attempts: 50 });
  }

  /** A batch that is over and gave its slot back: nothing of it is kept. */
  private forget(batch: SagaBatch): void {
    for (const run of batch.started.runs) {
      this.finishedAhead.delete(run.runId);
      for (const trialId of run.trialIds) this.queuedAhead.delete(trialId);
    }
    this.state.forget(batch.started.batchId);
  }

  /** Appends unless the stream moved on: then another reaction already did this. */
  private async appendIfExpected(stream: string, events: DomainEvent[], metadata: EventMetadata, expected: number | 'no_stream'): Promise<boolean> {
    const toAppend: NewEvent[] = events.map((event, index) => ({
      id: derivedEventId(stream, String(expected), String(index), event.type),
      type: event.type,
      data: event.data,
      metadata,
    }));
    try {
      await this.eventStore.append(stream, toAppend, expected);
      return true;
    } catch (error) {
      if (error instanceof WrongExpectedVersion) return false;
      throw error;
    }
  }

  private metadata(batch: SagaBatch, causation: Causation): EventMetadata {
    return { organization: batch.started.organization, actor: 'system:trial-saga', ...causation };
  }
}
