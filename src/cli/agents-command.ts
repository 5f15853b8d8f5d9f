import * as path from 'node:path';
import type { Command } from 'commander';
import { AGENT_DRIVERS, AGENT_NAMES, AgentInstaller, harnessAgents, loadExecutionConfig } from '#trial-runner';
import type { AgentName } from '#trial-runner';
import { UsageError } from './errors';

/** How long one install may take (npm's download and the package's own scripts). */
const INSTALL_TIMEOUT_MS = 900_000;

/**
 * `assay agents install [AGENT[@VERSION]...]`: installs built-in agents ahead of their first
 * trial, into ASSAY_AGENTS_DIR (default `<ASSAY_DATA_DIR>/agents`, as the server's), as trials
 * do: once per version, under the same lock. Without arguments, the agents ASSAY_CONFIG's
 * harnesses name, at their versions. Exits 1 when any install failed.
 */
export function registerAgentsCommand(program: Command): void {
  const agents = program.command('agents').configureOutput({ outputError: () => undefined });
  agents
    .command('install')
    .argument('[agents...]')
    .configureOutput({ outputError: () => undefined })
    .action(async (wanted: string[]) => {
      const targets = wanted.length > 0 ? wanted.map(parseTarget) : configuredTargets();
      if (targets.length === 0) throw new UsageError('Name the agents to install (e.g. "assay agents install claude-code codex"): ASSAY_CONFIG names none.');
      const root = agentsDir();
      const installer = new AgentInstaller(root, INSTALL_TIMEOUT_MS);
      let failed = 0;
      for (const { agent, version } of targets) {
        process.stdout.write(`installing ${agent}@${version} into ${root} …\n`);
        const started = Date.now();
        const result = await installer.ensure(AGENT_DRIVERS[agent], version);
        const seconds = ((Date.now() - started) / 1000).toFixed(1);
        if ('failure' in result) {
          failed += 1;
          process.stdout.write(`  failed after ${seconds} s: ${result.failure}\n`);
        } else process.stdout.write(`  ready (${result.reported}) in ${seconds} s: ${result.dir}\n`);
      }
      if (failed > 0) process.exitCode = 1;
    });
}

function parseTarget(text: string): { agent: AgentName; version: string } {
  const at = text.indexOf('@');
  const name = at === -1 ? text : text.slice(0, at);
  if (!AGENT_NAMES.includes(name as AgentName)) throw new UsageError(`Unknown agent "${name}": one of ${AGENT_NAMES.join(', ')}.`);
  const agent = name as AgentName;
  const chosen = at === -1 ? AGENT_DRIVERS[agent].pinnedVersion : text.slice(at + 1);
  if (!/^\d+\.\d+\.\d+(-[0-9A-Za-z.-]+)?$/.test(chosen))
    throw new UsageError(`"${text}": give an exact version, e.g. ${agent}@${AGENT_DRIVERS[agent].pinnedVersion}.`);
  return { agent, version: chosen };
}

function configuredTargets(): Array<{ agent: AgentName; version: string }> {
  const file = process.env.ASSAY_CONFIG?.trim();
  if (!file) return [];
  const seen = new Set<string>();
  return harnessAgents(loadExecutionConfig(path.resolve(file))).flatMap(({ agent, version }) => {
    const key = `${agent}@${version}`;
    if (seen.has(key)) return [];
    seen.add(key);
    return [{ agent: agent as AgentName, version }];
  });
}

function agentsDir(): string {
  const given = process.env.ASSAY_AGENTS_DIR?.trim();
  if (given) return path.resolve(given);
  return path.join(path.resolve(process.env.ASSAY_DATA_DIR?.trim() || './data'), 'agents');
}
