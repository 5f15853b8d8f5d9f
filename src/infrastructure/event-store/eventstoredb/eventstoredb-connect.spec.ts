/**
 * A connection string may hold a password: the EventStoreDB client must print none of it, even
 * with its debug output on (DEBUG=esdb:*), where it would print the string it parses.
 */
import createDebug from 'debug';
import { randomUUID } from 'node:crypto';
import { EventStoreDbEventStore } from './eventstoredb-event-store';
import { EventStoreDbTestServer } from '../../../../test/support/eventstoredb/server';

const SECRET = `pa55-${randomUUID()}`;

it('lets the client print nothing of the connection string, even with its debug output on', async () => {
  const server = await EventStoreDbTestServer.start();
  const printed: string[] = [];
  const write = jest.spyOn(process.stderr, 'write').mockImplementation((chunk: string | Uint8Array) => {
    printed.push(String(chunk));
    return true;
  });
  createDebug.enable('esdb:*');
  try {
    const url = server.url().replace('esdb://', `esdb://admin:${SECRET}@`);
    const store = await EventStoreDbEventStore.connect(url);
    const id = randomUUID();
    await store.append(
      `probe-${id}`,
      [{ id, type: 'Probed', data: {}, metadata: { organization: 'acme', actor: 'test', correlationId: id, causationId: id } }],
      'no_stream',
    );
    expect(await store.readStream(`probe-${id}`)).toHaveLength(1);
    await store.close();
  } finally {
    createDebug.disable();
    write.mockRestore();
    await server.stop();
  }
  expect(printed.join('')).not.toContain(SECRET);
  // The debug output is on: other namespaces still print.
  expect(printed.join('')).toContain('esdb:command');
});
