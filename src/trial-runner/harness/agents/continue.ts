import { AgentDriver, AgentTurnReport, jsonLines, quote, QUIET_NODE_ENV, text } from './agent-driver';

/**
 * Continue (`cn -p`), OpenAI chat completions, its model in a config file written into HOME.
 * Its output is one JSON object with the answer and no usage (the gateway's are the only counts).
 */
export const continueCli: AgentDriver = {
  name: 'continue',
  packageName: '@continuedev/cli',
  bin: 'cn',
  pinnedVersion: '1.5.47',
  wires: ['openai-chat'],
  leavesDaemons: false,
  resumes: true,
  homeFiles: (setup) => ({
    '.continue/assay.yaml': [
      'name: assay',
      'version: 0.0.1',
      'schema: v1',
      'models:',
      `  - name: ${JSON.stringify(setup.model)}`,
      '    provider: openai',
      `    model: ${JSON.stringify(setup.model)}`,
      `    apiBase: ${JSON.stringify(`${setup.gatewayUrl}/v1`)}`,
      // The trial's gateway token: Continue reads its key only from here; refused once the trial ends.
      `    apiKey: ${JSON.stringify(setup.gatewayToken)}`,
      '    roles: [chat, edit, apply]',
      '    capabilities: [tool_use]',
      '',
    ].join('\n'),
  }),
  env: () => ({ ...QUIET_NODE_ENV, CONTINUE_CLI_ENABLE_TELEMETRY: '0', CONTINUE_METRICS_ENABLED: '0' }),
  command: (setup, turn, args) => {
    const resume = turn.number === 1 ? '' : ' --resume';
    const config = quote(`${setup.home}/.continue/assay.yaml`);
    return `${quote(setup.bin)} -p --auto --config ${config} --format json${resume}${args} ${quote(turn.message)} </dev/null`;
  },
  read: readContinueJson,
};

function readContinueJson(output: string): AgentTurnReport {
  let finalMessage: string | null = null;
  let error: string | null = null;
  for (const line of jsonLines(output)) {
    if (typeof line.response === 'string') finalMessage = text(line.response);
    if (line.status === 'error') error = text(line.error) ?? text(line.response) ?? 'the turn failed';
  }
  return { finalMessage, sessionId: null, usage: null, toolCalls: [], error };
}
