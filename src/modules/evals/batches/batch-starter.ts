import { Inject, Injectable, Optional } from '@nestjs/common';
import { EVENT_STORE, EventStore } from '#infrastructure/event-store/event-store.port';
import { executeOnStream } from '#infrastructure/event-store/stream-command';
import { CommandContext, requestMetadata } from '#shared/caller';
import { Conflict } from '#shared/errors';
import { newEventId } from '#shared/ids';
import { caseDecider } from '../cases/case.decider';
import { caseStream } from '../cases/case.events';
import { EXECUTION_POLICY, ExecutionPolicy, STRICT_EXECUTION_POLICY } from '../shared/execution-policy';
import { suiteDecider, suiteStream } from '../suites/suite.events';
import { batchSlotsDecider, batchSlotsStream } from './batch-slots.decider';
import { BatchStarted, batchStream, Trigger } from './batch.events';
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
  /** The `{{prompt:ID@VERSION}}` the suite prompt named, resolved at start. */
  promptReferences?: PromptReference[];
}

/** Enough concurrent starts to contend for the slots stream without giving up early. */
const SLOT_ATTEMPTS = 50;

/**
 * Starts a batch: checks the plan, takes one of the organization's three slots, records the
 * case versions and the suite, then `BatchStarted`. Shared by `evals.batches.start` and
 * `evals.cases.run`. A start that fails after taking its slot gives it back.
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
    const { context } = request;
    const organization = context.caller.organization;
    const planned = planBatch(request.plan, organization, context.now, this.policy.defaultUserModel);
    if (request.idempotency) {
      const earlier = await this.claimKey(request, request.idempotency, planned.batchId);
      if (earlier) return earlier;
    }
    const metadata = requestMetadata(context);
    const slot = { organization, batchId: planned.batchId, now: context.now };
    try {
      await executeOnStream(this.eventStore, batchSlotsStream(organization), batchSlotsDecider, { type: 'TakeSlot', ...slot }, metadata, {
        attempts: SLOT_ATTEMPTS,
      });
    } catch (error) {
      await this.releaseKey(request, planned.batchId, 'no slot');
      throw error;
    }
    try {
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
    for (const evalCase of plan.cases) {
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
    await this.eventStore.append(batchStream(planned.batchId), [{ id: newEventId(), ...started, metadata }], 'no_stream');
  }

  /** Claims the idempotency key, or answers the batch an earlier start with the same key began. */
  private async claimKey(request: StartRequest, idempotency: NonNullable<StartRequest['idempotency']>, batchId: string): Promise<StartedBatch | null> {
    const { key, requestHash } = idempotency;
    const organization = request.context.caller.organization;
    const stream = idempotencyStream(organization, key);
    const command = { type: 'Claim' as const, organization, batchId, requestHash, now: request.context.now };
    const { events } = await executeOnStream(this.eventStore, stream, idempotencyDecider, command, requestMetadata(request.context));
    if (events.length > 0) return null;
    const claimed = await this.eventStore.readStream(stream, { direction: 'backwards', maxCount: 1 });
    return this.awaitStarted((claimed[0].data as { batchId: string }).batchId);
  }

  private async awaitStarted(batchId: string): Promise<StartedBatch> {
    for (let attempt = 0; attempt < 50; attempt += 1) {
      const first = (await this.eventStore.readStream(batchStream(batchId), { maxCount: 1 })).at(0);
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
