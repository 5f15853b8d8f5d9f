import { DynamicModule, Module } from '@nestjs/common';
import { BatchWatches } from './batch-watches';
import { WatchBatchController } from './watch-batch.controller';

/** evals.batches.watch: live progress of a batch, bounded per organization. */
@Module({})
export class WatchBatchModule {
  static withLimit(perOrganization: number): DynamicModule {
    return {
      module: WatchBatchModule,
      controllers: [WatchBatchController],
      providers: [{ provide: BatchWatches, useValue: new BatchWatches(perOrganization) }],
    };
  }
}
