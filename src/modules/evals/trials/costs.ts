import type { TrialUsage } from '#trial-runner';
import type { UserModelUse } from '#trial-runner';
import type { AgentModelUse, JudgeModelUse } from '#trial-runner';
import { findModel } from '../models/model-catalogue';

export type CostClassification = 'actual' | 'allocated' | 'estimate' | 'included' | 'managed' | 'unknown' | 'simulated-user' | 'judge' | 'model';
export type CostComponentName = 'harness' | 'model' | 'sandbox' | 'platform' | 'judge' | 'user';

export interface CostComponent {
  component: CostComponentName;
  classification: CostClassification;
  /** Null when unpriced, never 0 for a price that is not known. */
  usd: number | null;
  source: string;
  explanation: string;
  detail: Record<string, unknown>;
}

export interface CostRecord {
  knownActualUsd: number;
  allocatedUsd: number;
  estimatedEquivalentUsd: number;
  incomplete: boolean;
  components: CostComponent[];
  laterComponents: CostComponent[];
}

export interface TrialCostInput {
  harness: string;
  model: string;
  sandbox: string | null;
  usage: TrialUsage | null;
  hasSimulatedUser: boolean;
  /** The simulated user's model calls (absent or null: none was made). */
  userModel?: UserModelUse | null;
  /** The LLM judge's model calls (absent or null: none was made). */
  judgeModel?: JudgeModelUse | null;
  /** The agent's calls through the model gateway (absent or null: the agent did not use the gateway). */
  agentModel?: AgentModelUse | null;
}

const REMOTE_SANDBOX = /^sandbox_kind_\d$/;

/** A trial's costs, kept apart by classification; the model's is an estimate from the catalogue. */
export function trialCosts(input: TrialCostInput): CostRecord {
  const components: CostComponent[] = [
    {
      component: 'harness',
      classification: 'included',
      usd: null,
      source: 'assay',
      explanation: 'The harness runs on this server at no separate charge.',
      detail: { harness: input.harness },
    },
    modelCost(input),
    sandboxCost(input.sandbox),
    { component: 'platform', classification: 'included', usd: null, source: 'assay', explanation: 'Running the trial on this server is included.', detail: {} },
    judgeCost(input.judgeModel ?? null),
    userCost(input.hasSimulatedUser, input.userModel ?? null),
  ];
  return totals(components);
}

function modelCost({ harness, model, usage, agentModel }: TrialCostInput): CostComponent {
  if (agentModel) return gatewayCost(agentModel);
  if (harness === 'command' && !usage) {
    return {
      component: 'model',
      classification: 'managed',
      usd: null,
      source: 'command',
      explanation: 'The command harness calls its model itself; Assay sees no usage to price.',
      detail: { model },
    };
  }
  const entry = findModel(harness, model);
  if (!usage || !entry) {
    const why = !usage ? 'the harness reported no token usage' : `"${model}" is not in the model catalogue of ${harness}`;
    return { component: 'model', classification: 'unknown', usd: null, source: 'model-catalogue', explanation: `Unpriced: ${why}.`, detail: { model } };
  }
  const prices = entry.prices;
  const usd =
    (usage.inputTokens * prices.inputPerMillionUsd +
      usage.outputTokens * prices.outputPerMillionUsd +
      usage.cacheReadTokens * prices.cacheReadPerMillionUsd +
      usage.cacheWriteTokens * prices.cacheWritePerMillionUsd) /
    1_000_000;
  return {
    component: 'model',
    classification: 'estimate',
    usd: round(usd),
    source: 'model-catalogue',
    explanation: `Estimated from the reported token usage at ${entry.displayName}'s list prices.`,
    detail: { model, usage, prices },
  };
}

/**
 * The agent's calls through the model gateway, metered by the service itself: a class of their
 * own (`model`), priced from the configuration's price table (an estimate); a model without a
 * price leaves the record incomplete.
 */
function gatewayCost(use: AgentModelUse): CostComponent {
  const { provider, models, calls, inputTokens, outputTokens, cacheReadTokens, cacheWriteTokens, totalTokens, usd } = use;
  const called = `${calls} model call${calls === 1 ? '' : 's'} through the gateway to ${provider}${models.length > 0 ? ` (${models.join(', ')})` : ''}`;
  return {
    component: 'model',
    classification: 'model',
    usd: usd === null ? null : round(usd),
    source: 'gateway',
    explanation:
      usd === null ? `Unpriced: ${called}, a model without a price in the configuration's price table.` : `Metered: ${called}, at the configured prices.`,
    detail: {
      provider,
      models,
      calls,
      inputTokens,
      outputTokens,
      cacheReadTokens,
      cacheWriteTokens,
      totalTokens,
      ...(use.reported ? { reported: use.reported } : {}),
    },
  };
}

/**
 * The LLM judge's model calls: a class of their own (`judge`), like the simulated user's, priced
 * from the configuration's price table (an estimate); a model without a price leaves the record
 * incomplete.
 */
function judgeCost(use: JudgeModelUse | null): CostComponent {
  if (use === null) {
    return { component: 'judge', classification: 'included', usd: null, source: 'assay', explanation: 'No model judged this trial.', detail: {} };
  }
  const { provider, models, calls, inputTokens, outputTokens, cacheReadTokens, cacheWriteTokens, totalTokens, usd } = use;
  const called = `${calls} judge call${calls === 1 ? '' : 's'} to ${models.join(', ')}`;
  return {
    component: 'judge',
    classification: 'judge',
    usd: usd === null ? null : round(usd),
    source: provider,
    explanation:
      usd === null ? `Unpriced: ${called}, a model without a price in the configuration's price table.` : `Estimated: ${called}, at the configured prices.`,
    detail: { provider, models, calls, inputTokens, outputTokens, cacheReadTokens, cacheWriteTokens, totalTokens },
  };
}

function sandboxCost(sandbox: string | null): CostComponent {
  if (sandbox && REMOTE_SANDBOX.test(sandbox)) {
    return {
      component: 'sandbox',
      classification: 'unknown',
      usd: null,
      source: sandbox,
      explanation: 'The remote sandbox vendor reports no price to Assay.',
      detail: { sandbox },
    };
  }
  return {
    component: 'sandbox',
    classification: 'included',
    usd: null,
    source: 'assay',
    explanation: 'The sandbox runs on this server.',
    detail: { sandbox: sandbox ?? 'default' },
  };
}

/**
 * The simulated user's model calls: a class of their own, never mixed with the agent's usage,
 * priced from the configuration's price table (an estimate); a model without a price leaves the
 * record incomplete.
 */
function userCost(simulated: boolean, use: UserModelUse | null): CostComponent {
  if (!simulated) {
    return { component: 'user', classification: 'included', usd: null, source: 'assay', explanation: 'No simulated user took part.', detail: {} };
  }
  if (use === null) {
    return {
      component: 'user',
      classification: 'simulated-user',
      usd: 0,
      source: 'assay',
      explanation: 'The simulated user made no model calls in this trial.',
      detail: { calls: 0 },
    };
  }
  const { provider, model, calls, inputTokens, outputTokens, cacheReadTokens, cacheWriteTokens, totalTokens, usd } = use;
  return {
    component: 'user',
    classification: 'simulated-user',
    usd: usd === null ? null : round(usd),
    source: provider,
    explanation:
      usd === null
        ? `Unpriced: "${model}" has no price in the configuration's price table (prices.${model}).`
        : `Estimated from the simulated user's token usage at the configured prices of "${model}".`,
    detail: { provider, model, calls, inputTokens, outputTokens, cacheReadTokens, cacheWriteTokens, totalTokens },
  };
}

function totals(components: CostComponent[]): CostRecord {
  const sum = (classification: CostClassification) =>
    round(components.filter((c) => c.classification === classification).reduce((total, c) => total + (c.usd ?? 0), 0));
  return {
    knownActualUsd: sum('actual'),
    allocatedUsd: sum('allocated'),
    // The simulated user's and the judge's prices come from the configuration's table: estimates too.
    estimatedEquivalentUsd: round(sum('estimate') + sum('simulated-user') + sum('judge') + sum('model')),
    incomplete: components.some((c) => c.classification === 'unknown' || (MODEL_CALLS.has(c.classification) && c.usd === null)),
    components,
    laterComponents: [],
  };
}

/** Adds a run's trials' cost records; each component's detail counts the trials added. */
export function sumCosts(trialRecords: readonly CostRecord[]): CostRecord {
  return addCosts(trialRecords, (component) => ({ trials: 1, ...tokenCounts(component) }));
}

/** Adds a batch's runs' cost records; each component's detail counts the runs and their trials. */
export function sumRunCosts(runRecords: readonly CostRecord[]): CostRecord {
  return addCosts(runRecords, (component) => ({
    runs: 1,
    trials: typeof component.detail.trials === 'number' ? component.detail.trials : 0,
    ...tokenCounts(component),
  }));
}

/** Component by component and class by class; the detail adds up what `counted` says each holds. */
function addCosts(records: readonly CostRecord[], counted: (component: CostComponent) => Record<string, number>): CostRecord {
  const merged = new Map<string, CostComponent>();
  for (const component of records.flatMap((record) => record.components)) {
    const key = `${component.component}/${component.classification}`;
    const known = merged.get(key);
    const counts = counted(component);
    if (!known) merged.set(key, { ...component, detail: counts });
    else {
      const usd = known.usd === null && component.usd === null ? null : (known.usd ?? 0) + (component.usd ?? 0);
      merged.set(key, { ...known, usd: usd === null ? null : round(usd), detail: addCounts(known.detail, counts) });
    }
  }
  return totals([...merged.values()]);
}

/** The classes of the service's own model calls (priced from the configuration, counted in tokens). */
const MODEL_CALLS: ReadonlySet<CostClassification> = new Set(['simulated-user', 'judge', 'model']);

const USER_COUNTS = ['calls', 'inputTokens', 'outputTokens', 'cacheReadTokens', 'cacheWriteTokens', 'totalTokens'] as const;

/** The simulated user's calls and tokens add up across trials and runs, so its detail stays readable. */
function tokenCounts(component: CostComponent): Record<string, number> {
  if (!MODEL_CALLS.has(component.classification)) return {};
  return Object.fromEntries(USER_COUNTS.flatMap((name) => (typeof component.detail[name] === 'number' ? [[name, component.detail[name]]] : [])));
}

function addCounts(known: Record<string, unknown>, counts: Record<string, number>): Record<string, number> {
  return Object.fromEntries(Object.entries(counts).map(([name, count]) => [name, ((known[name] as number | undefined) ?? 0) + count]));
}

/** The cost record of nothing yet (a run before its first verdict). */
export const emptyCosts = (): CostRecord => totals([]);

function round(usd: number): number {
  return Math.round(usd * 1e8) / 1e8;
}
