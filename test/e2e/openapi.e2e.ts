import { execFileSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';
import Ajv2020 from 'ajv/dist/2020';
import { startBody, waitForBatch } from '../support/evals';
import { INIT_KEY, ROOT, startInProcess, InProcessServer, tempDir } from '../support/servers';

/** The OpenAPI validator's own command (the package is ESM; Jest runs CommonJS): a real child process. */
const VALIDATOR = path.join(ROOT, 'node_modules', '@seriousme', 'openapi-schema-validator', 'bin', 'validate-api-cli.js');
/** What the test calls the API (the rest served are pages for people: the reference page, the viewer). */
const isApi = (route: string) => route.startsWith('/v1/') || ['/health', '/ready', '/metrics'].includes(route);

/** `METHOD path` of every route Fastify serves, read from its own route tree (printRoutes), HEAD left out. */
function fastifyRoutes(server: InProcessServer): string[] {
  const tree = server.app.getHttpAdapter().getInstance().printRoutes({ commonPrefix: false });
  const parents: string[] = [];
  const routes: string[] = [];
  for (const line of tree.split('\n')) {
    const match = /^([│ ]*)[├└]── (\S+)(?: \(([^)]+)\))?$/.exec(line.replace(/\s+$/, ''));
    if (!match) continue;
    const depth = match[1].length / 4;
    parents.length = depth;
    const full = parents.join('') + match[2];
    parents.push(match[2]);
    for (const method of ((match[3] as string | undefined) ?? '').split(',').map((m) => m.trim())) {
      if (method !== '' && method !== 'HEAD') routes.push(`${method} ${full}`);
    }
  }
  return routes.sort();
}

type Document = { paths: Record<string, Record<string, any>>; components: { schemas: Record<string, any>; securitySchemes: Record<string, any> } };

describe('GET /v1/openapi.json', () => {
  let server: InProcessServer;
  let document: Document;

  beforeAll(async () => {
    server = await startInProcess({ ASSAY_INIT_ORG: 'acme', ASSAY_INIT_API_KEY: INIT_KEY, ASSAY_METRICS: '1' });
    const answer = await server.client.request('/v1/openapi.json', undefined, { method: 'GET', key: null });
    expect(answer.status).toBe(200);
    document = answer.body as Document;
  });
  afterAll(() => server.close());

  it('is a valid OpenAPI 3.1 document, served without a key', () => {
    const file = path.join(tempDir(), 'openapi.json');
    fs.writeFileSync(file, JSON.stringify(document));
    const report = execFileSync(process.execPath, [VALIDATOR, file], { encoding: 'utf8' });
    expect(JSON.parse(report)).toMatchObject({ valid: true });
    expect((document as unknown as { openapi: string }).openapi).toBe('3.1.0');
  });

  it('lists every API route the server serves, and nothing else', () => {
    const served = fastifyRoutes(server);
    const documented = Object.entries(document.paths)
      .flatMap(([route, operations]) => Object.keys(operations).map((method) => `${method.toUpperCase()} ${route}`))
      .sort();
    expect(documented).toEqual(served.filter((route) => isApi(route.split(' ')[1])));
    expect(documented.length).toBeGreaterThanOrEqual(35);
    // What is left out is pages for people, all GETs.
    expect(served.filter((route) => !isApi(route.split(' ')[1])).every((route) => route.startsWith('GET /'))).toBe(true);
    expect(served).toContain('GET /docs');
  });

  it('generates request schemas from the DTOs, with their bounds and strictness', () => {
    const schemas = document.components.schemas;
    const start = document.paths['/v1/evals.batches.start'].post;
    expect(start.requestBody.content['application/json'].schema).toEqual({ $ref: '#/components/schemas/StartBatchDto' });
    expect(schemas.StartBatchDto).toMatchObject({
      additionalProperties: false,
      required: expect.arrayContaining(['suite', 'cases', 'variants', 'trials']),
      properties: { trials: { type: 'integer', minimum: 1, maximum: 10 }, cases: { maxItems: 100, minItems: 1 } },
    });
    expect(schemas.CaseDto.properties.tags).toMatchObject({ maxItems: 12, items: { type: 'string', minLength: 1, maxLength: 40 } });
    expect(schemas.CaseDto.properties.user.anyOf[0].oneOf).toEqual([
      { $ref: '#/components/schemas/SimulatedUserDto' },
      { $ref: '#/components/schemas/ScriptedUserDto' },
    ]);
    expect(schemas.GetByIdDto).toMatchObject({ properties: { id: { type: 'string', minLength: 1, maxLength: 200 } }, required: ['id'] });
    // Every $ref points at a schema the document holds.
    const refs = JSON.stringify(document).match(/"#\/components\/schemas\/[^"]+"/g) ?? [];
    for (const ref of new Set(refs)) expect([ref, schemas[ref.slice(22, -1)] !== undefined]).toEqual([ref, true]);
  });

  it('states the bounds the server enforces, on both sides', async () => {
    const { maxLength } = document.components.schemas.GetByIdDto.properties.id as { maxLength: number };
    const atBound = await server.client.call('evals.batches.get', { id: 'b'.repeat(maxLength) });
    const overBound = await server.client.call('evals.batches.get', { id: 'b'.repeat(maxLength + 1) });
    expect([atBound.status, overBound.status, overBound.body._tag]).toEqual([404, 400, 'HttpApiDecodeError']);
  });

  it('names the security scheme, the permission of each operation, and the error shapes', () => {
    expect(document.components.securitySchemes.bearer).toMatchObject({ type: 'http', scheme: 'bearer' });
    expect(document.paths['/health'].get.security).toEqual([]);
    expect(document.paths['/v1/openapi.json'].get.security).toEqual([]);
    const get = document.paths['/v1/evals.batches.get'].post;
    expect(get['x-permission']).toBe('evals:read');
    expect(get.security).toBeUndefined();
    expect(Object.keys(get.responses)).toEqual(expect.arrayContaining(['200', '400', '401', '403', '404', '500']));
    const watch = document.paths['/v1/evals.batches.watch'].get;
    expect(watch.parameters).toEqual(
      expect.arrayContaining([
        expect.objectContaining({ in: 'query', name: 'id', required: true }),
        expect.objectContaining({ in: 'header', name: 'Last-Event-ID' }),
      ]),
    );
    expect(Object.keys(watch.responses['200'].content)).toEqual(['text/event-stream']);
  });

  it('describes what the server really answers', async () => {
    const ajv = new Ajv2020({ strict: false, validateFormats: false });
    const components = document.components;
    const check = (route: string, status: number, body: unknown) => {
      const schema = document.paths[route].post.responses[String(status)].content['application/json'].schema;
      const validate = ajv.compile({ ...schema, components });
      expect([route, validate(body), validate.errors ?? null]).toEqual([route, true, null]);
    };
    const api = server.client;
    const started = await api.call('evals.batches.start', startBody({ trials: 2 }));
    check('/v1/evals.batches.start', 200, started.body);
    await waitForBatch(api, started.body.id);
    const batch = await api.call('evals.batches.get', { id: started.body.id });
    check('/v1/evals.batches.get', 200, batch.body);
    check('/v1/evals.runs.get', 200, (await api.call('evals.runs.get', { id: started.body.runs[0].id })).body);
    const reads: Array<[string, unknown]> = [
      ['evals.batches.list', {}],
      ['evals.cases.list', {}],
      ['evals.cases.get', { id: 'say-hello' }],
      ['evals.runs.list', { caseId: 'say-hello' }],
      ['evals.suites.list', {}],
      ['evals.suites.get', { id: 'greetings' }],
      ['evals.models.list', {}],
      ['auth.whoami', {}],
      ['auth.keys.list', {}],
      ['connectors.integrations', {}],
      ['connectors.list', {}],
      ['environment.set', { variables: [{ name: 'REGION', value: 'eu-west-1', secret: false }] }],
      ['environment.list', {}],
      ['prompts.versions.create', { id: 'support/greeting', content: 'Hello', publish: true }],
      ['prompts.get', { id: 'support/greeting' }],
      ['prompts.list', {}],
      ['prompts.versions.list', { id: 'support/greeting' }],
      ['prompts.history', { id: 'support/greeting' }],
    ];
    for (const [operation, body] of reads) {
      const answer = await api.call(operation, body);
      expect([operation, answer.status]).toEqual([operation, 200]);
      check(`/v1/${operation}`, 200, answer.body);
    }
    check('/v1/evals.batches.get', 404, (await api.call('evals.batches.get', { id: 'bat_none' })).body);
    check('/v1/evals.batches.get', 400, (await api.call('evals.batches.get', {})).body);
    check('/v1/evals.batches.get', 401, (await api.call('evals.batches.get', { id: 'x' }, { key: 'wrong-key-0123456789abcdef' })).body);
  });
});

describe('GET /docs', () => {
  let server: InProcessServer;
  beforeAll(async () => {
    server = await startInProcess();
  });
  afterAll(() => server.close());

  it('renders the reference from the document with files this server serves (no CDN)', async () => {
    const page = await server.client.request('/docs', undefined, { method: 'GET' });
    expect(page.status).toBe(200);
    expect(page.headers.get('content-type')).toContain('text/html');
    const sources = [...page.text.matchAll(/(?:src|href)="([^"]+)"/g)].map((match) => match[1]);
    expect(sources.length).toBeGreaterThanOrEqual(3);
    for (const source of sources) {
      expect(source).not.toMatch(/^(https?:)?\/\//);
      const asset = await fetch(new URL(source, `${server.url}/docs`));
      expect([source, asset.status]).toEqual([source, 200]);
    }
    const initializer = await (await fetch(`${server.url}/docs/assets/reference.js`)).text();
    expect(initializer).toContain("'v1/openapi.json'");
    const missing = await server.client.request('/docs/assets/..%2Fpackage.json', undefined, { method: 'GET' });
    expect([missing.status, missing.body._tag]).toEqual([404, 'NotFound']);
  });
});
