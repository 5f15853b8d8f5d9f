import { Body, Controller, Inject } from '@nestjs/common';
import { CommandBus } from '@nestjs/cqrs';
import { CorrelationId, CurrentCaller, Operation } from '#infrastructure/http/operation.decorator';
import type { Caller } from '#shared/caller';
import { Clock, CLOCK } from '#shared/clock';
import { RUNNER_SETTINGS, RunnerSettings } from '../runner-settings';
import { Reported, ReportTrialCommand } from './report-trial.command';
import { ReportTrialDto } from './report-trial.dto';
import { toOutcome } from './to-outcome';

@Controller()
export class ReportTrialController {
  constructor(
    private readonly commandBus: CommandBus,
    @Inject(CLOCK) private readonly clock: Clock,
    @Inject(RUNNER_SETTINGS) private readonly settings: RunnerSettings,
  ) {}

  /** A leased trial's full outcome, recorded as a server trial's: every read then shows it. */
  @Operation('runner.trials.report', 'evals:write')
  report(@Body() body: ReportTrialDto, @CurrentCaller() caller: Caller, @CorrelationId() correlationId: string): Promise<Reported> {
    const outcome = toOutcome(body.result, this.settings.outputCapBytes);
    return this.commandBus.execute(new ReportTrialCommand(body.id, body.trialId, body.lease, outcome, { caller, correlationId, now: this.clock.now() }));
  }
}
