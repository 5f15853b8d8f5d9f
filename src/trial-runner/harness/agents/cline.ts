import { AgentDriver, AgentTurnReport, at, count, jsonLines, quote, QUIET_NODE_ENV, text, usageOf } from './agent-driver';

/**
 * cline (`cline --json`), OpenAI chat completions. Its provider is set with `cline auth` before
 * the task. It cannot resume a session without a terminal, so a conversation ends after its
 * first turn (`agent-cannot-continue`); it leaves a hub daemon on a fixed port, so it runs only in
 * a sandbox whose end ends it. Its last line, `run_result`, has the answer and the usage (input
 * with cached tokens inside).
 */
export const cline: AgentDriver = {
  name: 'cline',
  packageName: 'cline',
  bin: 'cline',
  pinnedVersion: '3.0.65',
  wires: ['openai-chat'],
  leavesDaemons: true,
  resumes: false,
  homeFiles: () => ({}),
  env: () => ({ ...QUIET_NODE_ENV, CLINE_NO_AUTO_UPDATE: '1', CLINE_GATEWAY_KEY: '{{gateway.token}}' }),
  command: (setup, turn, args) => {
    const bin = quote(setup.bin);
    const auth = `${bin} auth -p openai -k "$CLINE_GATEWAY_KEY" -m ${quote(setup.model)} -b ${quote(`${setup.gatewayUrl}/v1`)} >/dev/null </dev/null`;
    return `${auth} && ${bin} --json${args} ${quote(turn.message)} </dev/null`;
  },
  read: readClineJson,
};

function readClineJson(output: string): AgentTurnReport {
  let report: AgentTurnReport = { finalMessage: null, sessionId: null, usage: null, toolCalls: [], error: null };
  for (const line of jsonLines(output)) {
    if (line.type !== 'run_result') continue;
    const input = count(at(line, 'usage.inputTokens'));
    const cached = count(at(line, 'usage.cacheReadTokens'));
    const usage = usageOf({ input: Math.max(0, input - cached), output: count(at(line, 'usage.outputTokens')), cacheRead: cached, cacheWrite: 0 });
    const error = line.finishReason === 'error' ? (text(line.error) ?? text(line.text) ?? 'the run failed') : null;
    report = { finalMessage: text(line.text), sessionId: null, usage, toolCalls: [], error };
  }
  return report;
}
