import type { ExecutionConfig } from '../execution-config';
import { providerIntegration, resolveProviderKey } from '../providers/model-client';
import type { TrialSpec } from '../contract';
import { ConversationUser, ScriptedConversationUser } from './conversation-user';
import { SimulatedConversationUser } from './simulated-user';

/**
 * The user of the trial's case: none (one turn), its scripted replies, or a simulated user on
 * the provider the configuration gives its harness (`users.harness_kind_N`, else `users.default`),
 * with its model (else `users.defaultModel`) and the provider's key (the server variable, else
 * the organization's connector). A gap in any of these is the reason the trial cannot run.
 */
export function conversationUser(
  spec: TrialSpec,
  config: ExecutionConfig,
  env: NodeJS.ProcessEnv = process.env,
): { user: ConversationUser | null; apiKey: string | null } | { failure: string } {
  const wanted = spec.user;
  if (wanted === null) return { user: null, apiKey: null };
  if (wanted.kind === 'scripted') return { user: new ScriptedConversationUser(wanted), apiKey: null };
  const providerName = wanted.harness === undefined ? config.users.defaultProvider : config.users.byHarness[wanted.harness];
  if (providerName === null || providerName === undefined) {
    const key = wanted.harness === undefined ? 'users.default' : `users.${wanted.harness}`;
    return { failure: `the simulated user has no model provider on this server: set ${key} (and its provider under providers) in ASSAY_CONFIG` };
  }
  const provider = config.providers[providerName];
  const resolved = resolveProviderKey(provider, spec.providerKeys[providerIntegration(provider.protocol)], env);
  if ('failure' in resolved) return { failure: `the simulated user cannot call its model: ${resolved.failure}` };
  const model = wanted.model ?? config.users.defaultModel;
  return { user: new SimulatedConversationUser(wanted, { provider, model, apiKey: resolved.key, prices: config.prices }), apiKey: resolved.key };
}

/** The simulated user's model as the variant shows it (`userModel`): the case's, else the configured default. */
export function userModelOf(spec: Pick<TrialSpec, 'user'>, config: Pick<ExecutionConfig, 'users'>): string | null {
  return spec.user?.kind === 'simulated' ? (spec.user.model ?? config.users.defaultModel) : null;
}
