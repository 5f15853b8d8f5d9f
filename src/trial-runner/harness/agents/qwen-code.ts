import { AgentDriver, QUIET_NODE_ENV, quote } from './agent-driver';
import { readClaudeStream } from './claude-code';

/**
 * Qwen Code (`qwen -p`), OpenAI chat completions. Its `stream-json` has Claude Code's shape. With
 * its model unreachable it exits 0 and says `[API Error: …]` in its result: the turn failed.
 */
export const qwenCode: AgentDriver = {
  name: 'qwen-code',
  packageName: '@qwen-code/qwen-code',
  bin: 'qwen',
  pinnedVersion: '0.24.4',
  wires: ['openai-chat'],
  leavesDaemons: false,
  resumes: true,
  homeFiles: () => ({
    '.qwen/settings.json': JSON.stringify({
      privacy: { usageStatisticsEnabled: false },
      telemetry: { enabled: false },
      general: { disableAutoUpdate: true, disableUpdateNag: true },
    }),
  }),
  env: (setup) => ({
    ...QUIET_NODE_ENV,
    OPENAI_API_KEY: '{{gateway.token}}',
    OPENAI_BASE_URL: '{{gateway.url}}/v1',
    OPENAI_MODEL: setup.model,
  }),
  command: (setup, turn, args) => {
    const resume = turn.number === 1 ? '' : turn.sessionId === null ? ' -c' : ` -r ${quote(turn.sessionId)}`;
    return `${quote(setup.bin)} -p ${quote(turn.message)} --auth-type openai --output-format stream-json --yolo -m ${quote(setup.model)}${resume}${args} </dev/null`;
  },
  read: (output) => {
    const report = readClaudeStream(output, ['run_shell_command']);
    const apiError = report.finalMessage !== null && /^\[API Error/.test(report.finalMessage.trim()) ? report.finalMessage.trim() : null;
    return { ...report, error: report.error ?? apiError };
  },
};
