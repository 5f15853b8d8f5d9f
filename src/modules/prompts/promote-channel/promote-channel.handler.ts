import { Inject } from '@nestjs/common';
import { CommandHandler, ICommandHandler } from '@nestjs/cqrs';
import { EVENT_STORE, EventStore } from '#infrastructure/event-store/event-store.port';
import { executeOnStream } from '#infrastructure/event-store/stream-command';
import { READ_STORE, ReadStore } from '#infrastructure/read-store/read-store.port';
import { requestMetadata } from '#shared/caller';
import { NotFound } from '#shared/errors';
import { BATCHES, BatchDocument } from '#modules/evals/batches/batch.projection';
import { BatchStarted, batchStream } from '#modules/evals/batches/batch.events';
import { policyKey, PROMPT_POLICIES, PromptPolicyDocument } from '../prompt-policy';
import { promptDecider } from '../prompt.decider';
import { promptStream } from '../prompt.events';
import { BatchFacts, checkEvidence, evidenceOf } from '../promotion-evidence';
import { PromotePromptChannelCommand } from './promote-channel.command';

@CommandHandler(PromotePromptChannelCommand)
export class PromotePromptChannelHandler implements ICommandHandler<PromotePromptChannelCommand> {
  constructor(
    @Inject(EVENT_STORE) private readonly eventStore: EventStore,
    @Inject(READ_STORE) private readonly readStore: ReadStore,
  ) {}

  async execute({ payload, context, evidence }: PromotePromptChannelCommand): Promise<{ ok: true }> {
    const { organization, promptId, channel, version } = payload;
    const policy = await this.readStore.collection<PromptPolicyDocument>(PROMPT_POLICIES).findOne({ _id: policyKey(organization, channel) });
    const batch = evidence ? await this.batchFacts(organization, evidence.batchId) : null;
    if (policy?.requireEvidence) checkEvidence(policy.requireEvidence, { promptId, version, channel }, batch);
    const command = batch ? { ...payload, evidence: evidenceOf(batch) } : payload;
    await executeOnStream(this.eventStore, promptStream(organization, promptId), promptDecider, command, requestMetadata(context));
    return { ok: true };
  }

  /** The batch's verdicts from its read model, and the prompt versions it ran from its BatchStarted. */
  private async batchFacts(organization: string, batchId: string): Promise<BatchFacts> {
    const document = await this.readStore.collection<BatchDocument>(BATCHES).findOne({ _id: batchId });
    if (!document || document.organization !== organization) throw new NotFound(`Batch "${batchId}" (the evidence) does not exist.`);
    const started = (await this.eventStore.readStream(batchStream(batchId), { maxCount: 1 })).at(0) as unknown as BatchStarted | undefined;
    return { batchId, status: document.status, prompts: started?.data.prompts ?? [], scored: document.scored, passed: document.passed };
  }
}
