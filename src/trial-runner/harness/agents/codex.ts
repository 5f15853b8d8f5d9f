import { AgentDriver, AgentTurnReport, at, count, jsonLines, quote, QUIET_NODE_ENV, ReportedToolCall, text, usageOf } from './agent-driver';

/**
 * Codex (`codex exec`), OpenAI Responses. Its provider and `sandbox_mode = "workspace-write"`
 * (`exec resume` takes no `-s` and would be read-only) are in `$HOME/.codex/config.toml`. `--json`
 * prints `thread.started`, each item (commands with their exit code, the agent's messages), and
 * `turn.completed` with the usage, whose input includes the cached part.
 */
export const codex: AgentDriver = {
  name: 'codex',
  packageName: '@openai/codex',
  bin: 'codex',
  pinnedVersion: '0.171.0',
  wires: ['openai-responses'],
  leavesDaemons: false,
  resumes: true,
  homeFiles: (setup) => ({
    '.codex/config.toml': [
      `model = ${JSON.stringify(setup.model)}`,
      'model_provider = "assay"',
      'check_for_update_on_startup = false',
      'sandbox_mode = "workspace-write"',
      'approval_policy = "never"',
      '',
      '[model_providers.assay]',
      'name = "Assay gateway"',
      `base_url = ${JSON.stringify(`${setup.gatewayUrl}/v1`)}`,
      'env_key = "CODEX_GATEWAY_KEY"',
      'wire_api = "responses"',
      // Bounded against an unreachable model.
      'request_max_retries = 2',
      'stream_max_retries = 2',
      '',
      '[analytics]',
      'enabled = false',
      '',
      '[features]',
      'plugins = false',
      '',
    ].join('\n'),
  }),
  env: () => ({ ...QUIET_NODE_ENV, CODEX_GATEWAY_KEY: '{{gateway.token}}' }),
  command: (setup, turn, args) => {
    const resume = turn.number === 1 ? '' : turn.sessionId === null ? 'resume --last ' : `resume ${quote(turn.sessionId)} `;
    return `${quote(setup.bin)} exec ${resume}--skip-git-repo-check --json${args} ${quote(turn.message)} </dev/null`;
  },
  read: readCodexJson,
};

function readCodexJson(output: string): AgentTurnReport {
  const toolCalls: ReportedToolCall[] = [];
  let finalMessage: string | null = null;
  let sessionId: string | null = null;
  let usage: AgentTurnReport['usage'] = null;
  let error: string | null = null;
  for (const line of jsonLines(output)) {
    if (line.type === 'thread.started') sessionId ??= text(line.thread_id);
    if (line.type === 'item.completed') {
      const item = line.item as Record<string, unknown> | undefined;
      if (item?.type === 'agent_message') finalMessage = text(item.text) ?? finalMessage;
      if (item?.type === 'command_execution') {
        const command = text(item.command) ?? '';
        const exitCode = typeof item.exit_code === 'number' ? item.exit_code : null;
        toolCalls.push({ tool: 'command_execution', input: { command }, output: item.aggregated_output ?? null, command: { command, exitCode } });
      } else if (item !== undefined && item.type !== 'agent_message' && item.type !== 'reasoning' && item.type !== 'error') {
        toolCalls.push({ tool: text(item.type) ?? 'tool', input: item, output: null, command: null });
      }
    }
    if (line.type === 'turn.completed') {
      const input = count(at(line, 'usage.input_tokens'));
      const cached = count(at(line, 'usage.cached_input_tokens'));
      usage = usageOf({ input: Math.max(0, input - cached), output: count(at(line, 'usage.output_tokens')), cacheRead: cached, cacheWrite: 0 });
    }
    if (line.type === 'turn.failed') error = text(at(line, 'error.message')) ?? 'the turn failed';
  }
  return { finalMessage, sessionId, usage, toolCalls, error };
}
