/**
 * The model gateway alone in a process of its own, for the gateway benchmark: it starts a
 * gateway, grants one token for a provider at the URL given as its argument, prints
 * `{"url", "token"}` as one JSON line, then answers each line read on stdin with its own CPU time
 * so far (user and system, ms), so that the benchmark can charge the gateway alone for its calls.
 */
import * as readline from 'node:readline';
import { ModelGateway } from '#trial-runner';

async function main(): Promise<void> {
  const baseURL = process.argv[2];
  const gateway = await ModelGateway.start();
  const provider = { name: 'fake', protocol: 'openai-compatible' as const, baseURL, apiKeyEnv: null, models: [], timeoutMs: null };
  const grant = gateway.grant({
    trialId: 'trl_bench',
    provider,
    apiKey: 'bench-key',
    timeoutMs: 120_000,
    budget: null,
    keyConnector: null,
    recordBodies: false,
    replay: null,
    price: () => null,
  });
  process.stdout.write(`${JSON.stringify({ url: grant.url, token: grant.token })}\n`);
  const lines = readline.createInterface({ input: process.stdin });
  for await (const _line of lines) {
    const usage = process.cpuUsage();
    process.stdout.write(`${JSON.stringify({ cpuMs: (usage.user + usage.system) / 1000, calls: grant.calls.length })}\n`);
  }
  await gateway.close();
}

void main();
