import { AgentDriver, AgentTurnReport, at, idOf, jsonLines, quote, QUIET_NODE_ENV, ReportedToolCall, text } from './agent-driver';

/**
 * GitHub Copilot CLI (`copilot -p`), bring-your-own-key through `COPILOT_PROVIDER_*`: chat
 * completions, Responses or Anthropic, after the upstream. Its JSON output has no token counts
 * (the gateway's are the only ones); the last `assistant.message` is its answer.
 */
export const copilot: AgentDriver = {
  name: 'copilot',
  packageName: '@github/copilot',
  bin: 'copilot',
  pinnedVersion: '1.0.102',
  wires: ['openai-chat', 'openai-responses', 'anthropic'],
  leavesDaemons: false,
  resumes: true,
  homeFiles: () => ({}),
  env: (setup) => {
    const anthropic = setup.protocol === 'anthropic';
    return {
      ...QUIET_NODE_ENV,
      COPILOT_OFFLINE: 'true',
      COPILOT_PROVIDER_TYPE: anthropic ? 'anthropic' : 'openai',
      ...(anthropic ? {} : { COPILOT_PROVIDER_WIRE_API: setup.protocol === 'openai-responses' ? 'responses' : 'completions' }),
      COPILOT_PROVIDER_BASE_URL: anthropic ? '{{gateway.url}}' : '{{gateway.url}}/v1',
      COPILOT_PROVIDER_API_KEY: '{{gateway.token}}',
      COPILOT_MODEL: setup.model,
    };
  },
  command: (setup, turn, args) => {
    const resume = turn.number === 1 ? '' : turn.sessionId === null ? ' --continue' : ` --resume=${quote(turn.sessionId)}`;
    return `${quote(setup.bin)} -p ${quote(turn.message)} --allow-all-tools --output-format json --disable-client-telemetry${resume}${args} </dev/null`;
  },
  read: readCopilotJson,
};

function readCopilotJson(output: string): AgentTurnReport {
  const calls = new Map<string, ReportedToolCall>();
  const toolCalls: ReportedToolCall[] = [];
  let finalMessage: string | null = null;
  let sessionId: string | null = null;
  let error: string | null = null;
  for (const line of jsonLines(output)) {
    const data = (line.data ?? {}) as Record<string, unknown>;
    if (line.type === 'assistant.message') {
      const said = text(data.content);
      if (said !== null && said !== '') finalMessage = said;
    }
    if (line.type === 'tool.execution_start') {
      const tool = text(data.toolName) ?? 'tool';
      const input = data.arguments ?? null;
      const shell = tool === 'bash' ? text(at(input, 'command')) : null;
      const call: ReportedToolCall = { tool, input, output: null, command: shell === null ? null : { command: shell, exitCode: null } };
      calls.set(idOf(data.toolCallId, toolCalls.length), call);
      toolCalls.push(call);
    }
    if (line.type === 'tool.execution_complete') {
      const call = calls.get(idOf(data.toolCallId, ''));
      if (call !== undefined) {
        call.output = at(data, 'result.content') ?? data.result ?? null;
        if (call.command !== null) call.command.exitCode = data.success === false ? 1 : 0;
      }
    }
    if (line.type === 'result') sessionId ??= text(line.sessionId);
    if (line.type === 'session.error') error = text(data.message) ?? 'the session failed';
  }
  return { finalMessage, sessionId, usage: null, toolCalls, error };
}
