import * as net from 'node:net';
import { createAnthropic } from '@ai-sdk/anthropic';
import { createOpenAI } from '@ai-sdk/openai';
import { streamText } from 'ai';
import { z } from 'zod';
import {
  callModel,
  callModelForObject,
  DEFAULT_PROVIDER_TIMEOUT_MS,
  ModelCall,
  priceOf,
  ProviderCallError,
  providerTimeoutMs,
  resolveProviderKey,
} from './model-client';
import type { ProviderDefinition, ProviderProtocol } from './provider-config';
import { FakeProvider, startFakeProvider } from '../../../test/support/fake-provider';

const KEY = 'sk-test-9f8e7d6c5b4a39281706';

describe('the model client over a real HTTP fake provider', () => {
  let fake: FakeProvider;
  const failures: string[] = [];

  beforeAll(async () => {
    fake = await startFakeProvider();
  });
  afterAll(async () => {
    await fake.close();
    // Every failure message seen in this file, including ones whose provider echoed the key.
    expect(failures.length).toBeGreaterThan(4);
    for (const message of failures) expect(message).not.toContain(KEY);
  });
  beforeEach(() => {
    fake.requests.length = 0;
    fake.setDefault({ text: 'ok', usage: { input: 10, output: 2 } });
  });

  const provider = (protocol: ProviderProtocol, extra: Partial<ProviderDefinition> = {}): ProviderDefinition => ({
    name: 'fake',
    protocol,
    baseURL: protocol === 'anthropic' ? fake.anthropicURL : fake.url,
    apiKeyEnv: null,
    models: [],
    timeoutMs: 5000,
    ...extra,
  });
  const call = (protocol: ProviderProtocol, extra: Partial<ModelCall> = {}): ModelCall => ({
    provider: provider(protocol),
    apiKey: KEY,
    model: protocol === 'anthropic' ? 'claude-test' : 'gpt-test',
    system: 'You are the user.',
    messages: [
      { role: 'user', content: 'Fix the bug.' },
      { role: 'assistant', content: 'Which bug?' },
    ],
    ...extra,
  });
  async function failure(promise: Promise<unknown>): Promise<ProviderCallError> {
    try {
      await promise;
    } catch (error) {
      expect(error).toBeInstanceOf(ProviderCallError);
      const message = (error as Error).message;
      failures.push(message);
      expect(message).not.toMatch(/\n/);
      return error as ProviderCallError;
    }
    throw new Error('expected the call to fail');
  }

  it.each(['openai', 'anthropic', 'openai-compatible'] as const)('answers text with its token usage over %s', async (protocol) => {
    fake.answer({ text: 'The login test fails.', usage: { input: 321, output: 45 } });
    const answer = await callModel(call(protocol));
    expect(answer.text).toBe('The login test fails.');
    expect(answer.usage).toEqual({ inputTokens: 321, outputTokens: 45, cacheReadTokens: 0, cacheWriteTokens: 0, totalTokens: 366 });
    expect(answer.durationMs).toBeGreaterThanOrEqual(0);
    expect(fake.requests).toHaveLength(1);
    const [request] = fake.requests;
    expect(request.protocol).toBe(protocol === 'anthropic' ? 'anthropic' : 'openai');
    expect(request.body.model).toBe(protocol === 'anthropic' ? 'claude-test' : 'gpt-test');
    expect(JSON.stringify(request.body)).toContain('You are the user.');
    expect(JSON.stringify(request.body.messages)).toContain('Which bug?');
  });

  it('sends the key as each protocol expects it', async () => {
    await callModel(call('openai'));
    await callModel(call('anthropic'));
    await callModel(call('openai-compatible'));
    await callModel(call('openai-compatible', { apiKey: null }));
    const [openai, anthropic, compatible, keyless] = fake.requests.map((request) => request.headers);
    expect(openai.authorization).toBe(`Bearer ${KEY}`);
    expect(anthropic['x-api-key']).toBe(KEY);
    expect(anthropic.authorization).toBeUndefined();
    expect(compatible.authorization).toBe(`Bearer ${KEY}`);
    expect(keyless.authorization).toBeUndefined();
  });

  it('uses chat completions for openai and passes the output token bound', async () => {
    await callModel(call('openai', { maxOutputTokens: 77 }));
    const [request] = fake.requests;
    expect(request.path).toBe('/v1/chat/completions');
    expect(request.body.max_tokens ?? request.body.max_completion_tokens).toBe(77);
  });

  it.each(['openai', 'anthropic'] as const)('turns an HTTP 500 over %s into a failure naming the provider, after two retries', async (protocol) => {
    fake.setDefault({ status: 500, error: 'the model is overloaded' });
    const error = await failure(callModel(call(protocol)));
    expect(error.provider).toBe('fake');
    expect(error.kind).toBe('http');
    expect(error.message).toBe(`provider "fake" (${protocol}) answered HTTP 500: the model is overloaded`);
    expect(fake.requests).toHaveLength(3);
  });

  it('does not retry a 400, and cuts the key out of what the provider echoed', async () => {
    fake.setDefault({ status: 401, error: `Incorrect API key provided: ${KEY}.` });
    const error = await failure(callModel(call('openai')));
    expect(error.message).toBe('provider "fake" (openai) answered HTTP 401: Incorrect API key provided: [redacted].');
    expect(fake.requests).toHaveLength(1);
  });

  it('gives up on a provider that never answers at its timeout', async () => {
    fake.setDefault({ hang: true });
    const hung = call('anthropic', { provider: provider('anthropic', { timeoutMs: 300 }) });
    const error = await failure(callModel(hung));
    expect(error.kind).toBe('timeout');
    expect(error.message).toBe('provider "fake" did not answer within 300 ms');
  });

  it('fails on a provider nobody listens for, within its timeout', async () => {
    const port = await closedPort();
    const unreachable = provider('openai', { baseURL: `http://127.0.0.1:${port}/v1`, timeoutMs: 1500 });
    const error = await failure(callModel(call('openai', { provider: unreachable })));
    // Outside Jest's sandbox the SDK retries a refused connection until the deadline; inside it, it cannot tell and gives up at once.
    const reached = `provider "fake" \\(openai\\) could not be reached at http://127\\.0\\.0\\.1:${port}/v1: .*ECONNREFUSED`;
    expect(error.message).toMatch(new RegExp(`^(provider "fake" did not answer within 1500 ms|${reached})`));
  });

  it("ends with the caller's abort", async () => {
    fake.setDefault({ hang: true });
    const controller = new AbortController();
    const pending = callModel(call('openai', { signal: controller.signal }));
    setTimeout(() => controller.abort(), 50);
    const error = await failure(pending);
    expect(error.kind).toBe('cancelled');
  });

  const verdict = z.object({ passed: z.boolean(), reason: z.string() });

  it('answers a structured request over openai with the JSON schema in response_format', async () => {
    fake.answer({ object: { passed: true, reason: 'tests pass' }, usage: { input: 50, output: 9 } });
    const answer = await callModelForObject({ ...call('openai'), schema: verdict, schemaName: 'verdict', schemaDescription: 'The judgement' });
    expect(answer.object).toEqual({ passed: true, reason: 'tests pass' });
    expect(answer.usage.inputTokens).toBe(50);
    const format = fake.requests[0].body.response_format;
    expect(format.type).toBe('json_schema');
    expect(format.json_schema.name).toBe('verdict');
    expect(format.json_schema.schema.properties).toHaveProperty('passed');
  });

  it('answers a structured request over anthropic with a forced tool, or native JSON output for a model that has it', async () => {
    fake.setDefault({ object: { passed: false, reason: 'no tests' }, usage: { input: 40, output: 8 } });
    // The SDK forces a tool for models without native JSON output (Claude 3), and uses it for the rest.
    const byTool = await callModelForObject({ ...call('anthropic', { model: 'claude-3-haiku-20240307' }), schema: verdict, schemaName: 'verdict' });
    expect(byTool.object).toEqual({ passed: false, reason: 'no tests' });
    expect(fake.requests[0].body.tool_choice.type).toMatch(/^(tool|any)$/);
    expect(fake.requests[0].body.tools).toHaveLength(1);
    const native = await callModelForObject({ ...call('anthropic', { model: 'claude-sonnet-4-5' }), schema: verdict, schemaName: 'verdict' });
    expect(native.object).toEqual({ passed: false, reason: 'no tests' });
    expect(fake.requests[1].body.output_config?.format?.type).toBe('json_schema');
  });

  it.each(['openai', 'anthropic'] as const)('refuses an answer over %s that does not fit the schema', async (protocol) => {
    fake.setDefault({ object: { passed: 'yes' } });
    const error = await failure(callModelForObject({ ...call(protocol), schema: verdict, schemaName: 'verdict' }));
    expect(error.kind).toBe('schema');
    expect(error.message).toContain(`provider "fake" (${protocol}) answered model "${call(protocol).model}" with no object that fits the schema "verdict"`);
  });

  it('refuses text that is not JSON where an object was asked', async () => {
    fake.setDefault({ text: `I think it passed ${KEY}` });
    const error = await failure(callModelForObject({ ...call('openai'), schema: verdict, schemaName: 'verdict' }));
    expect(error.kind).toBe('schema');
  });

  it("streams an answer too, should a caller ever stream (the fake speaks both protocols' event streams)", async () => {
    fake.setDefault({ text: 'streamed', usage: { input: 7, output: 3 } });
    for (const model of [
      createOpenAI({ apiKey: KEY, baseURL: fake.url }).chat('gpt-test'),
      createAnthropic({ apiKey: KEY, baseURL: fake.anthropicURL }).messages('claude-test'),
    ]) {
      const result = streamText({ model, prompt: 'hi', maxRetries: 0 });
      expect(await result.text).toBe('streamed');
      expect((await result.usage).outputTokens).toBe(3);
    }
    expect(fake.requests.map((request) => request.body.stream)).toEqual([true, true]);
  });

  it('refuses to call an openai or anthropic provider without a key', async () => {
    const error = await failure(callModel(call('openai', { apiKey: null })));
    expect(error.kind).toBe('no-key');
    expect(fake.requests).toHaveLength(0);
  });
});

describe('provider keys, timeouts and prices', () => {
  const fake: ProviderDefinition = { name: 'fake', protocol: 'openai', baseURL: null, apiKeyEnv: 'FAKE_KEY', models: [], timeoutMs: null };

  it('takes the server variable first, then the connector, then no key for a keyless openai-compatible provider', () => {
    expect(resolveProviderKey(fake, 'from-connector', { FAKE_KEY: ' from-server\n' })).toEqual({ key: 'from-server' });
    expect(resolveProviderKey(fake, 'from-connector', { FAKE_KEY: '' })).toEqual({ key: 'from-connector' });
    expect(resolveProviderKey({ ...fake, protocol: 'openai-compatible', apiKeyEnv: null }, undefined, {})).toEqual({ key: null });
    expect(resolveProviderKey({ ...fake, protocol: 'openai-compatible', apiKeyEnv: null }, 'k', {})).toEqual({ key: 'k' });
  });

  it('says which variable or connector to set when there is no key', () => {
    expect(resolveProviderKey(fake, undefined, {})).toEqual({
      failure:
        'provider "fake" has no API key: set the server variable FAKE_KEY (providers.fake.apiKeyEnv) or add an "openai" connector to the organization (with several, mark one isDefault)',
    });
    expect(resolveProviderKey({ ...fake, protocol: 'anthropic', apiKeyEnv: null }, '  ', {})).toEqual({
      failure:
        'provider "fake" has no API key: add an "anthropic" connector to the organization (with several, mark one isDefault), or name a server variable in providers.fake.apiKeyEnv',
    });
    expect(resolveProviderKey({ ...fake, protocol: 'openai-compatible' }, undefined, {})).toHaveProperty('failure');
  });

  it("takes the provider's timeout, else ASSAY_PROVIDER_TIMEOUT_MS, else the default", () => {
    expect(providerTimeoutMs({ ...fake, timeoutMs: 2000 }, { ASSAY_PROVIDER_TIMEOUT_MS: '9000' })).toBe(2000);
    expect(providerTimeoutMs(fake, { ASSAY_PROVIDER_TIMEOUT_MS: '9000' })).toBe(9000);
    expect(providerTimeoutMs(fake, {})).toBe(DEFAULT_PROVIDER_TIMEOUT_MS);
    expect(() => providerTimeoutMs(fake, { ASSAY_PROVIDER_TIMEOUT_MS: '0' })).toThrow('ASSAY_PROVIDER_TIMEOUT_MS must be a whole number');
    expect(() => providerTimeoutMs(fake, { ASSAY_PROVIDER_TIMEOUT_MS: '5s' })).toThrow(ProviderCallError);
  });

  it('prices input and output tokens per million, and has no price for an unknown model', () => {
    const usage = { inputTokens: 2_000_000, outputTokens: 500_000, cacheReadTokens: 0, cacheWriteTokens: 0, totalTokens: 2_500_000 };
    expect(priceOf({ m: { inputPerMTok: 0.25, outputPerMTok: 2 } }, 'm', usage)).toBeCloseTo(1.5, 10);
    expect(priceOf({ m: { inputPerMTok: 0, outputPerMTok: 0 } }, 'm', usage)).toBe(0);
    expect(priceOf({ m: { inputPerMTok: 1, outputPerMTok: 1 } }, 'other', usage)).toBeNull();
    expect(priceOf({}, 'constructor', usage)).toBeNull();
  });
});

/** A port nothing listens on: bound, then released. */
async function closedPort(): Promise<number> {
  const server = net.createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as net.AddressInfo;
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}
