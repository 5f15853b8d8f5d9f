import { readFile } from 'node:fs/promises';
import * as path from 'node:path';
import type { ArtifactReader } from '../trials/trial-files/artifact-reader';
import type { ExecutionSettings } from '../../../config';
import type { JsonLogger } from '#infrastructure/logging/json-logger';
import type { KeyRing } from '#infrastructure/secrets/key-ring';
import {
  ArtifactSealer,
  artifactPath,
  createTrialRunner,
  DefaultSandbox,
  detectDefaultSandbox,
  ExecutionConfig,
  harnessAgents,
  loadExecutionConfig,
  PROCESS_GROUPS_FILE,
  providerModels,
  sharedSpawnHelper,
} from '#trial-runner';
import type { JudgeSettings } from '#trial-runner';
import type { TrialRunner } from '#trial-runner';
import type { ExecutionPolicy } from '../shared/execution-policy';
import type { HarnessAgentEntry, ProviderModelEntry } from '../shared/provider-models';
import type { RunnerSettings } from '../runner/runner-settings';
import type { ClaimTerms } from './trial-lease';

/** What the server's trial execution is built from: its configuration and the process's parts. */
export interface TrialExecutionSettings {
  dataDir: string;
  execution: ExecutionSettings;
  /** This instance's trials directory, and the directory of every instance's (hidden from sandboxes); null: the runner's default. */
  trialsRoot: { directory: string; parent: string } | null;
  keyRing: KeyRing;
  logger: JsonLogger;
}

/** How this process runs trials: the runner the saga drives, the policy the start use cases check. */
export interface TrialExecutionPlan {
  runner: TrialRunner;
  policy: ExecutionPolicy;
  maxParallelTrials: number;
  /** The configured providers' models, which evals.models.list shows. */
  providerModels: ProviderModelEntry[];
  /** Opens the artifacts trials stored (evals.trials.artifact). */
  artifacts: ArtifactReader;
  /** The harness kinds run by a built-in agent, which evals.models.list names. */
  harnessAgents: HarnessAgentEntry[];
  /** The judges' providers and prices, for rescoring stored conversations. */
  judging: JudgeSettings;
  /** Leases and silence of local runners, and the output cap their reports respect. */
  localRunners: RunnerSettings;
  /** This instance's name on its trial claims, and their lease. */
  claims: ClaimTerms;
}

/**
 * Reads the operator's execution config, chooses the default sandbox and builds the trial
 * runner, logging what variants without a sandbox will get. Everything that can refuse a start
 * happens here, before the application is created; OrchestrationModule runs the saga over it.
 */
export async function planTrialExecution(settings: TrialExecutionSettings): Promise<TrialExecutionPlan> {
  const { execution: executionSettings, logger, trialsRoot } = settings;
  const execution = loadExecutionConfig(executionSettings.configPath);
  const sandbox = await detectDefaultSandbox(execution.defaultSandbox);
  logger.info('default sandbox chosen', { driver: sandbox.driver, reason: sandbox.reason });
  const policy = executionPolicy(logger, execution, sandbox, executionSettings.claims.leaseMs);
  announceUnsandboxed(logger, execution, policy);
  logger.info('trial execution configured', {
    config: executionSettings.configPath,
    harnesses: Object.keys(execution.harnesses),
    sandboxes: Object.keys(execution.sandboxes),
    maxParallelTrials: executionSettings.maxParallelTrials,
    // python: commands start with vfork (python3 found); node: forked from the Node helper.
    spawnHelper: sharedSpawnHelper.helperKind,
    instanceId: executionSettings.claims.instanceId,
    trialLeaseMs: executionSettings.claims.leaseMs,
    repositories: execution.repositories,
    providers: Object.values(execution.providers).map(({ name, protocol, baseURL, apiKeyEnv }) => ({ name, protocol, baseURL, apiKeyEnv })),
  });
  // The guardian lists this instance's running process groups beside its trials, for the next instance should both die.
  if (trialsRoot) sharedSpawnHelper.recordProcessGroupsIn(path.join(trialsRoot.directory, PROCESS_GROUPS_FILE));
  const runner = createTrialRunner({
    dataDir: settings.dataDir,
    config: execution,
    outputCapBytes: executionSettings.outputCapBytes,
    verifyTimeoutMs: executionSettings.verifyTimeoutMs,
    validatorTimeoutMs: executionSettings.validatorTimeoutMs,
    trialsRoot: trialsRoot?.directory,
    agentsDir: executionSettings.agentsDir ?? undefined,
    // Other instances' trial directories are beside this one's: hidden from sandboxes too.
    hiddenPaths: trialsRoot ? [trialsRoot.parent] : [],
    logger,
    artifactSealer: keyRingArtifactSealer(settings.keyRing),
  });
  return {
    runner,
    policy,
    maxParallelTrials: executionSettings.maxParallelTrials,
    providerModels: providerModels(execution),
    harnessAgents: harnessAgents(execution),
    artifacts: keyRingArtifactReader(settings.dataDir, settings.keyRing),
    judging: { providers: execution.providers, judges: execution.judges, prices: execution.prices },
    localRunners: { ...executionSettings.runner, outputCapBytes: executionSettings.outputCapBytes },
    claims: executionSettings.claims,
  };
}

function executionPolicy(logger: JsonLogger, execution: ExecutionConfig, sandbox: DefaultSandbox, startHoldMs: number): ExecutionPolicy {
  return {
    startHoldMs,
    providers: Object.keys(execution.providers),
    repositories: execution.repositories,
    allowUnsandboxed: execution.allowUnsandboxed,
    driverFor: (kind) => (kind === null ? sandbox.driver : (execution.sandboxes[kind]?.driver ?? null)),
    defaultUserModel: execution.users.defaultModel,
    warnUnsandboxed: (batchId, variants) =>
      logger.warn('UNSANDBOXED: this batch runs trials as plain processes, which can read the data directory and the master key and call the API', {
        batchId,
        variants,
      }),
  };
}

/** Said loudly at every start: what plain-process trials can reach, or that they will be refused. */
function announceUnsandboxed(logger: JsonLogger, execution: ExecutionConfig, policy: ExecutionPolicy): void {
  const kinds = Object.keys(execution.sandboxes).filter((kind) => policy.driverFor(kind) === 'process');
  const byDefault = policy.driverFor(null) === 'process';
  if (!byDefault && kinds.length === 0) return;
  if (!execution.allowUnsandboxed) {
    logger.warn(
      'bubblewrap does not work here: batches of variants without a sandbox are refused until bubblewrap works or ASSAY_CONFIG sets allowUnsandboxed: true',
    );
    return;
  }
  logger.warn(
    'UNSANDBOXED: allowUnsandboxed is set and some trials run as plain processes without isolation; they can read the data directory, the master key file and the event log, and call the API on loopback',
    {
      defaultSandbox: byDefault ? 'process' : 'bubblewrap',
      processSandboxKinds: kinds,
    },
  );
}

/** Artifacts sealed under their organization's data key, bound to it and to their hash. */
export function keyRingArtifactSealer(keyRing: KeyRing): ArtifactSealer {
  return { begin: (organization, sha256) => keyRing.startSealingFile({ kind: 'artifact', organization, sha256 }) };
}

/** Reads an artifact from the data directory and opens it with the organization's key (artifacts.ts wrote it). */
export function keyRingArtifactReader(dataDir: string, keyRing: KeyRing): ArtifactReader {
  return {
    read: async (organization, sha256) =>
      keyRing.openFile({ kind: 'artifact', organization, sha256 }, await readFile(artifactPath(dataDir, organization, sha256))),
  };
}
