/**
 * The store's own record of where an organization's chain ends (`auditchain-{org}` on
 * EventStoreDB): deleting it must not make the chain's end unchecked.
 */
import { randomBytes, randomUUID } from 'node:crypto';
import { KeyRing } from '#infrastructure/secrets/key-ring';
import { EventStoreDbEventStore } from './eventstoredb-event-store';
import { NewEvent } from '../event-store.port';
import { VerifyAuditChainHandler } from '#modules/audit/verify-chain/verify-chain.handler';
import { VerifyAuditChain } from '#modules/audit/verify-chain/verify-chain.query';
import { EventStoreDbTestServer } from '../../../../test/support/eventstoredb/server';

function orgEvent(type: string): NewEvent {
  const correlationId = randomUUID();
  return { id: randomUUID(), type, data: {}, metadata: { organization: 'acme', actor: 'key_audit', correlationId, causationId: correlationId } };
}

it("reports a chained organization whose chain stream was deleted: its chain's end can no longer be checked", async () => {
  const server = await EventStoreDbTestServer.start();
  const store = await EventStoreDbEventStore.connect(server.url());
  try {
    await store.append('prompt-acme.p', [orgEvent('PromptVersionCreated'), orgEvent('PromptChannelPromoted')], 'no_stream');
    await store.append('batch-acme', [orgEvent('BatchStarted'), orgEvent('BatchFinished')], 'no_stream');
    const verify = () => new VerifyAuditChainHandler(store, new KeyRing(store, randomBytes(32))).execute(new VerifyAuditChain('acme'));
    expect(await verify()).toEqual({ ok: true, checked: 4, unchained: 0, firstBreak: null });
    // Deleting the record and the newest events together would otherwise go unseen.
    server.remove('auditchain-acme');
    server.remove('batch-acme');
    const report = await verify();
    expect(report.ok).toBe(false);
    expect(report.firstBreak?.reason).toContain('record of where its chain ends is missing');
  } finally {
    await store.close();
    await server.stop();
  }
});
