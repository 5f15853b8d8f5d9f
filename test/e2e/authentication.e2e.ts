import { generateKeyPair, KeyLike } from 'jose';
import { ApiClient } from '../support/http-client';
import { IdentityProvider, startIdentityProvider, TokenOptions } from '../support/jwks';
import { INIT_KEY, InProcessServer, startInProcess } from '../support/servers';

describe('authentication and permissions over real HTTP', () => {
  let server: InProcessServer;
  let admin: ApiClient;
  let idp: IdentityProvider;
  let strangerKey: KeyLike;

  beforeAll(async () => {
    idp = await startIdentityProvider();
    strangerKey = (await generateKeyPair('RS256')).privateKey;
    server = await startInProcess({ ASSAY_INIT_ORG: 'acme', ASSAY_INIT_API_KEY: INIT_KEY, ...idp.env });
    admin = server.client;
  });

  afterAll(async () => {
    await server.close();
    await idp.close();
  });

  const token = (claims: Record<string, unknown>, options: TokenOptions = {}) => idp.token(claims, options);

  it('answers 401 without a credential, with a wrong key and with a malformed header', async () => {
    const cases: Array<Record<string, string> | null> = [null, { authorization: 'Bearer assay_wrong' }, { authorization: 'Basic abc' }];
    for (const headers of cases) {
      const answer = await admin.call('auth.whoami', {}, { key: null, headers: headers ?? {} });
      expect(answer.status).toBe(401);
      expect(answer.body).toEqual({ _tag: 'Unauthorized', message: expect.any(String) });
    }
  });

  it('issues a key shown once, accepts it at once, and answers 403 for a permission it lacks', async () => {
    const created = await admin.call('auth.keys.create', { name: 'reader', permissions: ['evals:read'] });
    expect(created.status).toBe(200);
    expect(created.body).toEqual({
      id: expect.stringMatching(/^key_/),
      key: expect.stringMatching(/^assay_[A-Za-z0-9_-]{43}$/),
      name: 'reader',
      permissions: ['evals:read'],
      createdAt: expect.stringMatching(/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/),
    });
    const reader = admin.withKey(created.body.key);
    expect((await reader.call('auth.whoami')).body).toMatchObject({ organization: 'acme', keyId: created.body.id, permissions: ['evals:read'] });
    const forbidden = await reader.call('auth.keys.create', { name: 'x', permissions: ['evals:read'] });
    expect(forbidden.status).toBe(403);
    expect(forbidden.body).toEqual({ _tag: 'Forbidden', message: expect.stringContaining('keys:admin') });
  });

  it('lists keys without their secret or hash, and refuses a revoked key at once', async () => {
    const created = await admin.call('auth.keys.create', { name: 'short-lived', permissions: ['evals:read'] });
    const listed = await admin.call('auth.keys.list');
    expect(listed.status).toBe(200);
    const entry = listed.body.keys.find((key: { id: string }) => key.id === created.body.id);
    expect(entry).toEqual({ id: created.body.id, name: 'short-lived', permissions: ['evals:read'], createdAt: created.body.createdAt, revokedAt: null });
    expect(listed.text).not.toContain(created.body.key);
    expect(listed.text).not.toContain('keyHash');
    // Used before it is revoked, so a remembered caller would let it in afterwards.
    expect((await admin.withKey(created.body.key).call('auth.whoami')).status).toBe(200);

    expect((await admin.call('auth.keys.revoke', { id: created.body.id })).body).toEqual({ ok: true });
    const refused = await admin.withKey(created.body.key).call('auth.whoami');
    expect(refused.status).toBe(401);
    expect(refused.body._tag).toBe('Unauthorized');
    const again = await admin.call('auth.keys.revoke', { id: created.body.id });
    expect(again.body).toEqual({ ok: true });
  });

  it("answers 404 for another organization's key and for an unknown one", async () => {
    const token1 = await token({ org_id: 'globex', scope: 'keys:admin evals:read' });
    const globex = admin.withKey(token1);
    const theirs = await globex.call('auth.keys.create', { name: 'theirs', permissions: ['evals:read'] });
    expect(theirs.status).toBe(200);
    const answer = await admin.call('auth.keys.revoke', { id: theirs.body.id });
    expect(answer.status).toBe(404);
    expect(answer.body._tag).toBe('NotFound');
    expect((await admin.call('auth.keys.revoke', { id: 'key_nope' })).status).toBe(404);
    const ours = (await admin.call('auth.keys.list')).body.keys.map((key: { id: string }) => key.id);
    expect(ours).not.toContain(theirs.body.id);
    expect((await admin.withKey(theirs.body.key).call('auth.whoami')).body.organization).toBe('globex');
  });

  it('does not let a key grant permissions its creator lacks', async () => {
    const limited = await admin.call('auth.keys.create', { name: 'limited admin', permissions: ['keys:admin', 'evals:read'] });
    const answer = await admin.withKey(limited.body.key).call('auth.keys.create', { name: 'escalate', permissions: ['evals:write'] });
    expect(answer.status).toBe(403);
    expect(answer.body.message).toContain('evals:write');
  });

  it('accepts an OAuth access token: organization from org_id, permissions from scope or permissions', async () => {
    const viaScope = await admin.withKey(await token({ org_id: 'acme', scope: 'evals:read openid prompts:read' })).call('auth.whoami');
    expect(viaScope.status).toBe(200);
    expect(viaScope.body).toEqual({
      organization: 'acme',
      kind: 'oauth',
      keyId: null,
      subject: 'user-42',
      name: 'user-42',
      permissions: ['evals:read', 'prompts:read'],
    });
    const viaArray = await admin.withKey(await token({ org_id: 'acme', permissions: ['keys:admin'] })).call('auth.keys.list');
    expect(viaArray.status).toBe(200);
  });

  it('answers 403 to a valid token without the permission', async () => {
    const answer = await admin.withKey(await token({ org_id: 'acme', scope: 'evals:read' })).call('auth.keys.list');
    expect(answer.status).toBe(403);
    expect(answer.body._tag).toBe('Forbidden');
  });

  it('answers 401 to expired, foreign-signed, wrong-audience and organization-less tokens', async () => {
    const past = Math.floor(Date.now() / 1000) - 60;
    const tokens = [
      await token({ org_id: 'acme', scope: 'evals:read' }, { expiresIn: past }),
      await token({ org_id: 'acme', scope: 'evals:read' }, { key: strangerKey }),
      await token({ org_id: 'acme', scope: 'evals:read' }, { audience: 'someone-else' }),
      await token({ scope: 'evals:read' }),
    ];
    const messages: string[] = [];
    for (const bad of tokens) {
      const answer = await admin.withKey(bad).call('auth.whoami');
      expect(answer.status).toBe(401);
      expect(answer.body._tag).toBe('Unauthorized');
      messages.push(answer.body.message);
    }
    expect(messages[0]).toContain('expired');
  });

  it('never logs a credential', async () => {
    const created = await admin.call('auth.keys.create', { name: 'secret-check', permissions: ['evals:read'] });
    await admin.withKey(created.body.key).call('auth.whoami');
    const logText = server.logs.lines.join('\n');
    expect(logText).not.toContain(created.body.key);
    expect(logText).not.toContain(INIT_KEY);
  });
});
