import { Inject } from '@nestjs/common';
import { IQueryHandler, QueryHandler } from '@nestjs/cqrs';
import { READ_STORE, ReadStore } from '#infrastructure/read-store/read-store.port';
import { NotFound } from '#shared/errors';
import { SUITES, SuiteDocument, suiteDocumentId } from '../suite.projection';
import { casesOfSuites, SuiteDetail, suiteDetail } from '../suite-view';
import { GetSuite } from './get-suite.query';

@QueryHandler(GetSuite)
export class GetSuiteHandler implements IQueryHandler<GetSuite, SuiteDetail> {
  constructor(@Inject(READ_STORE) private readonly readStore: ReadStore) {}

  async execute({ organization, suiteId }: GetSuite): Promise<SuiteDetail> {
    const suite = await this.readStore.collection<SuiteDocument>(SUITES).findOne({ _id: suiteDocumentId(organization, suiteId), organization });
    if (!suite) throw new NotFound(`Suite "${suiteId}" does not exist.`);
    const cases = await casesOfSuites(this.readStore, organization, [suite.suiteId]);
    return suiteDetail(suite, cases.get(suite.suiteId) ?? []);
  }
}
