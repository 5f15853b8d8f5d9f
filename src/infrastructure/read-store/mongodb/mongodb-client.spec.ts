/**
 * The stores read the primary and write to a majority, whatever the connection string asks:
 * against MONGODB_URL's server and FerretDB (which speaks the protocol; it has one node).
 */
import { mongoTargets, noTarget, ownDatabase } from '../../../../test/support/mongodb-targets';
import { connectStoreClient } from './mongodb-client';

const targets = mongoTargets('The MongoDB store client');
for (const target of targets) {
  describe(`the MongoDB store client: ${target.name}`, () => {
    it('reads the primary and writes to a majority, journalled, over a URL asking for a secondary and w=1', async () => {
      const database = ownDatabase('client');
      const client = await connectStoreClient(`${target.url(database)}?readPreference=secondaryPreferred&w=1`);
      try {
        expect(client.readPreference.mode).toBe('primary');
        expect(client.writeConcern).toMatchObject({ w: 'majority', journal: true });
        await client
          .db(database)
          .collection('probe')
          .insertOne({ _id: 'p' } as never);
        expect(await client.db(database).collection('probe').countDocuments({})).toBe(1);
      } finally {
        await client.db(database).dropDatabase();
        await client.close();
      }
    });
  });
}
if (targets.length === 0) noTarget('the MongoDB store client');
