import { Body, Controller, Inject } from '@nestjs/common';
import { ForbidUnknownProperties } from '#infrastructure/http/decode/decode.pipe';
import { CurrentCaller, Operation } from '#infrastructure/http/operation.decorator';
import { READ_STORE, ReadStore } from '#infrastructure/read-store/read-store.port';
import type { Caller } from '#shared/caller';
import { EvidenceRequirement, PROMPT_POLICIES, PromptPolicyDocument } from '../prompt-policy';

/** `{}`, strictly. */
@ForbidUnknownProperties()
export class ListPromptPoliciesDto {}

export interface PromptPolicyView {
  channel: string;
  requireEvidence: EvidenceRequirement;
  setBy: string;
  setAt: string;
}

@Controller()
export class ListPromptPoliciesController {
  constructor(@Inject(READ_STORE) private readonly readStore: ReadStore) {}

  /** The channels whose promotions need evidence, by channel. */
  @Operation('prompts.policies.list', 'prompts:read')
  async list(@Body() _body: ListPromptPoliciesDto, @CurrentCaller() caller: Caller): Promise<{ data: PromptPolicyView[] }> {
    const documents = await this.readStore
      .collection<PromptPolicyDocument>(PROMPT_POLICIES)
      .find({ organization: caller.organization }, { sort: { channel: 1 } });
    const data = documents.flatMap(({ channel, requireEvidence, actor, setAt }) =>
      requireEvidence ? [{ channel, requireEvidence, setBy: actor, setAt }] : [],
    );
    return { data };
  }
}
