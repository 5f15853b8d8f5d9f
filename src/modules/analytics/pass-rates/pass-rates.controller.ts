import { Body, Controller, Inject } from '@nestjs/common';
import { QueryBus } from '@nestjs/cqrs';
import { CurrentCaller, Operation } from '#infrastructure/http/operation.decorator';
import type { Caller } from '#shared/caller';
import { Clock, CLOCK } from '#shared/clock';
import { PassRatesDto } from './pass-rates.dto';
import type { PassRates } from './pass-rates.handler';
import { GetPassRates } from './pass-rates.query';

@Controller()
export class PassRatesController {
  constructor(
    private readonly queryBus: QueryBus,
    @Inject(CLOCK) private readonly clock: Clock,
  ) {}

  @Operation('analytics.passRates', 'evals:read')
  passRates(@Body() body: PassRatesDto, @CurrentCaller() caller: Caller): Promise<PassRates> {
    const filter = { suiteId: body.suiteId ?? null, caseId: body.caseId ?? null, variantKey: body.variant ?? null };
    return this.queryBus.execute(
      new GetPassRates(caller.organization, filter, { from: body.from ?? null, to: body.to ?? null, bucket: body.bucket }, this.clock.now()),
    );
  }
}
