import type { Decider } from '#shared/decider';
import { canonicalJson } from '#shared/hash';
import type { EvalCase, VariantDefinition } from '#shared/eval-definitions';
import { changedParts, definitionHash } from '../shared/identity';
import type { CaseEvent } from './case.events';

export interface CaseVariant {
  variantId: string;
  variant: VariantDefinition;
  userModel: string | null;
}

export interface CaseState {
  organization: string | null;
  suiteId: string | null;
  latest: { definition: EvalCase; parts: Array<[string, string]>; definitionHash: string } | null;
  variants: CaseVariant[];
}

/** A start records the case's definition and the variants it runs on. */
export interface RecordCaseRun {
  type: 'RecordCaseRun';
  organization: string;
  suiteId: string;
  definition: EvalCase;
  parts: Array<[string, string]>;
  variants: CaseVariant[];
  author: string;
  now: Date;
}

export const caseDecider: Decider<RecordCaseRun, CaseState, CaseEvent> = {
  initialState: { organization: null, suiteId: null, latest: null, variants: [] },

  evolve(state, event) {
    if (event.type === 'CaseVersionAppended') {
      const { organization, suiteId, definition, parts } = event.data;
      return { ...state, organization, suiteId, latest: { definition, parts, definitionHash: event.data.definitionHash } };
    }
    const { variantId, variant, userModel } = event.data;
    const others = state.variants.filter((known) => known.variantId !== variantId);
    return { ...state, variants: [...others, { variantId, variant, userModel }] };
  },

  decide(command, state) {
    const events: CaseEvent[] = [];
    const hash = definitionHash(command.parts);
    const createdAt = command.now.toISOString();
    const { organization, suiteId, definition, parts, author } = command;
    if (state.latest?.definitionHash !== hash || state.suiteId !== suiteId) {
      const changes = state.latest ? changedParts(state.latest.parts, parts) : [];
      events.push({
        type: 'CaseVersionAppended',
        data: { organization, caseId: definition.id, suiteId, definition, parts, definitionHash: hash, changes, author, createdAt },
      });
    }
    for (const candidate of command.variants) {
      const known = state.variants.find((variant) => variant.variantId === candidate.variantId);
      if (known && canonicalJson(known.variant) === canonicalJson(candidate.variant)) continue;
      events.push({ type: 'CaseVariantDefined', data: { organization, caseId: definition.id, ...candidate, definedAt: createdAt } });
    }
    return events;
  },
};
