import * as net from 'node:net';
import { MIN_DRAIN_BYTES } from '#infrastructure/http/drain';
import { rawExchange, RawAnswer } from '../support/raw-http';
import { INIT_KEY, InProcessServer, startInProcess, waitUntil } from '../support/servers';

const MAX_BODY = 4096;
/** Far past the limit, and past what the kernel's socket buffers hold, so a reset would show. */
const LARGE = 8 * 1024 * 1024;

function expectSpecError(answer: RawAnswer, status: number, tag: string, message: RegExp): void {
  expect({ error: answer.error, sentAll: answer.sentAll, status: answer.status }).toEqual({ error: null, sentAll: true, status });
  expect(answer.body).toEqual({ _tag: tag, message: expect.stringMatching(message) });
}

describe('early answers and protocol-level refusals over raw sockets', () => {
  let server: InProcessServer;

  beforeAll(async () => {
    server = await startInProcess({ ASSAY_INIT_ORG: 'acme', ASSAY_INIT_API_KEY: INIT_KEY, ASSAY_MAX_BODY_BYTES: String(MAX_BODY) });
  });

  afterAll(() => server.close());

  const post = (headers: string) => `POST /v1/auth.whoami HTTP/1.1\r\nhost: assay\r\n${headers}\r\n`;

  it('lets a client send a body over the limit (by its content-length) to the end, then read the 400', async () => {
    const answer = await rawExchange(
      server.url,
      post(`content-type: application/json\r\nauthorization: Bearer ${INIT_KEY}\r\ncontent-length: ${LARGE}\r\n`),
      'x'.repeat(LARGE),
    );
    expectSpecError(answer, 400, 'BadRequest', /ASSAY_MAX_BODY_BYTES/);
  });

  it(`stops reading a refused body past ${MIN_DRAIN_BYTES} bytes (the bound with a small limit) and closes the connection`, async () => {
    const size = MIN_DRAIN_BYTES + 8 * 1024 * 1024;
    const answer = await rawExchange(server.url, post(`content-type: application/json\r\ncontent-length: ${size}\r\n`), Buffer.alloc(size, 'x'));
    // The server hung up before the client could send it all: it does not read without end.
    expect(answer.sentAll && answer.error === null).toBe(false);
  });

  it('does the same for a chunked body that passes the limit while arriving', async () => {
    const chunked = `${LARGE.toString(16)}\r\n${'x'.repeat(LARGE)}\r\n0\r\n\r\n`;
    const answer = await rawExchange(server.url, post('content-type: application/json\r\ntransfer-encoding: chunked\r\n'), chunked);
    expectSpecError(answer, 400, 'BadRequest', /ASSAY_MAX_BODY_BYTES/);
  });

  it('does the same for a large body of the wrong content type, and for one without a credential', async () => {
    const text = await rawExchange(server.url, post(`content-type: text/plain\r\ncontent-length: ${MAX_BODY - 1}\r\n`), 'x'.repeat(MAX_BODY - 1));
    expectSpecError(text, 400, 'BadRequest', /Content-Type: application\/json/);
    const json = JSON.stringify({ pad: 'x'.repeat(MAX_BODY - 20) });
    const anonymous = await rawExchange(server.url, post(`content-type: application/json\r\ncontent-length: ${json.length}\r\n`), json);
    expectSpecError(anonymous, 401, 'Unauthorized', /./);
  });

  it('answers malformed chunked framing with a 400 in the spec shape', async () => {
    const answer = await rawExchange(server.url, post('content-type: application/json\r\ntransfer-encoding: chunked\r\n') + 'zz\r\n{}\r\n0\r\n\r\n');
    expectSpecError(answer, 400, 'BadRequest', /not well-formed HTTP/);
  });

  it('answers an invalid header line with a 400 in the spec shape', async () => {
    const answer = await rawExchange(server.url, 'GET /health HTTP/1.1\r\nhost: assay\r\nthis is not a header\r\n\r\n');
    expectSpecError(answer, 400, 'BadRequest', /not well-formed HTTP/);
  });

  it('answers oversized headers with a 400 in the spec shape', async () => {
    const answer = await rawExchange(server.url, `GET /health HTTP/1.1\r\nhost: assay\r\nx-padding: ${'a'.repeat(20_000)}\r\n\r\n`);
    expectSpecError(answer, 400, 'BadRequest', /headers are larger/);
  });

  it('answers an HTTP/1.1 request without Host with a 400 in the spec shape; HTTP/1.0 needs none', async () => {
    expectSpecError(await rawExchange(server.url, 'GET /health HTTP/1.1\r\n\r\n'), 400, 'BadRequest', /Host header/);
    const old = await rawExchange(server.url, 'GET /health HTTP/1.0\r\n\r\n');
    expect({ status: old.status, body: old.body }).toEqual({ status: 200, body: { status: 'ok' } });
  });

  it('answers a malformed URL with a 400 in the spec shape', async () => {
    const answer = await rawExchange(server.url, 'GET /v1/%zz HTTP/1.1\r\nhost: assay\r\n\r\n');
    expect(answer.status).toBe(400);
    expect(answer.body).toEqual({ _tag: 'BadRequest', message: expect.any(String) });
  });

  it('logs a client that hangs up halfway through its body as an aborted request, at info, without a stack', async () => {
    const { port } = new URL(server.url);
    const correlationId = 'aborted-upload-1';
    await new Promise<void>((resolve) => {
      const socket = net.connect(Number(port), '127.0.0.1', () => {
        socket.write(post(`content-type: application/json\r\nx-correlation-id: ${correlationId}\r\ncontent-length: ${MAX_BODY - 1}\r\n`));
        socket.write('{"pad":"' + 'x'.repeat(100));
        // Once the server has begun reading the body, hang up.
        setTimeout(() => socket.destroy(), 100);
      });
      socket.on('close', () => resolve());
    });
    await waitUntil(
      async () => server.logs.entries().some((entry) => entry.correlationId === correlationId && entry.msg === 'request aborted by the client'),
      5000,
    );
    const lines = server.logs.entries().filter((entry) => entry.correlationId === correlationId);
    expect(lines.filter((entry) => entry.level === 'error' || 'stack' in entry)).toEqual([]);
    expect(lines.find((entry) => entry.msg === 'request aborted by the client')).toMatchObject({ level: 'info', operation: 'auth.whoami' });
  });

  it('logged none of these as an unexpected error', () => {
    expect(server.logs.entries().filter((entry) => entry.level === 'error')).toEqual([]);
  });
});
