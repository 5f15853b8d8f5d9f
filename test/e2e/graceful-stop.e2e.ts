import * as net from 'node:net';
import { startBody } from '../support/evals';
import { INIT_KEY, startInProcess } from '../support/servers';

/** Opens a TCP connection to the server and writes `request` (maybe nothing); answers when it closes, with what it read. */
function connection(url: string, request: string): { opened: Promise<void>; closed: Promise<string> } {
  const { hostname, port } = new URL(url);
  const socket = net.connect(Number(port), hostname);
  let received = '';
  socket.on('data', (chunk: Buffer) => (received += chunk.toString()));
  socket.on('error', () => undefined);
  const opened = new Promise<void>((resolve) => socket.once('connect', () => resolve()));
  if (request !== '') socket.write(request);
  return { opened, closed: new Promise((resolve) => socket.once('close', () => resolve(received))) };
}

/** Resolves to 'stopped' when `closing` settles within `ms`, else to 'held'. */
function within(closing: Promise<void>, ms: number): Promise<string> {
  let timer: NodeJS.Timeout | undefined;
  const held = new Promise<string>((resolve) => (timer = setTimeout(() => resolve('held'), ms)));
  return Promise.race([closing.then(() => 'stopped'), held]).finally(() => clearTimeout(timer));
}

describe('a graceful stop and the connections open at that moment', () => {
  it('closes connections with no request in flight at once, finishes the one in flight, then closes it', async () => {
    const server = await startInProcess({ ASSAY_INIT_ORG: 'acme', ASSAY_INIT_API_KEY: INIT_KEY });
    let closing: Promise<void> | null = null;
    try {
      // Opened ahead of use, as clients and load balancers do; and one still sending its headers.
      const silent = connection(server.url, '');
      const halfway = connection(server.url, 'GET /health HTTP/1.1\r\nhost: x\r\n');
      // Served once and kept alive.
      const served = connection(server.url, 'GET /health HTTP/1.1\r\nhost: x\r\n\r\n');
      // In flight: a watch stream of a batch that runs for 30 s.
      const body = startBody({ variants: [{ harness: 'command', model: 'm', profile: { run: 'sleep 30' } }] });
      const started = await server.client.call('evals.batches.start', body);
      expect(started.status).toBe(200);
      const watching = connection(
        server.url,
        `GET /v1/evals.batches.watch?id=${started.body.id} HTTP/1.1\r\nhost: x\r\nauthorization: Bearer ${INIT_KEY}\r\n\r\n`,
      );
      await Promise.all([silent.opened, halfway.opened, served.opened, watching.opened]);
      await new Promise((resolve) => setTimeout(resolve, 300));
      closing = server.close();
      // Before: the stop waited for Node's header timeout (60–90 s) for the first two.
      expect(await within(closing, 20_000)).toBe('stopped');
      expect(await silent.closed).toBe('');
      expect(await served.closed).toMatch(/^HTTP\/1\.1 200/);
      // The stream was ended, whole (its last chunk sent), before its connection closed.
      const stream = await watching.closed;
      expect(stream).toMatch(/^HTTP\/1\.1 200/);
      expect(stream).toContain('event: batch.started');
      expect(stream.endsWith('\r\n0\r\n\r\n')).toBe(true);
      await halfway.closed;
    } finally {
      await (closing ?? server.close());
    }
  }, 120_000);
});
