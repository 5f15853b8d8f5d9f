import { Inject } from '@nestjs/common';
import { IQueryHandler, QueryHandler } from '@nestjs/cqrs';
import { READ_STORE, ReadStore } from '#infrastructure/read-store/read-store.port';
import { NotFound } from '#shared/errors';
import { RUNS, RunDocument } from '../run.projection';
import { RunView, runViews } from '../run-view';
import { GetRun } from './get-run.query';

@QueryHandler(GetRun)
export class GetRunHandler implements IQueryHandler<GetRun, RunView> {
  constructor(@Inject(READ_STORE) private readonly readStore: ReadStore) {}

  async execute({ organization, runId }: GetRun): Promise<RunView> {
    const run = await this.readStore.collection<RunDocument>(RUNS).findOne({ _id: runId, organization });
    if (!run) throw new NotFound(`Run "${runId}" does not exist.`);
    const [view] = await runViews(this.readStore, organization, [run]);
    return view;
  }
}
