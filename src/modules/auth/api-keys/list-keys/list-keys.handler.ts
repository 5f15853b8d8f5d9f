import { Inject } from '@nestjs/common';
import { IQueryHandler, QueryHandler } from '@nestjs/cqrs';
import { READ_STORE, ReadStore } from '#infrastructure/read-store/read-store.port';
import { API_KEYS, ApiKeyDocument } from '../api-key.projection';
import { ListApiKeys } from './list-keys.query';

export interface ApiKeySummary {
  id: string;
  name: string;
  permissions: string[];
  createdAt: string;
  revokedAt: string | null;
}

@QueryHandler(ListApiKeys)
export class ListApiKeysHandler implements IQueryHandler<ListApiKeys, { keys: ApiKeySummary[] }> {
  constructor(@Inject(READ_STORE) private readonly readStore: ReadStore) {}

  async execute({ organization }: ListApiKeys): Promise<{ keys: ApiKeySummary[] }> {
    const documents = await this.readStore.collection<ApiKeyDocument>(API_KEYS).find({ organization }, { sort: { createdAt: -1, _id: -1 } });
    // Never the hash: a listing shows which keys exist, not anything that could verify one.
    const keys = documents.map(({ _id, name, permissions, createdAt, revokedAt }) => ({ id: _id, name, permissions, createdAt, revokedAt }));
    return { keys };
  }
}
