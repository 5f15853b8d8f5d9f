import type { Decider } from '#shared/decider';
import { BadRequest } from '#shared/errors';
import type { DomainEvent } from '#infrastructure/event-store/stream-command';
import { Recorded, typedDocumentProjection } from '../typed-projection';
import { LATEST } from './prompt.events';

/** The bar a promotion to a channel must clear: a finished batch of that version, passing enough. */
export interface EvidenceRequirement {
  /** 0..1: passed / scored trials of the batch. */
  minPassRate: number;
  minTrials: number;
}

/** Stored in `promptpolicy-{org}`: one stream per organization, one event per change. */
export type PromptPolicySet = DomainEvent<
  'PromptPolicySet',
  {
    organization: string;
    channel: string;
    /** Null: the channel takes promotions without evidence again. */
    requireEvidence: EvidenceRequirement | null;
    actor: string;
    actorId: string;
    setAt: string;
  }
>;

export function promptPolicyStream(organization: string): string {
  return `promptpolicy-${organization}`;
}

export interface SetPromptPolicy {
  type: 'SetPromptPolicy';
  organization: string;
  channel: string;
  requireEvidence: EvidenceRequirement | null;
  actor: string;
  actorId: string;
  now: Date;
}

/** channel → its requirement (absent: none). */
export type PromptPolicyState = Record<string, EvidenceRequirement | null>;

export const promptPolicyDecider: Decider<SetPromptPolicy, PromptPolicyState, PromptPolicySet> = {
  initialState: {},
  evolve: (state, event) => ({ ...state, [event.data.channel]: event.data.requireEvidence }),
  decide(command, state) {
    if (command.channel === LATEST) throw new BadRequest('The channel "latest" is derived and never promoted: a policy on it would gate nothing.');
    const current = Object.prototype.hasOwnProperty.call(state, command.channel) ? state[command.channel] : null;
    if (JSON.stringify(current) === JSON.stringify(command.requireEvidence)) return [];
    const { organization, channel, requireEvidence, actor, actorId } = command;
    return [{ type: 'PromptPolicySet', data: { organization, channel, requireEvidence, actor, actorId, setAt: command.now.toISOString() } }];
  },
};

export const PROMPT_POLICIES = 'prompt_policies';

export type PromptPolicyDocument = {
  _id: string;
  organization: string;
  channel: string;
  requireEvidence: EvidenceRequirement | null;
  actor: string;
  setAt: string;
};

export function policyKey(organization: string, channel: string): string {
  return `${organization}.${channel}`;
}

export const promptPolicyProjection = typedDocumentProjection<PromptPolicySet, PromptPolicyDocument>({
  name: 'prompt-policies',
  collection: PROMPT_POLICIES,
  indexes: [{ keys: { organization: 1, channel: 1 } }],
  eventTypes: ['PromptPolicySet'],
  documentId: (event: Recorded<PromptPolicySet>) => policyKey(event.data.organization, event.data.channel),
  evolve(_document, event) {
    const { organization, channel, requireEvidence, actor, setAt } = event.data;
    return { _id: policyKey(organization, channel), organization, channel, requireEvidence, actor, setAt };
  },
});
