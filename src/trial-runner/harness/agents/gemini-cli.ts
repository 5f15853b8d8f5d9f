import { AgentDriver, AgentTurnReport, at, count, idOf, jsonLines, quote, QUIET_NODE_ENV, ReportedToolCall, text, usageOf } from './agent-driver';

/**
 * Gemini CLI (`gemini -p`), Gemini streamGenerateContent. Headless mode needs the auth type in
 * `$HOME/.gemini/settings.json`. `stream-json` prints `init` (the session), the assistant's
 * message in `delta` pieces, `tool_use` and `tool_result`, then `result` with the stats, whose
 * `input` is the uncached part.
 */
export const geminiCli: AgentDriver = {
  name: 'gemini-cli',
  packageName: '@google/gemini-cli',
  bin: 'gemini',
  pinnedVersion: '0.61.0',
  wires: ['gemini'],
  leavesDaemons: false,
  resumes: true,
  homeFiles: () => ({
    '.gemini/settings.json': JSON.stringify({
      privacy: { usageStatisticsEnabled: false },
      telemetry: { enabled: false },
      general: { enableAutoUpdate: false, enableAutoUpdateNotification: false },
      security: { auth: { selectedType: 'gemini-api-key' } },
    }),
  }),
  env: () => ({ ...QUIET_NODE_ENV, GEMINI_API_KEY: '{{gateway.token}}', GOOGLE_GEMINI_BASE_URL: '{{gateway.url}}', GEMINI_CLI_NO_RELAUNCH: 'true' }),
  command: (setup, turn, args) => {
    const resume = turn.number === 1 ? '' : ' --resume latest';
    return `${quote(setup.bin)} -p ${quote(turn.message)} --output-format stream-json --yolo --skip-trust -m ${quote(setup.model)}${resume}${args} </dev/null`;
  },
  read: readGeminiStream,
};

function readGeminiStream(output: string): AgentTurnReport {
  const calls = new Map<string, ReportedToolCall>();
  const toolCalls: ReportedToolCall[] = [];
  let pieces: string[] = [];
  let sessionId: string | null = null;
  let usage: AgentTurnReport['usage'] = null;
  let error: string | null = null;
  for (const line of jsonLines(output)) {
    if (line.type === 'init') sessionId ??= text(line.session_id);
    if (line.type === 'message' && line.role === 'assistant') {
      // The final message is the assistant's text after its last tool call, given in delta pieces.
      if (line.delta === true) pieces.push(text(line.content) ?? '');
      else pieces = [text(line.content) ?? ''];
    }
    if (line.type === 'tool_use') {
      pieces = [];
      const tool = text(line.tool_name) ?? 'tool';
      const shell = tool === 'run_shell_command' ? text(at(line, 'parameters.command')) : null;
      const call: ReportedToolCall = {
        tool,
        input: line.parameters ?? null,
        output: null,
        command: shell === null ? null : { command: shell, exitCode: null },
      };
      calls.set(idOf(line.tool_id, toolCalls.length), call);
      toolCalls.push(call);
    }
    if (line.type === 'tool_result') {
      const call = calls.get(idOf(line.tool_id, ''));
      if (call !== undefined) {
        call.output = line.output ?? at(line, 'error.message') ?? null;
        if (call.command !== null) call.command.exitCode = line.status === 'success' ? 0 : 1;
      }
    }
    if (line.type === 'error') error = text(line.message) ?? 'the agent reported an error';
    if (line.type === 'result') {
      const stats = line.stats;
      usage = usageOf({
        input: count(at(stats, 'input') ?? at(stats, 'input_tokens')),
        output: count(at(stats, 'output_tokens')),
        cacheRead: count(at(stats, 'cached')),
        cacheWrite: 0,
      });
      if (line.status === 'error') error = text(at(line, 'error.message')) ?? 'the turn failed';
    }
  }
  const finalMessage = pieces.length === 0 ? null : pieces.join('');
  return { finalMessage, sessionId, usage, toolCalls, error };
}
