import { ExecutionConfigError, parseExecutionConfig } from '../../execution-config';
import { AGENT_DRIVERS } from './index';
import { harnessAgents } from '../harness-driver';

const PROVIDERS = {
  claude: { protocol: 'anthropic', apiKeyEnv: 'ANTHROPIC_API_KEY' },
  openai: { protocol: 'openai', apiKeyEnv: 'OPENAI_API_KEY' },
  gem: { protocol: 'gemini', apiKeyEnv: 'GEMINI_API_KEY' },
};

function parse(harness: Record<string, unknown>) {
  return parseExecutionConfig({ providers: PROVIDERS, harnesses: { harness_kind_1: harness } }, 'assay.yaml');
}

/** The key and the words of the error a harness gets, or null when it is accepted. */
function refusal(harness: Record<string, unknown>): { key: string; message: string } | null {
  try {
    parse(harness);
    return null;
  } catch (error) {
    if (!(error instanceof ExecutionConfigError)) throw error;
    return { key: error.key, message: error.message };
  }
}

describe('a harness with a built-in agent', () => {
  it('takes the driver, its pinned version, and the operator env and flags', () => {
    const config = parse({ agent: 'claude-code', provider: 'claude', env: { MAX_THINKING_TOKENS: '0' }, args: ['--max-turns', '30'] });
    expect(config.harnesses.harness_kind_1).toMatchObject({
      agent: { name: 'claude-code', args: ['--max-turns', '30'] },
      version: AGENT_DRIVERS['claude-code'].pinnedVersion,
      provider: 'claude',
      env: { MAX_THINKING_TOKENS: '0' },
      install: null,
      usage: null,
    });
    expect(harnessAgents(config)).toEqual([
      {
        harness: 'harness_kind_1',
        agent: 'claude-code',
        version: AGENT_DRIVERS['claude-code'].pinnedVersion,
        pinnedVersion: AGENT_DRIVERS['claude-code'].pinnedVersion,
        packageName: '@anthropic-ai/claude-code',
        provider: 'claude',
      },
    ]);
  });

  it.each([
    ['2.1.300', true],
    ['1.0.0-beta.1', true],
    ['2.1', false],
    ['latest', false],
    ['^2.1.332', false],
    ['2.1.332 || 3', false],
  ])('version %s: %s (an exact version only)', (version, accepted) => {
    const problem = refusal({ agent: 'claude-code', provider: 'claude', version });
    if (accepted) expect(problem).toBeNull();
    else expect(problem?.key).toBe('harnesses.harness_kind_1.version');
  });

  it.each([
    [{ agent: 'aider', provider: 'claude' }, 'harnesses.harness_kind_1.agent', 'must be one of claude-code'],
    [{ agent: 'claude-code' }, 'harnesses.harness_kind_1.provider', 'is required with agent: claude-code'],
    [{ agent: 'claude-code', provider: 'nobody' }, 'harnesses.harness_kind_1.provider', 'not in providers'],
    [{ agent: 'claude-code', provider: 'openai' }, 'harnesses.harness_kind_1.provider', 'claude-code speaks anthropic'],
    [{ agent: 'gemini-cli', provider: 'claude' }, 'harnesses.harness_kind_1.provider', 'gemini-cli speaks gemini'],
    [{ agent: 'codex', provider: 'gem' }, 'harnesses.harness_kind_1.provider', 'codex speaks openai-responses'],
    [{ agent: 'codex', provider: 'openai', run: 'codex exec {{prompt}}' }, 'harnesses.harness_kind_1.run', 'is not used with agent: codex'],
    [{ agent: 'codex', provider: 'openai', usage: { format: 'json-lines', inputTokens: 'a' } }, 'harnesses.harness_kind_1.usage', 'is not used'],
    [{ version: '1', run: 'agent', args: ['-x'] }, 'harnesses.harness_kind_1.args', 'is for a built-in agent'],
    [{ agent: 'pi', provider: 'claude', args: '--verbose' }, 'harnesses.harness_kind_1.args', 'a list of at most 50 flags'],
    [{ agent: 'pi', provider: 'claude', args: [''] }, 'harnesses.harness_kind_1.args[0]', 'non-empty string'],
    [{ agent: 'pi', provider: 'claude', env: { PATH: '/x' } }, 'harnesses.harness_kind_1.env.PATH', ''],
  ])('refuses %j at %s', (harness, key, words) => {
    const problem = refusal(harness);
    expect(problem?.key).toBe(key);
    expect(problem?.message).toContain(words);
  });

  it('takes pi with a provider of any of the four protocols', () => {
    for (const provider of ['claude', 'openai', 'gem']) expect(refusal({ agent: 'pi', provider })).toBeNull();
  });

  it.each([
    [50, 1000, true],
    [51, 1, false],
    [1, 1001, false],
  ])('args: %i flags of %i characters: %s', (flags, length, accepted) => {
    const problem = refusal({ agent: 'pi', provider: 'claude', args: Array.from({ length: flags }, () => 'x'.repeat(length)) });
    if (accepted) expect(problem).toBeNull();
    else expect(problem?.key).toMatch(/^harnesses\.harness_kind_1\.args/);
  });
});
