import { PERMISSIONS } from '#shared/permissions';
import { issueApiKey } from '#modules/auth/api-keys/api-key-issuer';
import { ensureOrganization } from '#modules/auth/organizations/organization';
import type { Runtime } from './runtime';

/**
 * Headless bootstrap: ASSAY_INIT_ORG and ASSAY_INIT_API_KEY create that organization and that
 * key with every permission. Idempotent: a restart finds both and appends nothing.
 */
export async function bootstrapInitialKey(runtime: Runtime): Promise<void> {
  const { initOrg, initApiKey } = runtime.config;
  if (!initOrg || !initApiKey) return;
  const now = new Date();
  const metadata = { organization: initOrg, actor: 'system:bootstrap', correlationId: 'bootstrap', causationId: 'bootstrap' };
  const created = await ensureOrganization(runtime.eventStore, initOrg, now, metadata);
  const issued = await issueApiKey(runtime.eventStore, {
    organization: initOrg,
    name: 'initial key (ASSAY_INIT_API_KEY)',
    permissions: [...PERMISSIONS],
    now,
    metadata,
    key: initApiKey,
  });
  if (issued.position !== null) await runtime.projections.waitFor(issued.position, 10000);
  runtime.logger.info('initial organization and key ready', {
    organization: initOrg,
    keyId: issued.id,
    organizationCreated: created,
    keyIssued: issued.position !== null,
  });
}
