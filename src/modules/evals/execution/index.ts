/**
 * The trial runner's public face: what the server wires up, what the benchmark measures and
 * what the CLI's local mode runs. Importable alone: nothing here reaches Nest, the stores, the
 * saga or the app's wiring (test/unit/boundaries.spec.ts checks it).
 */
export { createTrialRunner, SandboxTrialRunner } from './trial-runner';
export type { TrialRunnerOptions } from './trial-runner';
export { voidOutcome } from './trial-runner.port';
export type { TrajectoryCommand, TrialArtifact, TrialOutcome, TrialRunner, TrialSpec, TrialUsage } from './trial-runner.port';
export { loadExecutionConfig, parseExecutionConfig, ExecutionConfigError } from './execution-config';
export type { ExecutionConfig, HarnessDefinition, SandboxDefinition, SandboxDriverName } from './execution-config';
export { detectDefaultSandbox } from './sandbox/default-sandbox';
export type { DefaultSandbox } from './sandbox/default-sandbox';
export { bareSpawn } from './sandbox/bare-spawn';
export { sharedSpawnHelper } from './sandbox/process-launcher';
export { PROCESS_GROUPS_FILE } from './sandbox/process-groups';
export type { SpawnHelperKind } from './sandbox/helper-transports';
export type { TrialLogger } from './trial-session';
export type { ArtifactSealer } from './workspace/artifacts';
export { providerModels } from './providers/provider-models';
export type { JudgesConfig, ModelPrice, ProviderDefinition, ProviderProtocol, UsersConfig } from './providers/provider-config';
/** The judge outside a trial (a rescore judges stored conversations) and what it records. */
export { addJudgeUse, configuredJudge } from './validation/model-judge';
export type { JudgeSettings } from './validation/model-judge';
export { JudgeError } from './validation/judge';
export type { JudgeModelUse, JudgeService } from './validation/judge';
export { ValidationRecorder } from './validation/validation-recorder';
export type { ValidationRecord } from './validation/validation-record';
export { Redactor } from './output/captured-output';
