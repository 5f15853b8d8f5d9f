import type { ProviderModelEntry } from '../contract';
import type { ProviderSettings } from './provider-config';

/**
 * Each configured provider's models, in configuration order: its `models` list, then the
 * simulated users' default model under `users.default`'s provider and the judges' model under
 * theirs; each model once per provider.
 */
export function providerModels(settings: Pick<ProviderSettings, 'providers' | 'users' | 'judges'>): ProviderModelEntry[] {
  const byProvider = new Map<string, Set<string>>(Object.values(settings.providers).map((provider) => [provider.name, new Set(provider.models)]));
  if (settings.users.defaultProvider !== null) byProvider.get(settings.users.defaultProvider)?.add(settings.users.defaultModel);
  if (settings.judges !== null) byProvider.get(settings.judges.provider)?.add(settings.judges.model);
  return [...byProvider].flatMap(([name, models]) => {
    const summary = `Through the "${name}" provider (${settings.providers[name].protocol}): for simulated users and judges`;
    return [...models].map((model) => ({ id: model, displayName: model, vendor: name, summary }));
  });
}
