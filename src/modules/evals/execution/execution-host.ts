import { KeyRing, keyRingOf } from '../../../infrastructure/secrets/key-ring';
import type { Runtime } from '../../../runtime';
import { ArtifactSealer, createTrialRunner, detectDefaultSandbox, loadExecutionConfig } from './index';
import { emptyTrialEnvironment, TrialEnvironment } from './trial-environment';
import { TrialSaga } from './trial-saga';

/**
 * Starts what runs trials in this process: the operator's execution config, the trial runner
 * and the saga, after logging which sandbox variants without one will get.
 */
export async function startTrialExecution(runtime: Runtime, environment: TrialEnvironment = emptyTrialEnvironment): Promise<TrialSaga> {
  const { config, logger } = runtime;
  const execution = loadExecutionConfig(config.execution.configPath);
  const sandbox = await detectDefaultSandbox(execution.defaultSandbox);
  logger.info('default sandbox chosen', { driver: sandbox.driver, reason: sandbox.reason });
  logger.info('trial execution configured', {
    config: config.execution.configPath,
    harnesses: Object.keys(execution.harnesses),
    sandboxes: Object.keys(execution.sandboxes),
    maxParallelTrials: config.execution.maxParallelTrials,
  });
  const runner = createTrialRunner({
    dataDir: config.dataDir,
    config: execution,
    outputCapBytes: config.execution.outputCapBytes,
    verifyTimeoutMs: config.execution.verifyTimeoutMs,
    logger,
    artifactSealer: keyRingArtifactSealer(keyRingOf(runtime)),
  });
  const saga = new TrialSaga(runtime.eventStore, runner, environment, logger, { maxParallelTrials: config.execution.maxParallelTrials });
  await saga.start();
  return saga;
}

/** Artifacts sealed under their organization's data key, bound to it and to their hash. */
export function keyRingArtifactSealer(keyRing: KeyRing): ArtifactSealer {
  return { begin: (organization, sha256) => keyRing.startSealingFile({ kind: 'artifact', organization, sha256 }) };
}
