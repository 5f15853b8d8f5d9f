import type { DomainEvent } from '#infrastructure/event-store/stream-command';

/**
 * Stored in `environment-{org}`. A value is in `sealedValue` only, sealed with AES-256-GCM under
 * the organization's data key and bound to the organization and the variable's name. The
 * preview is computed from the value when it is set, so nothing downstream ever needs the value.
 */
export type EnvironmentVariableSet = DomainEvent<
  'EnvironmentVariableSet',
  {
    organization: string;
    variableId: string;
    name: string;
    secret: boolean;
    sealedValue: string;
    preview: string;
    /** 1 when the name is first set; one more at each replacement. */
    revision: number;
    scope: 'organization';
    createdAt: string;
    updatedAt: string;
  }
>;

export type EnvironmentVariableRemoved = DomainEvent<
  'EnvironmentVariableRemoved',
  { organization: string; variableId: string; name: string; removedAt: string }
>;

/** A trial was given these variables. */
export type EnvironmentVariablesUsed = DomainEvent<
  'EnvironmentVariablesUsed',
  { organization: string; names: string[]; trialId: string | null; usedAt: string }
>;

export type EnvironmentEvent = EnvironmentVariableSet | EnvironmentVariableRemoved | EnvironmentVariablesUsed;

export const ENVIRONMENT_EVENT_TYPES = ['EnvironmentVariableSet', 'EnvironmentVariableRemoved', 'EnvironmentVariablesUsed'] as const;

export function environmentStream(organization: string): string {
  return `environment-${organization}`;
}
