/**
 * The read models' indexes on MongoDB, made to match what the projections declare at each start.
 * Only what is missing is created: MongoDB takes an index created twice, but some servers that
 * speak its protocol do not (FerretDB v1 drops the connection when every index of a
 * `createIndexes` already exists). An index of the same name whose options changed (a field made
 * unique, or no longer unique) is dropped and built again, instead of failing every start with
 * IndexOptionsConflict: an index of a read model holds nothing the documents do not.
 */
import type { Collection as DriverCollection, MongoServerError } from 'mongodb';
import type { IndexSpec, RebuiltIndex } from '../read-store.port';
import { indexKeys } from './mongodb-values';

const NAMESPACE_NOT_FOUND = 26;

interface WantedIndex {
  key: Record<string, 1 | -1>;
  name: string;
  unique: boolean;
}

/** MongoDB's default index name (`org_1_createdAt_-1__id_-1`), spelled out so that it never varies. */
export function indexName(keys: Record<string, 1 | -1>): string {
  return Object.entries(keys)
    .map(([field, direction]) => `${field}_${direction}`)
    .join('_');
}

export function wantedIndexes(specs: readonly IndexSpec[]): WantedIndex[] {
  return specs.map((spec) => {
    const key = indexKeys(spec);
    return { key, name: indexName(key), unique: spec.unique ?? false };
  });
}

async function existingIndexes(collection: DriverCollection): Promise<Map<string, { key: Record<string, unknown>; unique: boolean }>> {
  try {
    const listed = (await collection.listIndexes().toArray()) as Array<{ name: string; key: Record<string, unknown>; unique?: boolean }>;
    return new Map(listed.map((index) => [index.name, { key: index.key, unique: index.unique === true }]));
  } catch (error) {
    if ((error as MongoServerError).code === NAMESPACE_NOT_FOUND) return new Map();
    throw error;
  }
}

function sameKey(a: Record<string, unknown>, b: Record<string, unknown>): boolean {
  const [left, right] = [Object.entries(a), Object.entries(b)];
  return left.length === right.length && left.every(([field, direction], index) => right[index][0] === field && Number(right[index][1]) === Number(direction));
}

/** What of an index's declaration changed, in words for the log; null when nothing did. */
function changeOf(found: { key: Record<string, unknown>; unique: boolean }, wanted: WantedIndex): string | null {
  if (!sameKey(found.key, wanted.key)) return `its keys changed from ${JSON.stringify(found.key)} to ${JSON.stringify(wanted.key)}`;
  if (found.unique !== wanted.unique) return wanted.unique ? 'it is declared unique now' : 'it is no longer declared unique';
  return null;
}

/**
 * Creates the wanted indexes that are missing, and rebuilds those whose options differ. Answers
 * the indexes it rebuilt, with why, for the caller to log.
 */
export async function reconcileIndexes(collection: DriverCollection, specs: readonly IndexSpec[]): Promise<RebuiltIndex[]> {
  const wanted = wantedIndexes(specs);
  const existing = await existingIndexes(collection);
  const rebuilt: RebuiltIndex[] = [];
  const missing: WantedIndex[] = [];
  for (const index of wanted) {
    const found = existing.get(index.name);
    const change = found ? changeOf(found, index) : null;
    if (found && change === null) continue;
    if (found && change !== null) {
      await collection.dropIndex(index.name);
      rebuilt.push({ collection: collection.collectionName, index: index.name, reason: change });
    }
    missing.push(index);
  }
  if (missing.length > 0) await collection.createIndexes(missing);
  return rebuilt;
}
