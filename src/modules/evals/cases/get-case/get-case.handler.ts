import { Inject } from '@nestjs/common';
import { IQueryHandler, QueryHandler } from '@nestjs/cqrs';
import { READ_STORE, ReadStore } from '#infrastructure/read-store/read-store.port';
import { NotFound } from '#shared/errors';
import { CASES, CaseDocument, caseDocumentId } from '../case.projection';
import { CaseDetail, caseDetail } from '../case-view';
import { GetCase } from './get-case.query';

@QueryHandler(GetCase)
export class GetCaseHandler implements IQueryHandler<GetCase, CaseDetail> {
  constructor(@Inject(READ_STORE) private readonly readStore: ReadStore) {}

  async execute({ organization, caseId }: GetCase): Promise<CaseDetail> {
    const document = await this.readStore.collection<CaseDocument>(CASES).findOne({ _id: caseDocumentId(organization, caseId), organization });
    if (!document) throw new NotFound(`Case "${caseId}" does not exist.`);
    return caseDetail(document);
  }
}
