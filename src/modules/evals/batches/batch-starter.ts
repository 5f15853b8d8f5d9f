import { Inject, Injectable, Optional } from '@nestjs/common';
import { EVENT_STORE, EventMetadata, EventStore, WrongExpectedVersion } from '#infrastructure/event-store/event-store.port';
import { foldEvents } from '#shared/decider';
import { executeOnStream, toDomainEvent } from '#infrastructure/event-store/stream-command';
import { pausePoint } from '#infrastructure/testing/pause-points';
import { CommandContext, requestMetadata } from '#shared/caller';
import { BadRequest, Conflict } from '#shared/errors';
import { newEventId } from '#shared/ids';
import { caseDecider } from '../cases/case.decider';
import { caseStream } from '../cases/case.events';
import { EXECUTION_POLICY, ExecutionPolicy, STRICT_EXECUTION_POLICY } from '../shared/execution-policy';
import { suiteDecider, suiteStream } from '../suites/suite.events';
import { BatchSlotCommand, BatchSlotEvent, batchSlotsDecider, batchSlotsStream } from './batch-slots.decider';
import { BatchStarted, batchStream, Trigger } from './batch.events';
import { overdueSlots, releaseUnstartedSlot } from './unstarted-slots';
import { planBatch, PlannedBatch } from './batch-plan';
import { PromptReference, resolvePromptReferences } from './prompt-references';
import { checkExecutionRules, unsandboxedVariants } from './execution-rules';
import { idempotencyDecider, idempotencyStream } from './idempotency';
import { BatchPlan, checkBatchPlan } from './start-rules';

export interface StartedBatch {
  id: string;
  runs: Array<{ caseId: string; id: string; variantId: string }>;
}

export interface StartRequest {
  plan: BatchPlan;
  checksIn: boolean;
  trigger: Trigger;
  idempotency: { key: string; requestHash: string } | null;
  context: CommandContext;
  /** Started by a local runner (runner.batches.start): its `local` variants are the runner's to run. */
  local?: boolean;
  /** The `{{prompt:ID@VERSION}}` and `{{prompt:ID@CHANNEL}}` the suite prompt named, resolved at start. */
  promptReferences?: PromptReference[];
}

/** Enough concurrent starts to contend for the slots stream without giving up early. */
const SLOT_ATTEMPTS = 50;

/**
 * Starts a batch: checks the plan, takes one of the organization's three slots, records the
 * case versions and the suite, then `BatchStarted`. Shared by `evals.batches.start` and
 * `evals.cases.run`. A start that fails after taking its slot gives it back; one whose process
 * died in between leaves its slot to be released once the hold passed (unstarted-slots.ts), by
 * the next start that finds the organization full or by any instance's saga.
 */
@Injectable()
export class BatchStarter {
  private readonly policy: ExecutionPolicy;

  constructor(
    @Inject(EVENT_STORE) private readonly eventStore: EventStore,
    @Optional() @Inject(EXECUTION_POLICY) policy?: ExecutionPolicy,
  ) {
    this.policy = policy ?? STRICT_EXECUTION_POLICY;
  }

  async start(original: StartRequest): Promise<StartedBatch> {
    const resolved = await resolvePromptReferences(this.eventStore, original.context.caller.organization, original.plan.suite.prompt);
    const plan = { ...original.plan, suite: { ...original.plan.suite, prompt: resolved.prompt } };
    const request: StartRequest = { ...original, plan, promptReferences: resolved.references };
    checkBatchPlan(request.plan, { localRunner: request.local === true });
    checkExecutionRules(request.plan, this.policy);
    await this.checkReplays(request.plan, original.context.caller.organization);
    const { context } = request;
    const organization = context.caller.organization;
    const planned = planBatch(request.plan, organization, context.now, this.policy.defaultUserModel, request.promptReferences);
    if (request.idempotency) {
      const earlier = await this.claimKey(request, request.idempotency, planned.batchId);
      if (earlier) return earlier;
    }
    const metadata = requestMetadata(context);
    const slot = { organization, batchId: planned.batchId, now: context.now };
    try {
      await this.takeSlot({ type: 'TakeSlot', ...slot, idempotencyKey: request.idempotency?.key ?? null }, metadata);
    } catch (error) {
      await this.releaseKey(request, planned.batchId, 'no slot');
      throw error;
    }
    try {
      await pausePoint('start:after-slot');
      await this.record(request, planned);
    } catch (error) {
      await executeOnStream(
        this.eventStore,
        batchSlotsStream(organization),
        batchSlotsDecider,
        { type: 'ReleaseSlot', ...slot, reason: 'the start failed' },
        metadata,
        { attempts: SLOT_ATTEMPTS },
      );
      await this.releaseKey(request, planned.batchId, 'the start failed');
      throw error;
    }
    const unsandboxed = unsandboxedVariants(request.plan, this.policy);
    if (unsandboxed.length > 0) this.policy.warnUnsandboxed(planned.batchId, unsandboxed);
    return startedBatch(planned.batchId, planned.runs);
  }

  /** A variant's replay must name a batch of the organization (its recorded calls answer the variant's). */
  private async checkReplays(plan: StartRequest['plan'], organization: string): Promise<void> {
    for (const [index, variant] of plan.variants.entries()) {
      const replay = variant.profile?.replay;
      if (replay === undefined) continue;
      // A local variant's trials run on the caller's machine, whose gateway has no recording to answer from.
      if (variant.sandbox === 'local') {
        throw new BadRequest(
          `variants[${index}].profile.replay is for variants that run on the server: a local variant's model calls are answered by its provider; drop replay, or run the variant in a server sandbox.`,
        );
      }
      const first = (await this.eventStore.readStream(batchStream(replay.batchId), { maxCount: 1 })).at(0);
      const data = first?.type === 'BatchStarted' ? (first.data as { organization?: string }) : null;
      if (data?.organization !== organization) {
        throw new BadRequest(
          `variants[${index}].profile.replay.batchId names no batch of this organization ("${replay.batchId}"): replay a batch that ran with gateway.recordBodies.`,
        );
      }
    }
  }

  /**
   * Takes a slot; when the organization is full, first gives back the slots whose starts held
   * them past the hold without recording their batch (their process died), then tries again.
   */
  private async takeSlot(command: Extract<BatchSlotCommand, { type: 'TakeSlot' }>, metadata: EventMetadata): Promise<void> {
    const stream = batchSlotsStream(command.organization);
    const take = () => executeOnStream(this.eventStore, stream, batchSlotsDecider, command, metadata, { attempts: SLOT_ATTEMPTS });
    try {
      await take();
    } catch (error) {
      if (!(error instanceof Conflict) || error.reason !== 'rule_of_three') throw error;
      const recorded = await this.eventStore.readStream(stream);
      const state = foldEvents(batchSlotsDecider, recorded.map(toDomainEvent) as BatchSlotEvent[]);
      let released = false;
      for (const slot of overdueSlots(state, command.now, this.policy.startHoldMs)) {
        released = (await releaseUnstartedSlot(this.eventStore, command.organization, slot, command.now, metadata)) || released;
      }
      if (!released) throw error;
      await take();
    }
  }

  private async record(request: StartRequest, planned: PlannedBatch): Promise<void> {
    const { plan, context } = request;
    const organization = context.caller.organization;
    const metadata = requestMetadata(context);
    await executeOnStream(
      this.eventStore,
      suiteStream(organization, plan.suite.id),
      suiteDecider,
      { organization, suite: plan.suite, now: context.now },
      metadata,
    );
    await pausePoint('start:after-suite');
    for (const [index, evalCase] of plan.cases.entries()) {
      const variants = planned.runs.filter((run) => run.caseId === evalCase.id).map(({ variantId, variant, userModel }) => ({ variantId, variant, userModel }));
      const parts = planned.parts.get(evalCase.id);
      if (!parts) throw new Error(`The batch plan has no parts for the case "${evalCase.id}".`);
      const command = {
        type: 'RecordCaseRun' as const,
        organization,
        suiteId: plan.suite.id,
        definition: evalCase,
        parts,
        variants,
        author: context.caller.name,
        now: context.now,
      };
      await executeOnStream(this.eventStore, caseStream(organization, evalCase.id), caseDecider, command, metadata);
      await pausePoint(`start:after-case-${index + 1}`);
    }
    const started: BatchStarted = {
      type: 'BatchStarted',
      data: {
        batchId: planned.batchId,
        organization,
        startedAt: context.now.toISOString(),
        trigger: request.trigger,
        checksIn: request.checksIn,
        trials: plan.trials,
        suite: plan.suite,
        cases: plan.cases,
        runs: planned.runs,
        author: context.caller.name,
        idempotencyKey: request.idempotency?.key ?? null,
        ...(request.local === true ? { local: true } : {}),
        ...(request.promptReferences && request.promptReferences.length > 0 ? { prompts: request.promptReferences } : {}),
      },
    };
    try {
      await this.eventStore.append(batchStream(planned.batchId), [{ id: newEventId(), ...started, metadata }], 'no_stream');
    } catch (error) {
      if (!(error instanceof WrongExpectedVersion)) throw error;
      throw new Conflict(
        `This start held its batch slot longer than ${this.policy.startHoldMs} ms without recording the batch, so the slot was given back and nothing was started. Start again.`,
      );
    }
  }

  /** Claims the idempotency key, or answers the batch an earlier start with the same key began. */
  private async claimKey(request: StartRequest, idempotency: NonNullable<StartRequest['idempotency']>, batchId: string): Promise<StartedBatch | null> {
    const { key, requestHash } = idempotency;
    const organization = request.context.caller.organization;
    const stream = idempotencyStream(organization, key);
    const command = { type: 'Claim' as const, organization, batchId, requestHash, now: request.context.now };
    for (let attempt = 1; ; attempt += 1) {
      const { events } = await executeOnStream(this.eventStore, stream, idempotencyDecider, command, requestMetadata(request.context));
      if (events.length > 0) return null;
      const claimed = await this.eventStore.readStream(stream, { direction: 'backwards', maxCount: 1 });
      const earlier = (claimed[0].data as { batchId: string }).batchId;
      const started = await this.awaitStarted(earlier);
      if (started) return started;
      // The earlier start with this key was abandoned: its key is free, whoever releases it first.
      const release = { type: 'Release' as const, organization, batchId: earlier, reason: 'start-not-completed' };
      await executeOnStream(this.eventStore, stream, idempotencyDecider, release, requestMetadata(request.context));
      if (attempt >= 2) throw new Conflict('A start with this idempotency-key is being retried at the same time. Retry in a few seconds.');
    }
  }

  /** The batch an earlier start with the same key began, once recorded; null when that start was abandoned. */
  private async awaitStarted(batchId: string): Promise<StartedBatch | null> {
    for (let attempt = 0; attempt < 50; attempt += 1) {
      const first = (await this.eventStore.readStream(batchStream(batchId), { maxCount: 1 })).at(0);
      if (first?.type === 'BatchStartAbandoned') return null;
      if (first) {
        const data = (first as unknown as BatchStarted).data;
        return startedBatch(data.batchId, data.runs);
      }
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
    throw new Conflict('A start with this idempotency-key is still in progress. Retry in a few seconds.');
  }

  private async releaseKey(request: StartRequest, batchId: string, reason: string): Promise<void> {
    if (!request.idempotency) return;
    const organization = request.context.caller.organization;
    await executeOnStream(
      this.eventStore,
      idempotencyStream(organization, request.idempotency.key),
      idempotencyDecider,
      { type: 'Release', organization, batchId, reason },
      requestMetadata(request.context),
    );
  }
}

function startedBatch(batchId: string, runs: PlannedBatch['runs']): StartedBatch {
  return { id: batchId, runs: runs.map((run) => ({ caseId: run.caseId, id: run.runId, variantId: run.variantId })) };
}
