/**
 * The trial engine's public face, the only path by which anything outside src/trial-runner
 * imports it (a dependency-cruiser rule): what the server wires up, what the CLI's local mode
 * runs, what the benchmarks measure. The types that cross the boundary (what a trial is asked to
 * do, what it reports) are in contract.ts. Importable alone: nothing here reaches Nest, the
 * stores, the saga or the app's wiring (test/project/trial-runner-alone.spec.ts checks it).
 */
export { createTrialRunner, SandboxTrialRunner } from './trial-runner';
export type { TrialRunnerOptions } from './trial-runner';
export { voidOutcome } from './contract';
export type * from './contract';
export { loadExecutionConfig, parseExecutionConfig, ExecutionConfigError } from './execution-config';
export type { ExecutionConfig, HarnessDefinition, SandboxDefinition, SandboxDriverName } from './execution-config';
export { detectDefaultSandbox } from './sandbox/default-sandbox';
export type { DefaultSandbox } from './sandbox/default-sandbox';
export { bareSpawn } from './sandbox/bare-spawn';
export { sharedSpawnHelper } from './sandbox/process-launcher';
export { killRecordedGroups, PROCESS_GROUPS_FILE } from './sandbox/process-groups';
export type { SpawnHelperKind } from './sandbox/helper-transports';
export type { TrialLogger } from './trial-session';
export type { ArtifactSealer } from './workspace/artifacts';
export { providerModels } from './providers/provider-models';
export type { JudgesConfig, ModelPrice, ProviderDefinition, ProviderProtocol, UsersConfig } from './providers/provider-config';
/** The judge outside a trial (a rescore judges stored conversations) and what it records. */
export { addJudgeUse, configuredJudge } from './validation/model-judge';
export type { JudgeSettings } from './validation/model-judge';
export { JudgeError } from './validation/judge';
export type { JudgeService } from './validation/judge';
export { ValidationRecorder } from './validation/validation-recorder';
export { Redactor } from './output/captured-output';
export { repositoryUrlProblem, STRICT_REPOSITORY_POLICY } from './repository-urls';
export type { RepositoryPolicy } from './repository-urls';
export { DEFAULT_USER_MODEL } from './providers/provider-config';
export { MAX_PREPARE_RESULT_CHARS } from './validation/run-prepare';
export type { ModuleContextData } from './validation/module-protocol';
export { observeExecution } from './execution-observers';
export { artifactPath, textOf } from './workspace/artifacts';
/** Marks a trials root for ext4's allocator (the benchmarks' bare runs get the same). */
export { spreadTrialDirectories } from './workspace/trial-directory';
/** How commands start: the server's shared spawn helper, and the parts the benchmarks run bare. */
export { SpawnHelper } from './sandbox/process-launcher';
export type { ProcessLauncher } from './sandbox/process-launcher';
export { defaultHelperKind } from './sandbox/helper-transports';
export { bubblewrapMissing } from './sandbox/host-tools';
/** The model gateway agents reach their model through (the benchmark runs one alone). */
export { ModelGateway, sharedModelGateway } from './gateway/model-gateway';
export type { GatewayGrant, GrantTerms } from './gateway/model-gateway';
/** The built-in agent drivers and their installer (the tests and the benchmark install the CLIs as the service does). */
export { AGENT_DRIVERS, AGENT_NAMES } from './harness/agents';
export type { AgentDriver, AgentName } from './harness/agents';
export { AgentInstaller } from './harness/agents/agent-install';
export { harnessAgents } from './harness/harness-driver';
export type { HarnessAgentEntry } from './harness/harness-driver';
