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
  durationMs: number;
}

export interface LoadResult {
  latencies: number[];
  elapsedMs: number;
  requests: number;
}

/** The load, as plain JavaScript evaluated in a worker thread so it does not share the server's event loop. */
const CLIENT_SOURCE = `
const { parentPort, workerData } = require('node:worker_threads');
const http = require('node:http');
const { url, path, bodies, headers, clients, durationMs } = workerData;
const target = new URL(url);
const agent = new http.Agent({ keepAlive: true, maxSockets: clients });
const payloads = bodies.map((body) => JSON.stringify(body));
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
async function main() {
  const latencies = [];
  let next = 0;
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
  const elapsedMs = performance.now() - started;
  agent.destroy();
  parentPort.postMessage({ latencies, elapsedMs, requests: latencies.length });
}
main().catch((error) => parentPort.postMessage({ error: String((error && error.stack) || error) }));
`;

export function runLoad(spec: LoadSpec): Promise<LoadResult> {
  return new Promise((resolve, reject) => {
    const worker = new Worker(CLIENT_SOURCE, { eval: true, workerData: spec });
    worker.once('message', (message: LoadResult & { error?: string }) => {
      void worker.terminate();
      if (message.error) reject(new Error(message.error));
      else resolve(message);
    });
    worker.once('error', reject);
  });
}

/** Adds up slices of one side's load. */
export function merge(results: LoadResult[]): LoadResult {
  return {
    latencies: results.flatMap((result) => result.latencies),
    elapsedMs: results.reduce((sum, result) => sum + result.elapsedMs, 0),
    requests: results.reduce((sum, result) => sum + result.requests, 0),
  };
}

