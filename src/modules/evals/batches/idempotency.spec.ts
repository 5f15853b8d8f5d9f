import { IdempotencyCommand, idempotencyDecider, IdempotencyEvent } from './idempotency';
import { BadRequest } from '#shared/errors';
import { given } from '../../../../test/support/decider-spec';

const now = new Date('2026-01-01T00:00:00.000Z');

describe('the idempotency decider: one start per key', () => {
  const claim = (requestHash: string, batchId = 'bat_1'): IdempotencyCommand => ({ type: 'Claim', organization: 'acme', batchId, requestHash, now });
  const claimed: IdempotencyEvent = {
    type: 'IdempotencyKeyClaimed',
    data: { organization: 'acme', batchId: 'bat_1', requestHash: 'h1', claimedAt: now.toISOString() },
  };
  const release = (batchId: string): IdempotencyCommand => ({ type: 'Release', organization: 'acme', batchId, reason: 'the start failed' });
  const released: IdempotencyEvent = { type: 'IdempotencyKeyReleased', data: { organization: 'acme', batchId: 'bat_1', reason: 'the start failed' } };

  it('the first claim wins', () => {
    given(idempotencyDecider, []).when(claim('h1')).then([claimed]);
  });

  it('a claim with the same body finds the original batch and appends nothing', () => {
    given(idempotencyDecider, [claimed]).when(claim('h1', 'bat_2')).then([]);
  });

  it('refuses a claim with another body with BadRequest', () => {
    given(idempotencyDecider, [claimed])
      .when(claim('h2', 'bat_2'))
      .thenThrows(BadRequest, /already used with a different body/);
  });

  it('a start that did not happen releases its claim once, and the key can be claimed again', () => {
    given(idempotencyDecider, [claimed]).when(release('bat_1')).then([released]);
    given(idempotencyDecider, [claimed, released]).when(release('bat_1')).then([]);
    given(idempotencyDecider, [claimed]).when(release('bat_other')).then([]);
    given(idempotencyDecider, [claimed, released])
      .when(claim('h2', 'bat_2'))
      .then([{ type: 'IdempotencyKeyClaimed', data: { organization: 'acme', batchId: 'bat_2', requestHash: 'h2', claimedAt: now.toISOString() } }]);
  });
});
