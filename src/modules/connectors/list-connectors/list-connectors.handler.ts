import { Inject } from '@nestjs/common';
import { IQueryHandler, QueryHandler } from '@nestjs/cqrs';
import { READ_STORE, ReadStore } from '#infrastructure/read-store/read-store.port';
import { ConnectionDocument, CONNECTIONS, ConnectionView, connectionView } from '../connection.projection';
import { ListConnectors } from './list-connectors.query';

@QueryHandler(ListConnectors)
export class ListConnectorsHandler implements IQueryHandler<ListConnectors, ConnectionView[]> {
  constructor(@Inject(READ_STORE) private readonly readStore: ReadStore) {}

  async execute({ organization, actor }: ListConnectors): Promise<ConnectionView[]> {
    const documents = await this.readStore
      .collection<ConnectionDocument>(CONNECTIONS)
      .find({ organization, $or: [{ scope: 'organization' }, { owner: actor }] }, { sort: { createdAt: -1, _id: -1 } });
    return documents.map(connectionView);
  }
}
