/**
 * The HTTP load of the read benchmarks: keep-alive clients posting JSON bodies in turn, run in a
 * worker thread so that the load does not share the server's event loop.
 */
import { Worker } from 'node:worker_threads';

export interface LoadSpec {
  url: string;
  path: string;
  bodies: unknown[];
  headers: Record<string, string>;
  clients: number;
}

export interface LoadResult {
  latencies: number[];
  elapsedMs: number;
  requests: number;
}

/**
 * The load, as plain JavaScript evaluated in a worker thread so it does not share the server's
 * event loop. It keeps its connections and its compiled code between runs: each run of a given
 * length is one message, so short slices measure the server, not a client warming up.
 */
const CLIENT_SOURCE = `
const { parentPort, workerData } = require('node:worker_threads');
const http = require('node:http');
const { url, path, bodies, headers, clients } = workerData;
const target = new URL(url);
const agent = new http.Agent({ keepAlive: true, maxSockets: clients });
const payloads = bodies.map((body) => JSON.stringify(body));
let next = 0;
function post(payload) {
  return new Promise((resolve, reject) => {
    const request = http.request(
      { host: target.hostname, port: target.port, path, method: 'POST', agent,
        headers: { ...headers, 'content-type': 'application/json', 'content-length': Buffer.byteLength(payload) } },
      (response) => {
        response.on('data', () => {});
        response.on('end', () => (response.statusCode === 200 ? resolve() : reject(new Error(path + ' answered ' + response.statusCode))));
      },
    );
    request.on('error', reject);
    request.end(payload);
  });
}
async function run(durationMs) {
  const latencies = [];
  const started = performance.now();
  const deadline = started + durationMs;
  async function client() {
    while (performance.now() < deadline) {
      const payload = payloads[next++ % payloads.length];
      const sent = performance.now();
      await post(payload);
      latencies.push(performance.now() - sent);
    }
  }
  await Promise.all(Array.from({ length: clients }, client));
  return { latencies, elapsedMs: performance.now() - started, requests: latencies.length };
}
parentPort.on('message', ({ durationMs }) => {
  run(durationMs).then(
    (result) => parentPort.postMessage(result),
    (error) => parentPort.postMessage({ error: String((error && error.stack) || error) }),
  );
});
`;

/** One side's clients, in their own thread, loading the server for as long as each run asks. */
export class LoadClient {
  private constructor(private readonly worker: Worker) {}

  static start(spec: LoadSpec): LoadClient {
    return new LoadClient(new Worker(CLIENT_SOURCE, { eval: true, workerData: spec }));
  }

  run(durationMs: number): Promise<LoadResult> {
    return new Promise((resolve, reject) => {
      const fail = (error: Error) => reject(error);
      this.worker.once('error', fail);
      this.worker.once('message', (message: LoadResult & { error?: string }) => {
        this.worker.off('error', fail);
        if (message.error) reject(new Error(message.error));
        else resolve(message);
      });
      this.worker.postMessage({ durationMs });
    });
  }

  async close(): Promise<void> {
    await this.worker.terminate();
  }
}

/** Adds up slices of one side's load. */
export function merge(results: LoadResult[]): LoadResult {
  return {
    latencies: results.flatMap((result) => result.latencies),
    elapsedMs: results.reduce((sum, result) => sum + result.elapsedMs, 0),
    requests: results.reduce((sum, result) => sum + result.requests, 0),
  };
}
