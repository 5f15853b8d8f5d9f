import { Inject } from '@nestjs/common';
import { IQueryHandler, QueryHandler } from '@nestjs/cqrs';
import { READ_STORE, ReadStore } from '#infrastructure/read-store/read-store.port';
import { ENVIRONMENT_VARIABLES, VariableDocument, VariableView, variableView } from '../environment.projection';
import { ListVariables } from './list-variables.query';

@QueryHandler(ListVariables)
export class ListVariablesHandler implements IQueryHandler<ListVariables, VariableView[]> {
  constructor(@Inject(READ_STORE) private readonly readStore: ReadStore) {}

  async execute({ organization }: ListVariables): Promise<VariableView[]> {
    const documents = await this.readStore.collection<VariableDocument>(ENVIRONMENT_VARIABLES).find({ organization }, { sort: { name: 1 } });
    return documents.map(variableView);
  }
}
