/** The trial runner's public face: what the server wires up and what the benchmark measures. */
export { createTrialRunner, SandboxTrialRunner } from './trial-runner';
export type { TrialRunnerOptions } from './trial-runner';
export { loadExecutionConfig, parseExecutionConfig, ExecutionConfigError } from './execution-config';
export type { ExecutionConfig, HarnessDefinition, SandboxDefinition, SandboxDriverName } from './execution-config';
export { detectDefaultSandbox } from './sandbox/default-sandbox';
export type { DefaultSandbox } from './sandbox/default-sandbox';
export { bareSpawn } from './sandbox/bare-spawn';
export type { TrialLogger } from './trial-session';
export type { ArtifactSealer } from './workspace/artifacts';
