import type { RepositoryPolicy } from './repository-urls';
import { ConfigShape, optionalBoolean } from './config-shape';

/**
 * The operator's consent to what weakens isolation: `allowUnsandboxed` (trials as plain
 * processes, which can read the data directory, the master key file and reach the API on
 * loopback) and the `repositories` block (which source URLs a trial may clone).
 */
export function repositoryPolicy(shape: ConfigShape, value: unknown, allowLocalByDefault = false): RepositoryPolicy {
  const fields = value == null ? {} : shape.object(value, 'repositories', ['allowSsh', 'allowLocal', 'allowPrivateHosts']);
  return {
    allowSsh: optionalBoolean(shape, fields.allowSsh, 'repositories.allowSsh') ?? false,
    allowLocal: optionalBoolean(shape, fields.allowLocal, 'repositories.allowLocal') ?? allowLocalByDefault,
    allowPrivateHosts: optionalBoolean(shape, fields.allowPrivateHosts, 'repositories.allowPrivateHosts') ?? false,
  };
}

/** The part of an execution config that says where trials run, and whether plain processes are allowed. */
export interface SandboxChoices {
  allowUnsandboxed: boolean;
  defaultSandbox: string | null;
  sandboxes: Partial<Record<string, { driver: string }>>;
}

/** A configured `process` driver without `allowUnsandboxed: true` stops the start, naming its key. */
export function checkUnsandboxedConsent(shape: ConfigShape, config: SandboxChoices): void {
  if (config.allowUnsandboxed) return;
  const problem =
    'runs trials as plain processes without isolation (they can read the data directory and the master key file); set allowUnsandboxed: true to allow it';
  if (config.defaultSandbox === 'process') shape.fail('defaultSandbox', problem);
  for (const [kind, definition] of Object.entries(config.sandboxes)) {
    if (definition?.driver === 'process') shape.fail(`sandboxes.${kind}.driver`, problem);
  }
}

/** The failure of a trial that would run unsandboxed without consent (the start refuses it first). */
export function unsandboxedRefusal(kind: string | null): string {
  return kind === null
    ? 'bubblewrap does not work on this server, and running trials as plain processes (no isolation) is not allowed: install bubblewrap, or set allowUnsandboxed: true in ASSAY_CONFIG'
    : `${kind} runs trials as plain processes (no isolation), which this server does not allow: set allowUnsandboxed: true in ASSAY_CONFIG`;
}
