import { Module } from '@nestjs/common';
import { CreateVersionController } from './create-version/create-version.controller';
import { CreatePromptVersionHandler } from './create-version/create-version.handler';
import { GetPromptController } from './get-prompt/get-prompt.controller';
import { GetPromptHandler } from './get-prompt/get-prompt.handler';
import { ListPromptsController } from './list-prompts/list-prompts.controller';
import { ListPromptsHandler } from './list-prompts/list-prompts.handler';
import { ListVersionsController } from './list-versions/list-versions.controller';
import { ListPromptVersionsHandler } from './list-versions/list-versions.handler';
import { PromoteChannelController } from './promote-channel/promote-channel.controller';
import { PromotePromptChannelHandler } from './promote-channel/promote-channel.handler';
import { ListPromptPoliciesController } from './list-policies/list-policies.controller';
import { SetPromptPolicyController } from './set-policy/set-policy.controller';
import { SetPromptPolicyHandler } from './set-policy/set-policy.handler';
import { PromptsSnapshotController } from './snapshot/snapshot.controller';
import { GetPromptsSnapshotHandler } from './snapshot/snapshot.handler';
import { PromptHistoryController } from './prompt-history/prompt-history.controller';
import { GetPromptHistoryHandler } from './prompt-history/prompt-history.handler';

/** Versioned prompts: appended versions, channels that are promoted, and their replayable history. */
@Module({
  controllers: [
    CreateVersionController,
    PromoteChannelController,
    GetPromptController,
    ListPromptsController,
    ListVersionsController,
    PromptHistoryController,
    PromptsSnapshotController,
    SetPromptPolicyController,
    ListPromptPoliciesController,
  ],
  providers: [
    CreatePromptVersionHandler,
    PromotePromptChannelHandler,
    GetPromptHandler,
    ListPromptsHandler,
    ListPromptVersionsHandler,
    GetPromptHistoryHandler,
    GetPromptsSnapshotHandler,
    SetPromptPolicyHandler,
  ],
})
export class PromptsModule {}
