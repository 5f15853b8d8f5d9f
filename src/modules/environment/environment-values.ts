import type { EventMetadata, EventStore } from '#infrastructure/event-store/event-store.port';
import { executeOnStream } from '#infrastructure/event-store/stream-command';
import type { KeyRing } from '#infrastructure/secrets/key-ring';
import { environmentDecider } from './environment.decider';
import { environmentStream } from './environment.events';
import { readEnvironment } from './environment-reads';

/** A variable as another module sees it: the value stays sealed until that module opens it. */
export interface EnvironmentVariable {
  name: string;
  secret: boolean;
  /** The plaintext; throws SecretUnreadable when the sealed value does not open. */
  open(): Promise<string>;
}

/** That trials used some of an organization's variables, and when. */
export interface VariablesUse {
  organization: string;
  names: string[];
  trialId: string | null;
  now: Date;
}

/**
 * The environment module's public port: what other modules (the trial secrets) may ask of an
 * organization's variables, without knowing its stream, decider or read model.
 */
export interface EnvironmentValues {
  /** The organization's variables as its stream leaves them, in the order they were first set. */
  variables(organization: string): Promise<EnvironmentVariable[]>;
  /** Records their use (lastUsedAt); names no longer set are skipped. Throws when it cannot record. */
  recordUse(use: VariablesUse, metadata: EventMetadata): Promise<void>;
}

/** The port over the event log: the values are sealed there, bound to the organization and name. */
export function environmentValues(eventStore: EventStore, keyRing: KeyRing): EnvironmentValues {
  return {
    async variables(organization) {
      const { variables } = await readEnvironment(eventStore, organization);
      return [...variables].map(([name, variable]) => ({
        name,
        secret: variable.secret,
        open: () => keyRing.open({ kind: 'variable', organization, name }, variable.sealedValue),
      }));
    },
    async recordUse({ organization, names, trialId, now }, metadata) {
      const command = { type: 'RecordVariablesUse' as const, organization, names, trialId, now };
      // Trials finishing together all touch the organization's one stream: retried, not refused.
      await executeOnStream(eventStore, environmentStream(organization), environmentDecider, command, metadata, { attempts: 20 });
    },
  };
}
