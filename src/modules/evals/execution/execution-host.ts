import { KeyRing, keyRingOf } from '../../../infrastructure/secrets/key-ring';
import type { Runtime } from '../../../runtime';
import type { ExecutionPolicy } from '../shared/execution-policy';
import type { ExecutionConfig } from './execution-config';
import { ArtifactSealer, createTrialRunner, detectDefaultSandbox, loadExecutionConfig } from './index';
import type { DefaultSandbox } from './sandbox/default-sandbox';
import { emptyTrialEnvironment, TrialEnvironment } from './trial-environment';
import { TrialSaga } from './trial-saga';
import type { TrialsRoot } from './workspace/trials-root';

export interface TrialExecution {
  saga: TrialSaga;
  policy: ExecutionPolicy;
}

/**
 * Starts what runs trials in this process: the operator's execution config, the trial runner
 * and the saga, after logging which sandbox variants without one will get.
 */
export async function startTrialExecution(
  runtime: Runtime,
  environment: TrialEnvironment = emptyTrialEnvironment,
  trialsRoot: TrialsRoot | null = null,
): Promise<TrialExecution> {
  const { config, logger } = runtime;
  const execution = loadExecutionConfig(config.execution.configPath);
  const sandbox = await detectDefaultSandbox(execution.defaultSandbox);
  logger.info('default sandbox chosen', { driver: sandbox.driver, reason: sandbox.reason });
  const policy = executionPolicy(runtime, execution, sandbox);
  announceUnsandboxed(runtime, execution, policy);
  logger.info('trial execution configured', {
    config: config.execution.configPath,
    harnesses: Object.keys(execution.harnesses),
    sandboxes: Object.keys(execution.sandboxes),
    maxParallelTrials: config.execution.maxParallelTrials,
    repositories: execution.repositories,
  });
  const runner = createTrialRunner({
    dataDir: config.dataDir,
    config: execution,
    outputCapBytes: config.execution.outputCapBytes,
    verifyTimeoutMs: config.execution.verifyTimeoutMs,
    trialsRoot: trialsRoot?.directory,
    // Other instances' trial directories are beside this one's: hidden from sandboxes too.
    hiddenPaths: trialsRoot ? [trialsRoot.parent] : [],
    logger,
    artifactSealer: keyRingArtifactSealer(keyRingOf(runtime)),
  });
  const saga = new TrialSaga(runtime.eventStore, runner, environment, logger, { maxParallelTrials: config.execution.maxParallelTrials });
  await saga.start();
  return { saga, policy };
}

function executionPolicy(runtime: Runtime, execution: ExecutionConfig, sandbox: DefaultSandbox): ExecutionPolicy {
  return {
    repositories: execution.repositories,
    allowUnsandboxed: execution.allowUnsandboxed,
    driverFor: (kind) => (kind === null ? sandbox.driver : (execution.sandboxes[kind]?.driver ?? null)),
    warnUnsandboxed: (batchId, variants) =>
      runtime.logger.warn('UNSANDBOXED: this batch runs trials as plain processes, which can read the data directory and the master key and call the API', {
        batchId,
        variants,
      }),
  };
}

/** Said loudly at every start: what plain-process trials can reach, or that they will be refused. */
function announceUnsandboxed(runtime: Runtime, execution: ExecutionConfig, policy: ExecutionPolicy): void {
  const kinds = Object.keys(execution.sandboxes).filter((kind) => policy.driverFor(kind) === 'process');
  const byDefault = policy.driverFor(null) === 'process';
  if (!byDefault && kinds.length === 0) return;
  if (!execution.allowUnsandboxed) {
    runtime.logger.warn('bubblewrap does not work here: batches of variants without a sandbox are refused until bubblewrap works or ASSAY_CONFIG sets allowUnsandboxed: true');
    return;
  }
  runtime.logger.warn('UNSANDBOXED: allowUnsandboxed is set and some trials run as plain processes without isolation; they can read the data directory, the master key file and the event log, and call the API on loopback', {
    defaultSandbox: byDefault ? 'process' : 'bubblewrap',
    processSandboxKinds: kinds,
  });
}

/** Artifacts sealed under their organization's data key, bound to it and to their hash. */
export function keyRingArtifactSealer(keyRing: KeyRing): ArtifactSealer {
  return { begin: (organization, sha256) => keyRing.startSealingFile({ kind: 'artifact', organization, sha256 }) };
}
