import { Module } from '@nestjs/common';
import { CompareController } from './compare/compare.controller';
import { CompareHandler } from './compare/compare.handler';
import { FlakyController } from './flaky/flaky.controller';
import { FlakyHandler } from './flaky/flaky.handler';
import { PassRatesController } from './pass-rates/pass-rates.controller';
import { PassRatesHandler } from './pass-rates/pass-rates.handler';

/** analytics.*: pass rates over time, comparisons and flakiness, from the analytics projection. */
@Module({
  controllers: [PassRatesController, CompareController, FlakyController],
  providers: [PassRatesHandler, CompareHandler, FlakyHandler],
})
export class AnalyticsModule {}
