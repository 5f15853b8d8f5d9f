import { AgentDriver, AgentTurnReport, at, count, idOf, jsonLines, objects, quote, QUIET_NODE_ENV, ReportedToolCall, text, usageOf } from './agent-driver';

/**
 * Claude Code (`claude -p`), Anthropic messages. `stream-json` prints each assistant message
 * (its tool_use blocks), each tool result, then a `result` line with the turn's totals, the final
 * message and the session id. Its usage excludes cached input, as the gateway's does.
 */
export const claudeCode: AgentDriver = {
  name: 'claude-code',
  packageName: '@anthropic-ai/claude-code',
  bin: 'claude',
  pinnedVersion: '2.1.332',
  wires: ['anthropic'],
  leavesDaemons: false,
  resumes: true,
  homeFiles: () => ({}),
  env: () => ({
    ...QUIET_NODE_ENV,
    ANTHROPIC_BASE_URL: '{{gateway.url}}',
    ANTHROPIC_API_KEY: '{{gateway.token}}',
    CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC: '1',
    DISABLE_AUTOUPDATER: '1',
    DISABLE_TELEMETRY: '1',
    DISABLE_ERROR_REPORTING: '1',
    // Bounded against an unreachable model (its default retries for minutes).
    CLAUDE_CODE_MAX_RETRIES: '2',
    API_TIMEOUT_MS: '300000',
    // Skipping permissions is refused as root unless the CLI is told it is sandboxed (the process sandbox may run as root).
    IS_SANDBOX: '1',
  }),
  command: (setup, turn, args) => {
    const resume = turn.number === 1 ? '' : turn.sessionId === null ? ' --continue' : ` --resume ${quote(turn.sessionId)}`;
    const flags = `--output-format stream-json --verbose --dangerously-skip-permissions --model ${quote(setup.model)}${resume}`;
    return `${quote(setup.bin)} -p ${quote(turn.message)} ${flags}${args} </dev/null`;
  },
  read: (output) => readClaudeStream(output),
};

/**
 * The stream-json of Claude Code and of the CLIs that print its shape (Qwen Code): `assistant`
 * lines with tool_use blocks, `user` lines with their tool_result, one `result` line at the end.
 */
export function readClaudeStream(output: string, shellTools: readonly string[] = ['Bash']): AgentTurnReport {
  const calls = new Map<string, ReportedToolCall>();
  const order: ReportedToolCall[] = [];
  let finalMessage: string | null = null;
  let sessionId: string | null = null;
  let usage: AgentTurnReport['usage'] = null;
  let error: string | null = null;
  let lastAssistantText: string | null = null;
  for (const line of jsonLines(output)) {
    sessionId ??= text(line.session_id);
    const content = objects(at(line, 'message.content'));
    if (line.type === 'assistant') {
      const said = content.filter((block) => block.type === 'text').map((block) => text(block.text) ?? '');
      if (said.length > 0) lastAssistantText = said.join('');
      for (const block of content) {
        if (block.type !== 'tool_use') continue;
        const tool = text(block.name) ?? 'tool';
        const shell = shellTools.includes(tool) ? text(at(block, 'input.command')) : null;
        const call: ReportedToolCall = { tool, input: block.input ?? null, output: null, command: shell === null ? null : { command: shell, exitCode: null } };
        calls.set(idOf(block.id, order.length), call);
        order.push(call);
      }
    }
    if (line.type === 'user') {
      for (const block of content) {
        if (block.type !== 'tool_result') continue;
        const call = calls.get(idOf(block.tool_use_id, ''));
        if (call === undefined) continue;
        call.output = resultText(block.content);
        if (call.command !== null) call.command.exitCode = block.is_error === true ? 1 : 0;
      }
    }
    if (line.type === 'result') {
      finalMessage = text(line.result) ?? finalMessage;
      const used = line.usage;
      if (typeof used === 'object' && used !== null) {
        usage = usageOf({
          input: count(at(used, 'input_tokens')),
          output: count(at(used, 'output_tokens')),
          cacheRead: count(at(used, 'cache_read_input_tokens')),
          cacheWrite: count(at(used, 'cache_creation_input_tokens')),
        });
      }
      if (line.is_error === true) error = text(line.result) ?? text(line.subtype) ?? 'the agent reported an error';
    }
  }
  return { finalMessage: finalMessage ?? lastAssistantText, sessionId, usage, toolCalls: order, error };
}

/** A tool_result's content: a string, or text blocks. */
function resultText(content: unknown): unknown {
  if (typeof content === 'string') return content;
  const parts = objects(content);
  if (parts.length > 0 && parts.every((part) => part.type === 'text')) return parts.map((part) => text(part.text) ?? '').join('\n');
  return content ?? null;
}
