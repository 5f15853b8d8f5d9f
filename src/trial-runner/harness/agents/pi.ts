import type { ProviderProtocol } from '../../providers/provider-config';
import {
  addCounts,
  AgentDriver,
  AgentTurnReport,
  at,
  idOf,
  jsonLines,
  objects,
  quote,
  QUIET_NODE_ENV,
  ReportedToolCall,
  text,
  TokenCounts,
  usageOf,
} from './agent-driver';

/**
 * pi (`pi -p --mode json`), any of the four protocols: its provider, in
 * `$HOME/.pi/agent/models.json`, speaks the upstream's. Its JSON events repeat the usage on
 * several types: only `message_end` of an assistant message counts (uncached input). With its
 * model unreachable it exits 0, the error in its last message.
 */
export const pi: AgentDriver = {
  name: 'pi',
  packageName: '@mariozechner/pi-coding-agent',
  bin: 'pi',
  pinnedVersion: '0.73.1',
  wires: ['anthropic', 'openai-chat', 'openai-responses', 'gemini'],
  leavesDaemons: false,
  resumes: true,
  homeFiles: (setup) => {
    const { api, path } = PI_API[setup.protocol];
    const provider = { baseUrl: `${setup.gatewayUrl}${path}`, api, apiKey: 'PI_GATEWAY_KEY', models: [{ id: setup.model }] };
    return { '.pi/agent/models.json': JSON.stringify({ providers: { assay: provider } }) };
  },
  env: () => ({ ...QUIET_NODE_ENV, PI_GATEWAY_KEY: '{{gateway.token}}', PI_OFFLINE: '1', PI_TELEMETRY: '0' }),
  command: (setup, turn, args) => {
    const resume = turn.number === 1 ? '' : turn.sessionId === null ? ' -c' : ` --session ${quote(turn.sessionId)}`;
    return `${quote(setup.bin)} -p --mode json --provider assay --model ${quote(setup.model)}${resume}${args} ${quote(turn.message)} </dev/null`;
  },
  read: readPiJson,
};

/** pi's API for each upstream protocol, and the path its base URL takes on the gateway. */
const PI_API: Record<ProviderProtocol, { api: string; path: string }> = {
  anthropic: { api: 'anthropic-messages', path: '' },
  openai: { api: 'openai-completions', path: '/v1' },
  'openai-compatible': { api: 'openai-completions', path: '/v1' },
  'openai-responses': { api: 'openai-responses', path: '/v1' },
  gemini: { api: 'google-generative-ai', path: '/v1beta' },
};

function readPiJson(output: string): AgentTurnReport {
  const calls = new Map<string, ReportedToolCall>();
  const toolCalls: ReportedToolCall[] = [];
  let finalMessage: string | null = null;
  let sessionId: string | null = null;
  let totals: TokenCounts | null = null;
  let error: string | null = null;
  for (const line of jsonLines(output)) {
    if (line.type === 'session') sessionId ??= text(line.id);
    if (line.type === 'message_end' && at(line, 'message.role') === 'assistant') {
      const message = line.message as Record<string, unknown>;
      totals = addCounts(totals, message, { input: 'usage.input', output: 'usage.output', cacheRead: 'usage.cacheRead', cacheWrite: 'usage.cacheWrite' });
      const said = objects(message.content)
        .filter((part) => part.type === 'text')
        .map((part) => text(part.text) ?? '');
      if (said.length > 0) finalMessage = said.join('');
      if (message.stopReason === 'error') error = text(message.errorMessage) ?? 'the model call failed';
      else error = null;
    }
    if (line.type === 'tool_execution_start') {
      const tool = text(line.toolName) ?? 'tool';
      const shell = tool === 'bash' ? text(at(line, 'args.command')) : null;
      const call: ReportedToolCall = { tool, input: line.args ?? null, output: null, command: shell === null ? null : { command: shell, exitCode: null } };
      calls.set(idOf(line.toolCallId, toolCalls.length), call);
      toolCalls.push(call);
    }
    if (line.type === 'tool_execution_end') {
      const call = calls.get(idOf(line.toolCallId, ''));
      if (call !== undefined) {
        const content = at(line, 'result.content');
        call.output = Array.isArray(content)
          ? objects(content)
              .map((part) => text(part.text) ?? '')
              .join('\n')
          : (line.result ?? null);
        if (call.command !== null) call.command.exitCode = line.isError === true ? 1 : 0;
      }
    }
  }
  return { finalMessage, sessionId, usage: usageOf(totals), toolCalls, error };
}
