import { DataKeyCommand, dataKeyDecider, DataKeyEvent } from './data-key.decider';
import { Conflict, NotFound } from '#shared/errors';
import { given } from '../../../test/support/decider-spec';

const now = new Date('2026-01-01T00:00:00.000Z');
const create = (wrappedKey = 'wrapped-a'): DataKeyCommand => ({
  type: 'CreateDataKey',
  organization: 'acme',
  keyId: 'dk_1',
  wrappedKey,
  masterKeyId: 'mk_a',
  now,
});
const rewrap = (fromMasterKeyId = 'mk_a', keyId = 'dk_1'): DataKeyCommand => ({
  type: 'RewrapDataKey',
  organization: 'acme',
  keyId,
  wrappedKey: 'wrapped-b',
  masterKeyId: 'mk_b',
  fromMasterKeyId,
  now,
});
const created: DataKeyEvent = {
  type: 'DataKeyCreated',
  data: { organization: 'acme', keyId: 'dk_1', wrappedKey: 'wrapped-a', masterKeyId: 'mk_a', createdAt: now.toISOString() },
};
const rewrapped: DataKeyEvent = {
  type: 'DataKeyRewrapped',
  data: { organization: 'acme', keyId: 'dk_1', wrappedKey: 'wrapped-b', masterKeyId: 'mk_b', previousMasterKeyId: 'mk_a', rewrappedAt: now.toISOString() },
};

describe('the data key decider', () => {
  it("creates the organization's data key, wrapped", () => {
    given(dataKeyDecider, []).when(create()).then([created]);
  });

  it('creating it again (another request was first) appends nothing: the first key stays', () => {
    given(dataKeyDecider, [created]).when(create('wrapped-other')).then([]);
  });

  it('re-wraps under the new master key, and re-wrapping again appends nothing', () => {
    given(dataKeyDecider, [created]).when(rewrap()).then([rewrapped]);
    given(dataKeyDecider, [created, rewrapped]).when(rewrap()).then([]);
  });

  it('refuses to re-wrap a key that does not exist with NotFound', () => {
    given(dataKeyDecider, []).when(rewrap()).thenThrows(NotFound, 'Organization "acme" has no data key.');
  });

  it('refuses to re-wrap from a master key that does not wrap it, or another data key, with Conflict', () => {
    given(dataKeyDecider, [created]).when(rewrap('mk_z')).thenThrows(Conflict, 'The data key of "acme" is wrapped by mk_a, not by mk_z.');
    given(dataKeyDecider, [created])
      .when(rewrap('mk_a', 'dk_2'))
      .thenThrows(Conflict, /wrapped by mk_a/);
  });
});
