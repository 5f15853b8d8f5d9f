import { Body, Controller } from '@nestjs/common';
import { QueryBus } from '@nestjs/cqrs';
import { CurrentCaller, Operation } from '#infrastructure/http/operation.decorator';
import type { Caller } from '#shared/caller';
import { TrialArtifactDto, TrialDiffDto } from './trial-files.dto';
import type { TrialArtifactView, TrialDiffView } from './trial-files.handlers';
import { GetTrialArtifact, GetTrialDiff } from './trial-files.queries';

/** A trial's change to its workspace: the diff, and the artifacts' content. */
@Controller()
export class TrialFilesController {
  constructor(private readonly queryBus: QueryBus) {}

  @Operation('evals.trials.diff', 'evals:read')
  diff(@Body() body: TrialDiffDto, @CurrentCaller() caller: Caller): Promise<TrialDiffView> {
    return this.queryBus.execute(new GetTrialDiff(caller.organization, body.trialId));
  }

  @Operation('evals.trials.artifact', 'evals:read')
  artifact(@Body() body: TrialArtifactDto, @CurrentCaller() caller: Caller): Promise<TrialArtifactView> {
    return this.queryBus.execute(new GetTrialArtifact(caller.organization, body.trialId, body.path));
  }
}
