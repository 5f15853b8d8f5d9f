import { addCounts, AgentDriver, AgentTurnReport, at, jsonLines, quote, QUIET_NODE_ENV, ReportedToolCall, text, TokenCounts, usageOf } from './agent-driver';

/**
 * opencode (`opencode run`), OpenAI chat completions through a custom provider given in
 * `OPENCODE_CONFIG_CONTENT`. Its JSON lines carry the session id, each tool call with its state,
 * and per call `step_finish` tokens (uncached input), which are summed.
 */
export const opencode: AgentDriver = {
  name: 'opencode',
  packageName: 'opencode-ai',
  bin: 'opencode',
  pinnedVersion: '1.18.33',
  wires: ['openai-chat'],
  leavesDaemons: false,
  resumes: true,
  homeFiles: () => ({}),
  env: (setup) => ({
    ...QUIET_NODE_ENV,
    OPENCODE_GATEWAY_KEY: '{{gateway.token}}',
    OPENCODE_CONFIG_CONTENT: JSON.stringify({
      $schema: 'https://opencode.ai/config.json',
      autoupdate: false,
      share: 'disabled',
      model: `assay/${setup.model}`,
      provider: {
        assay: {
          npm: '@ai-sdk/openai-compatible',
          name: 'Assay gateway',
          options: { baseURL: '{{gateway.url}}/v1', apiKey: '{env:OPENCODE_GATEWAY_KEY}' },
          models: { [setup.model]: { name: setup.model, tool_call: true } },
        },
      },
      permission: { edit: 'allow', bash: 'allow', webfetch: 'deny' },
    }),
    OPENCODE_DISABLE_AUTOUPDATE: '1',
    OPENCODE_DISABLE_SHARE: '1',
    OPENCODE_DISABLE_DEFAULT_PLUGINS: '1',
    OPENCODE_DISABLE_LSP_DOWNLOAD: '1',
    OPENCODE_DISABLE_MODELS_FETCH: '1',
    OPENCODE_DISABLE_CLAUDE_CODE: '1',
  }),
  command: (setup, turn, args) => {
    const resume = turn.number === 1 ? '' : turn.sessionId === null ? ' -c' : ` -s ${quote(turn.sessionId)}`;
    return `${quote(setup.bin)} run --pure --format json${resume}${args} ${quote(turn.message)} </dev/null`;
  },
  read: readOpencodeJson,
};

function readOpencodeJson(output: string): AgentTurnReport {
  const toolCalls: ReportedToolCall[] = [];
  let finalMessage: string | null = null;
  let sessionId: string | null = null;
  let totals: TokenCounts | null = null;
  let error: string | null = null;
  for (const line of jsonLines(output)) {
    sessionId ??= text(line.sessionID);
    const part = line.part as Record<string, unknown> | undefined;
    if (line.type === 'text') finalMessage = text(part?.text) ?? finalMessage;
    if (line.type === 'tool_use' && part !== undefined) {
      const tool = text(part.tool) ?? 'tool';
      const input = at(part, 'state.input') ?? null;
      const shell = tool === 'bash' ? text(at(input, 'command')) : null;
      const exit = at(part, 'state.metadata.exit');
      const command = shell === null ? null : { command: shell, exitCode: typeof exit === 'number' ? exit : null };
      toolCalls.push({ tool, input, output: at(part, 'state.output') ?? at(part, 'state.error') ?? null, command });
    }
    if (line.type === 'step_finish' && part !== undefined) {
      totals = addCounts(totals, part, { input: 'tokens.input', output: 'tokens.output', cacheRead: 'tokens.cache.read', cacheWrite: 'tokens.cache.write' });
    }
    if (line.type === 'error')
      error = text(at(line, 'error.data.message')) ?? text(at(line, 'error.message')) ?? text(line.error) ?? 'the agent reported an error';
  }
  return { finalMessage, sessionId, usage: usageOf(totals), toolCalls, error };
}
