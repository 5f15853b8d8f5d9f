import { MongoClient, MongoClientOptions } from 'mongodb';

/**
 * How the stores talk to MongoDB, whatever the connection string says: reads from the primary
 * (a secondary may lag: a follower's read-your-writes would miss the owner's documents, and a
 * blob read there could find nothing and stop the projections), and writes acknowledged by a
 * majority, journalled (on a replica set with an arbiter the default is one node: a rollback
 * could then undo the lease, leaving two owners, or a checkpoint's documents). These options
 * override `readPreference` and `w` in the URL; `journal=false` there is refused at start
 * (connection-strings.ts), since the driver would let it win.
 */
export const STORE_CLIENT_OPTIONS: MongoClientOptions = {
  readPreference: 'primary',
  writeConcern: { w: 'majority', journal: true },
};

/** A connected client with STORE_CLIENT_OPTIONS. */
export function connectStoreClient(url: string): Promise<MongoClient> {
  return MongoClient.connect(url, STORE_CLIENT_OPTIONS);
}
