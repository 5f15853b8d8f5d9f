import { Inject } from '@nestjs/common';
import { CommandHandler, ICommandHandler } from '@nestjs/cqrs';
import { EVENT_STORE, EventStore } from '#infrastructure/event-store/event-store.port';
import { executeOnStream } from '#infrastructure/event-store/stream-command';
import { DecodeError } from '#infrastructure/http/decode/decode.pipe';
import { KeyRing } from '#infrastructure/secrets/key-ring';
import { requestMetadata } from '#shared/caller';
import { newId } from '#shared/ids';
import { MIN_SECRET_VALUE_LENGTH, tooShortForASecret } from '#shared/secret-values';
import { environmentDecider, SetVariables, VariableToSet } from '../environment.decider';
import { environmentStream } from '../environment.events';
import { VariableView, variableView } from '../environment.projection';
import { readEnvironment } from '../environment-reads';
import { previewOf } from '../variable-rules';
import { SetVariablesCommand, VariableInput } from './set-variables.command';

@CommandHandler(SetVariablesCommand)
export class SetVariablesHandler implements ICommandHandler<SetVariablesCommand> {
  constructor(
    @Inject(EVENT_STORE) private readonly eventStore: EventStore,
    private readonly keyRing: KeyRing,
  ) {}

  async execute({ payload, context }: SetVariablesCommand): Promise<VariableView[]> {
    const { organization, variables, now } = payload;
    refuseDuplicates(variables);
    refuseShortSecrets(variables);
    const toSet: VariableToSet[] = [];
    for (const { name, value, secret } of variables) {
      // Sealed here, on arrival: from this line on only the ciphertext and the preview exist.
      const sealedValue = await this.keyRing.seal({ kind: 'variable', organization, name }, value);
      toSet.push({ name, secret, sealedValue, preview: previewOf(value, secret), newVariableId: newId('env', now.getTime()) });
    }
    const command: SetVariables = { type: 'SetVariables', organization, variables: toSet, now };
    const { events } = await executeOnStream(this.eventStore, environmentStream(organization), environmentDecider, command, requestMetadata(context));
    // When it was last used survives a replacement: the stream after the append says.
    const after = await readEnvironment(this.eventStore, organization);
    return events.flatMap((event) => {
      if (event.type !== 'EnvironmentVariableSet') return [];
      const stored = after.variables.get(event.data.name);
      const lastUsedAt = stored?.variableId === event.data.variableId ? stored.lastUsedAt : null;
      return [variableView({ ...event.data, lastUsedAt })];
    });
  }
}

/** A name twice in one request would make its value depend on the order: refused, at the second one. */
function refuseDuplicates(variables: VariableInput[]): void {
  const seen = new Set<string>();
  const issues = variables.flatMap(({ name }, index) => {
    if (!seen.has(name)) {
      seen.add(name);
      return [];
    }
    return [{ _tag: 'Refinement' as const, path: ['variables', index, 'name'], message: `"${name}" is set more than once in this request` }];
  });
  if (issues.length > 0) throw new DecodeError(issues);
}

/** A secret too short to redact is refused, naming the variable and never echoing its value. */
function refuseShortSecrets(variables: VariableInput[]): void {
  const issues = variables.flatMap(({ name, value, secret }, index) => {
    if (!secret || !tooShortForASecret(value)) return [];
    const message = `"${name}" is a secret: its value must be at least ${MIN_SECRET_VALUE_LENGTH} characters (set "secret": false for a value that is not one)`;
    return [{ _tag: 'Refinement' as const, path: ['variables', index, 'value'], message }];
  });
  if (issues.length > 0) throw new DecodeError(issues);
}
