import { readFileSync } from 'node:fs';
import * as path from 'node:path';
import { AGENT_DRIVERS } from './index';
import type { AgentName } from './index';

/** What each CLI printed at its pinned version, writing out.txt through the test fake (two calls: 1001+1002 in, 51+52 out). */
const output = (agent: AgentName) => readFileSync(path.join(__dirname, 'fixtures', `${agent}.jsonl`), 'utf8');

describe("each driver reads its agent's own output", () => {
  it.each([
    ['claude-code', 'Write', { inputTokens: 2003, outputTokens: 103 }],
    ['codex', 'command_execution', { inputTokens: 2003, outputTokens: 103 }],
    ['gemini-cli', 'write_file', { inputTokens: 2003, outputTokens: 103 }],
    // opencode reports its two tool-declaring calls per step (1002+1003), never its title call.
    ['opencode', 'write', { inputTokens: 2005, outputTokens: 105 }],
    ['qwen-code', 'write_file', { inputTokens: 2003, outputTokens: 103 }],
    ['pi', 'write', { inputTokens: 2003, outputTokens: 103 }],
  ] as const)('%s: the final message, the session, the usage and the writer call', (agent, tool, usage) => {
    const report = AGENT_DRIVERS[agent].read(output(agent));
    expect(report.finalMessage).toBe('Done: I wrote out.txt containing hello.');
    expect(report.sessionId).toMatch(/^[\w-]{8,}$/);
    expect(report.usage).toMatchObject({ ...usage, cacheReadTokens: 0, totalTokens: usage.inputTokens + usage.outputTokens });
    expect(report.toolCalls.map((call) => call.tool)).toEqual([tool]);
    expect(JSON.stringify(report.toolCalls[0].input)).toContain('hello');
    expect(report.error).toBeNull();
  });

  it("codex's shell call is a command with its exit code", () => {
    const [call] = AGENT_DRIVERS.codex.read(output('codex')).toolCalls;
    expect(call.command).toEqual({ command: expect.stringContaining("printf '%s' 'hello"), exitCode: 0 });
  });

  it('reads uncached input where the CLI counts the cache inside it (codex)', () => {
    const line = JSON.stringify({ type: 'turn.completed', usage: { input_tokens: 1500, cached_input_tokens: 1200, output_tokens: 40 } });
    expect(AGENT_DRIVERS.codex.read(line).usage).toMatchObject({ inputTokens: 300, cacheReadTokens: 1200, outputTokens: 40, totalTokens: 1540 });
  });

  it('concatenates the delta pieces of Gemini after its last tool call', () => {
    const lines = [
      { type: 'message', role: 'assistant', content: 'Let me', delta: true },
      { type: 'tool_use', tool_name: 'run_shell_command', tool_id: 't1', parameters: { command: 'ls' } },
      { type: 'tool_result', tool_id: 't1', status: 'error', output: 'no such file' },
      { type: 'message', role: 'assistant', content: 'Done: I wrote', delta: true },
      { type: 'message', role: 'assistant', content: ' out.txt.', delta: true },
    ];
    const report = AGENT_DRIVERS['gemini-cli'].read(lines.map((line) => JSON.stringify(line)).join('\n'));
    expect(report.finalMessage).toBe('Done: I wrote out.txt.');
    expect(report.toolCalls).toEqual([
      { tool: 'run_shell_command', input: { command: 'ls' }, output: 'no such file', command: { command: 'ls', exitCode: 1 } },
    ]);
  });

  it.each([
    ['qwen-code', { type: 'result', subtype: 'success', session_id: 's', result: '[API Error: Connection error.]' }, '[API Error: Connection error.]'],
    ['claude-code', { type: 'result', is_error: true, result: 'API Error: 500 upstream', session_id: 's' }, 'API Error: 500 upstream'],
    ['pi', { type: 'message_end', message: { role: 'assistant', content: [], stopReason: 'error', errorMessage: 'Connection error.' } }, 'Connection error.'],
    ['codex', { type: 'turn.failed', error: { message: 'stream disconnected' } }, 'stream disconnected'],
  ] as const)('%s: an error it reports although it exited 0 is the turn failing', (agent, line, error) => {
    expect(AGENT_DRIVERS[agent].read(`noise\n${JSON.stringify(line)}\n`).error).toBe(error);
  });

  it('reads nothing from output that is not its JSON', () => {
    for (const driver of Object.values(AGENT_DRIVERS)) {
      expect(driver.read('Error: something\n{not json\n[1,2]\n')).toMatchObject({ finalMessage: null, usage: null, toolCalls: [], error: null });
    }
  });
});
