import type { AgentDriver, AgentName } from './agent-driver';
import { claudeCode } from './claude-code';
import { cline } from './cline';
import { codex } from './codex';
import { continueCli } from './continue';
import { copilot } from './copilot';
import { geminiCli } from './gemini-cli';
import { opencode } from './opencode';
import { pi } from './pi';
import { qwenCode } from './qwen-code';

export { AGENT_NAMES } from './agent-driver';
export type { AgentDriver, AgentName, AgentSetup, AgentTurnReport } from './agent-driver';

/** The built-in agent drivers, by the name `harnesses.<kind>.agent` gives. */
export const AGENT_DRIVERS: Readonly<Record<AgentName, AgentDriver>> = {
  'claude-code': claudeCode,
  codex,
  'gemini-cli': geminiCli,
  opencode,
  'qwen-code': qwenCode,
  pi,
  copilot,
  cline,
  continue: continueCli,
};
