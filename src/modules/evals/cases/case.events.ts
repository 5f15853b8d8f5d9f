import type { DomainEvent } from '#infrastructure/event-store/stream-command';
import type { EvalCase, VariantDefinition } from '#shared/eval-definitions';

/** Stored in `case-{org}.{caseId}`: a new version whenever the definition hash changes. */
export type CaseVersionAppended = DomainEvent<
  'CaseVersionAppended',
  {
    organization: string;
    caseId: string;
    suiteId: string;
    definition: EvalCase;
    /** The named parts the hash covers, kept to name what the next version changes. */
    parts: Array<[string, string]>;
    definitionHash: string;
    changes: string[];
    author: string;
    createdAt: string;
  }
>;

/** A variant the case runs on: first seen, or its definition (a named profile's content) changed. */
export type CaseVariantDefined = DomainEvent<
  'CaseVariantDefined',
  {
    organization: string;
    caseId: string;
    variantId: string;
    variant: VariantDefinition;
    userModel: string | null;
    definedAt: string;
  }
>;

export type CaseEvent = CaseVersionAppended | CaseVariantDefined;

export const caseStream = (organization: string, caseId: string) => `case-${organization}.${caseId}`;
