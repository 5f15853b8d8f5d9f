import { ExecutionConfigError, parseExecutionConfig } from '../execution-config';
import { MAX_PROVIDER_TIMEOUT_MS } from './provider-config';

const SOURCE = 'assay.yaml';

function refusal(value: unknown): string {
  try {
    parseExecutionConfig(value, SOURCE);
  } catch (error) {
    if (error instanceof ExecutionConfigError) return error.message;
    throw error;
  }
  throw new Error('expected an ExecutionConfigError');
}

const openai = { protocol: 'openai', apiKeyEnv: 'OPENAI_API_KEY' };

describe('providers, users, judges and prices in ASSAY_CONFIG', () => {
  it('has no providers, no judges, no prices and the default user model without the keys', () => {
    const config = parseExecutionConfig({}, SOURCE);
    expect(config.providers).toEqual({});
    expect(config.users).toEqual({ byHarness: {}, defaultProvider: null, defaultModel: 'gpt-5.4-mini' });
    expect(config.judges).toBeNull();
    expect(config.prices).toEqual({});
  });

  it('reads every key of a full configuration', () => {
    const config = parseExecutionConfig(
      {
        providers: {
          openai: { ...openai, models: ['gpt-5.4-mini', 'gpt-5.4', 'gpt-5.4-mini'] },
          claude: { protocol: 'anthropic', baseURL: 'https://anthropic.example/v1/', timeoutMs: 30000 },
          'local.llm': { protocol: 'openai-compatible', baseURL: 'http://127.0.0.1:11434/v1' },
        },
        users: { default: 'openai', defaultModel: 'gpt-5.4', harness_kind_2: 'claude' },
        judges: { provider: 'claude', model: 'claude-sonnet-4-5' },
        prices: { 'gpt-5.4-mini': { inputPerMTok: 0.25, outputPerMTok: 2 }, free: { inputPerMTok: 0, outputPerMTok: 0 } },
      },
      SOURCE,
    );
    expect(config.providers).toEqual({
      openai: { name: 'openai', protocol: 'openai', baseURL: null, apiKeyEnv: 'OPENAI_API_KEY', models: ['gpt-5.4-mini', 'gpt-5.4'], timeoutMs: null },
      claude: { name: 'claude', protocol: 'anthropic', baseURL: 'https://anthropic.example/v1', apiKeyEnv: null, models: [], timeoutMs: 30000 },
      'local.llm': { name: 'local.llm', protocol: 'openai-compatible', baseURL: 'http://127.0.0.1:11434/v1', apiKeyEnv: null, models: [], timeoutMs: null },
    });
    expect(config.users).toEqual({ byHarness: { harness_kind_2: 'claude' }, defaultProvider: 'openai', defaultModel: 'gpt-5.4' });
    expect(config.judges).toEqual({ provider: 'claude', model: 'claude-sonnet-4-5' });
    expect(config.prices).toEqual({ 'gpt-5.4-mini': { inputPerMTok: 0.25, outputPerMTok: 2 }, free: { inputPerMTok: 0, outputPerMTok: 0 } });
  });

  it('accepts the timeout bounds and refuses just outside them', () => {
    const at = (timeoutMs: unknown) => ({ providers: { fake: { protocol: 'openai', timeoutMs } } });
    expect(parseExecutionConfig(at(1), SOURCE).providers.fake.timeoutMs).toBe(1);
    expect(parseExecutionConfig(at(MAX_PROVIDER_TIMEOUT_MS), SOURCE).providers.fake.timeoutMs).toBe(MAX_PROVIDER_TIMEOUT_MS);
    const problem = `must be a whole number of milliseconds from 1 to ${MAX_PROVIDER_TIMEOUT_MS}`;
    for (const wrong of [0, MAX_PROVIDER_TIMEOUT_MS + 1, 1.5, '2000']) {
      expect(refusal(at(wrong))).toBe(`${SOURCE}: providers.fake.timeoutMs: ${problem}`);
    }
  });

  it.each([
    [{ providers: [] }, 'providers: must be a mapping of provider names to definitions'],
    [{ providers: { 'bad name': openai } }, 'providers.bad name: is not a valid provider name'],
    [{ providers: { fake: 'openai' } }, 'providers.fake: must be a mapping of keys to values'],
    [
      { providers: { fake: { ...openai, apiKey: 'sk-x' } } },
      'providers.fake.apiKey: unknown key; expected one of protocol, baseURL, apiKeyEnv, models, timeoutMs',
    ],
    [{ providers: { fake: {} } }, 'providers.fake.protocol: is required (one of openai, anthropic, openai-compatible, openai-responses, gemini)'],
    [
      { providers: { fake: { protocol: 'grpc' } } },
      'providers.fake.protocol: must be one of openai, anthropic, openai-compatible, openai-responses, gemini (got "grpc")',
    ],
    [
      { providers: { g: { protocol: 'gemini', apiKeyEnv: 'G' } }, judges: { provider: 'g', model: 'm' } },
      'judges.provider: names the provider "g", whose protocol gemini only agents use (through the model gateway); use one of openai, anthropic, openai-compatible',
    ],
    [{ providers: { fake: { protocol: 'openai-compatible' } } }, 'providers.fake.baseURL: is required for the openai-compatible protocol'],
    [{ providers: { fake: { protocol: 'openai', baseURL: 'ftp://models.example' } } }, 'providers.fake.baseURL: must be an http(s) URL'],
    [{ providers: { fake: { protocol: 'openai', baseURL: 'not a url' } } }, 'providers.fake.baseURL: must be an http(s) URL'],
    [{ providers: { fake: { protocol: 'openai', baseURL: 'https://me:sk-secret@models.example/v1' } } }, 'providers.fake.baseURL: must not hold credentials'],
    [
      { providers: { fake: { protocol: 'openai', apiKeyEnv: 'OPENAI-KEY' } } },
      'providers.fake.apiKeyEnv: "OPENAI-KEY" is not a valid environment variable name',
    ],
    [
      { providers: { fake: { protocol: 'openai', apiKeyEnv: 'LD_PRELOAD' } } },
      'providers.fake.apiKeyEnv: "LD_PRELOAD" is a reserved environment variable name',
    ],
    [{ providers: { fake: { protocol: 'openai', apiKeyEnv: '' } } }, 'providers.fake.apiKeyEnv: must be a non-empty string'],
    [{ providers: { fake: { protocol: 'openai', models: 'gpt-5.4' } } }, 'providers.fake.models: must be a list of model names'],
    [{ providers: { fake: { protocol: 'openai', models: ['gpt-5.4', ''] } } }, 'providers.fake.models[1]: must be a non-empty string'],
  ])('refuses a wrong provider: %j', (config, message) => {
    expect(refusal(config)).toContain(`${SOURCE}: ${message}`);
  });

  it.each([
    [{ users: { default: 'fake' } }, 'users.default: names the provider "fake", which is not in providers (none configured)'],
    [
      { providers: { openai }, users: { harness_kind_3: 'claude' } },
      'users.harness_kind_3: names the provider "claude", which is not in providers (configured: openai)',
    ],
    [{ providers: { openai }, users: { harness_kind_9: 'openai' } }, 'users.harness_kind_9: unknown key'],
    [{ providers: { openai }, users: { command: 'openai' } }, 'users.command: unknown key'],
    [{ providers: { openai }, users: { defaultModel: '' } }, 'users.defaultModel: must be a non-empty string'],
    [{ providers: { openai }, users: 'openai' }, 'users: must be a mapping of keys to values'],
    [{ providers: { openai }, judges: { provider: 'claude', model: 'm' } }, 'judges.provider: names the provider "claude", which is not in providers'],
    [{ providers: { openai }, judges: { provider: 'openai' } }, 'judges.model: is required'],
    [{ providers: { openai }, judges: { model: 'm' } }, 'judges.provider: is required'],
    [{ providers: { openai }, judges: { provider: 'openai', model: 'm', temperature: 0 } }, 'judges.temperature: unknown key; expected one of provider, model'],
  ])('refuses wrong users or judges: %j', (config, message) => {
    expect(refusal(config)).toContain(`${SOURCE}: ${message}`);
  });

  it.each([
    [{ prices: [] }, 'prices: must be a mapping of model names'],
    [{ prices: { m: { inputPerMTok: -0.01, outputPerMTok: 1 } } }, 'prices.m.inputPerMTok: must be a non-negative number'],
    [{ prices: { m: { inputPerMTok: 1, outputPerMTok: '2' } } }, 'prices.m.outputPerMTok: must be a non-negative number'],
    [{ prices: { m: { inputPerMTok: 1 } } }, 'prices.m.outputPerMTok: is required'],
    [
      { prices: { m: { inputPerMTok: 1, outputPerMTok: 2, cacheReadPerMTok: 0.1 } } },
      'prices.m.cacheReadPerMTok: unknown key; expected one of inputPerMTok, outputPerMTok',
    ],
  ])('refuses a wrong price: %j', (config, message) => {
    expect(refusal(config)).toContain(`${SOURCE}: ${message}`);
  });

  it("accepts a harness naming a configured provider, with the gateway's values in its environment", () => {
    const config = parseExecutionConfig(
      {
        providers: { o: openai },
        harnesses: {
          harness_kind_1: { version: '1', run: 'a', provider: 'o', env: { OPENAI_BASE_URL: '{{gateway.url}}/v1', OPENAI_API_KEY: '{{ gateway.token }}' } },
        },
      },
      SOURCE,
    );
    expect(config.harnesses.harness_kind_1).toMatchObject({
      provider: 'o',
      env: { OPENAI_BASE_URL: '{{gateway.url}}/v1', OPENAI_API_KEY: '{{ gateway.token }}' },
    });
  });

  it('refuses an unknown top-level key by name', () => {
    expect(refusal({ provider: {} })).toContain(`${SOURCE}: provider: unknown key; expected one of`);
  });
});
