import { ApiClient } from '../support/http-client';
import { INIT_KEY, InProcessServer, startInProcess } from '../support/servers';
import { PERMISSIONS } from '#shared/permissions';

const MAX_BODY = 4096;

describe('HTTP conventions over real HTTP', () => {
  let server: InProcessServer;
  let api: ApiClient;

  beforeAll(async () => {
    server = await startInProcess({
      ASSAY_INIT_ORG: 'acme',
      ASSAY_INIT_API_KEY: INIT_KEY,
      ASSAY_MAX_BODY_BYTES: String(MAX_BODY),
    });
    api = server.client;
  });

  afterAll(() => server.close());

  it('answers auth.whoami with the initial key: its organization and every permission', async () => {
    const answer = await api.call('auth.whoami');
    expect(answer.status).toBe(200);
    expect(answer.body).toMatchObject({ organization: 'acme', kind: 'api_key', subject: null });
    expect(answer.body.permissions).toEqual(expect.arrayContaining(['evals:read', 'evals:write', 'keys:admin', 'prompts:write', 'audit:read']));
    expect([...answer.body.permissions].sort()).toEqual([...PERMISSIONS].sort());
  });

  it('answers 405 MethodNotAllowed to another method on a known operation', async () => {
    for (const method of ['GET', 'PUT', 'DELETE']) {
      const answer = await api.call('auth.whoami', undefined, { method });
      expect(answer.status).toBe(405);
      expect(answer.body).toEqual({ _tag: 'MethodNotAllowed', message: expect.stringMatching(/^Use POST for \/v1\/auth\.whoami/) });
    }
  });

  it('answers 404 NotFound naming the path of an unknown operation', async () => {
    const answer = await api.call('no.such.op');
    expect(answer.status).toBe(404);
    expect(answer.body).toEqual({ _tag: 'NotFound', message: expect.stringContaining('/v1/no.such.op') });
  });

  it('answers 400 BadRequest to malformed JSON', async () => {
    const answer = await api.call('auth.whoami', undefined, { rawBody: '{"x":' });
    expect(answer.status).toBe(400);
    expect(answer.body).toEqual({ _tag: 'BadRequest', message: expect.stringContaining('not valid JSON') });
  });

  it('answers 400 BadRequest to a body that is not JSON', async () => {
    const answer = await api.call('auth.whoami', undefined, { rawBody: 'name=x', headers: { 'content-type': 'application/x-www-form-urlencoded' } });
    expect(answer.status).toBe(400);
    expect(answer.body).toEqual({ _tag: 'BadRequest', message: expect.stringContaining('application/json') });
  });

  it('accepts a body of exactly ASSAY_MAX_BODY_BYTES and refuses one byte more with 400', async () => {
    const body = (size: number) => {
      const skeleton = JSON.stringify({ name: 'k', permissions: ['evals:read'], pad: '' });
      return skeleton.replace('"pad":""', `"pad":"${'x'.repeat(size - skeleton.length)}"`);
    };
    const atLimit = await api.call('auth.whoami', undefined, { rawBody: body(MAX_BODY) });
    expect(Buffer.byteLength(body(MAX_BODY))).toBe(MAX_BODY);
    expect(atLimit.status).toBe(200);
    const over = await api.call('auth.whoami', undefined, { rawBody: body(MAX_BODY + 1) });
    expect(over.status).toBe(400);
    expect(over.body).toEqual({ _tag: 'BadRequest', message: expect.stringContaining('ASSAY_MAX_BODY_BYTES') });
  });

  it('treats an empty body as {} for operations that take no input', async () => {
    const answer = await api.call('auth.whoami', undefined, { rawBody: '' });
    expect(answer.status).toBe(200);
  });

  it('reports a missing field as Missing at its path', async () => {
    const answer = await api.call('auth.keys.create', { permissions: ['evals:read'] });
    expect(answer.status).toBe(400);
    expect(answer.body._tag).toBe('HttpApiDecodeError');
    expect(typeof answer.body.message).toBe('string');
    expect(answer.body.issues).toEqual([{ _tag: 'Missing', path: ['name'], message: 'is missing' }]);
  });

  it('reports a wrong type as Type and an unknown property as Unexpected, at their paths', async () => {
    const answer = await api.call('auth.keys.create', { name: 42, permissions: ['evals:read'], extra: true });
    expect(answer.status).toBe(400);
    expect(answer.body.issues).toEqual(
      expect.arrayContaining([
        { _tag: 'Type', path: ['name'], message: expect.any(String) },
        { _tag: 'Unexpected', path: ['extra'], message: expect.any(String) },
      ]),
    );
    expect(answer.body.issues).toHaveLength(2);
  });

  it('reports element paths with numeric indexes', async () => {
    const answer = await api.call('auth.keys.create', { name: 'k', permissions: ['evals:read', 'nope'] });
    expect(answer.status).toBe(400);
    expect(answer.body.issues).toEqual([{ _tag: 'Type', path: ['permissions', 1], message: expect.stringContaining('evals:read') }]);
  });

  it('checks the name bound on both sides: 100 characters pass, 101 and 0 are a Refinement', async () => {
    const ok = await api.call('auth.keys.create', { name: 'n'.repeat(100), permissions: ['evals:read'] });
    expect(ok.status).toBe(200);
    for (const name of ['n'.repeat(101), '']) {
      const refused = await api.call('auth.keys.create', { name, permissions: ['evals:read'] });
      expect(refused.status).toBe(400);
      expect(refused.body.issues).toEqual([{ _tag: 'Refinement', path: ['name'], message: expect.any(String) }]);
    }
  });

  it('refuses a body that is not an object with a Type issue at the root', async () => {
    const answer = await api.call('auth.keys.create', [1, 2]);
    expect(answer.status).toBe(400);
    expect(answer.body.issues).toEqual([{ _tag: 'Type', path: [], message: expect.any(String) }]);
  });

  it('writes one structured log line per request with correlation id, operation, status and duration', async () => {
    const answer = await api.call('auth.whoami', {}, { headers: { 'x-correlation-id': 'corr-test-1' } });
    expect(answer.headers.get('x-correlation-id')).toBe('corr-test-1');
    const line = server.logs.entries().find((entry) => entry.correlationId === 'corr-test-1' && entry.msg === 'request');
    expect(line).toMatchObject({ operation: 'auth.whoami', status: 200, method: 'POST', organization: 'acme' });
    expect(typeof line!.durationMs).toBe('number');
  });

  it('serves /health and /ready without a credential', async () => {
    const health = await api.request('/health', undefined, { method: 'GET', key: null });
    expect(health.status).toBe(200);
    expect(health.body).toEqual({ status: 'ok' });
    const ready = await api.request('/ready', undefined, { method: 'GET', key: null });
    expect(ready.status).toBe(200);
    expect(ready.body.status).toBe('ready');
    expect(ready.body.position).toBe(ready.body.head);
  });
});
