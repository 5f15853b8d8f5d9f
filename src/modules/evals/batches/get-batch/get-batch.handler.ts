import { Inject } from '@nestjs/common';
import { IQueryHandler, QueryHandler } from '@nestjs/cqrs';
import { findToRead, READ_STORE, ReadStore } from '#infrastructure/read-store/read-store.port';
import { NotFound } from '#shared/errors';
import { RUNS, RunDocument } from '../../runs/run.projection';
import { RunView, runViews } from '../../runs/run-view';
import { CostRecord, sumRunCosts } from '../../trials/costs';
import { BATCHES, BatchDocument } from '../batch.projection';
import { GetBatch } from './get-batch.query';

export interface BatchView {
  id: string;
  status: BatchDocument['status'];
  startedAt: string;
  finishedAt: string | null;
  failure: string | null;
  local: boolean;
  costs: CostRecord;
  runs: RunView[];
  trigger: BatchDocument['trigger'];
}

@QueryHandler(GetBatch)
export class GetBatchHandler implements IQueryHandler<GetBatch, BatchView> {
  constructor(@Inject(READ_STORE) private readonly readStore: ReadStore) {}

  async execute({ organization, batchId }: GetBatch): Promise<BatchView> {
    const batch = await this.readStore.collection<BatchDocument>(BATCHES).findOne({ _id: batchId, organization });
    if (!batch) throw new NotFound(`Batch "${batchId}" does not exist.`);
    // Read only: the memory store hands its own documents, frozen; the views are new objects.
    const documents = [...(await findToRead(this.readStore.collection<RunDocument>(RUNS), { organization, batchId }))];
    const order = new Map(batch.runIds.map((runId, index) => [runId, index]));
    // A run missing from the batch's order compares as NaN (taken as equal by sort), as it always did.
    const position = (runId: string) => order.get(runId) ?? Number.NaN;
    documents.sort((a, b) => position(a._id) - position(b._id));
    return {
      id: batch._id,
      status: batch.status,
      startedAt: batch.startedAt,
      finishedAt: batch.finishedAt,
      failure: batch.failure,
      local: batch.local,
      costs: sumRunCosts(documents.map((run) => run.costs).filter((costs) => costs.components.length > 0)),
      runs: await runViews(this.readStore, organization, documents),
      trigger: batch.trigger,
    };
  }
}
