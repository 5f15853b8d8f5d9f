import type { DomainEvent } from '#infrastructure/event-store/stream-command';
import type { Decider } from '#shared/decider';
import { canonicalJson } from '#shared/hash';
import type { EvalSuite } from '#shared/eval-definitions';

/** Stored in `suite-{org}.{suiteId}`: the suite's definition as it was last run, when it changed. */
export type SuiteDefined = DomainEvent<'SuiteDefined', { organization: string; suite: EvalSuite; definedAt: string }>;

export const suiteStream = (organization: string, suiteId: string) => `suite-${organization}.${suiteId}`;

export const suiteDecider: Decider<{ organization: string; suite: EvalSuite; now: Date }, EvalSuite | null, SuiteDefined> = {
  initialState: null,
  evolve: (_state, event) => event.data.suite,
  decide(command, state) {
    if (state && canonicalJson(state) === canonicalJson(command.suite)) return [];
    return [{ type: 'SuiteDefined', data: { organization: command.organization, suite: command.suite, definedAt: command.now.toISOString() } }];
  },
};
