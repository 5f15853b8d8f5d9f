import { BadRequest, Conflict } from '#shared/errors';
import type { EvalSource } from '#shared/eval-definitions';
import type { ExecutionPolicy } from '../shared/execution-policy';
import { repositoryUrlProblem } from '#trial-runner';
import type { BatchPlan } from './start-rules';

/**
 * The start rules that depend on this server's execution settings: a repository source the server
 * clones must be one the operator allows (400, naming the field and the setting), and no variant
 * may run unsandboxed without the operator's consent (409: the request is fine, this server
 * cannot run it).
 */
export function checkExecutionRules(plan: BatchPlan, policy: ExecutionPolicy): void {
  // Only what this server clones is its to allow: a batch whose every variant is `local` clones on
  // the local runner's machine, under that machine's own rules (its repositories, by default).
  if (plan.variants.some((variant) => variant.sandbox !== 'local')) {
    checkRepository(plan.suite.source, 'suite.source.url', policy);
    plan.cases.forEach((evalCase, index) => checkRepository(evalCase.source, `cases[${index}].source.url`, policy));
  }
  // A `local` variant's provider is the local runner's, from its own ASSAY_CONFIG.
  plan.variants.forEach((variant, index) => {
    if (variant.sandbox !== 'local') checkProvider(variant.profile?.provider, `variants[${index}].profile.provider`, policy);
  });
  if (policy.allowUnsandboxed) return;
  plan.variants.forEach((variant, index) => {
    if (policy.driverFor(variant.sandbox) === 'process') {
      const which = variant.sandbox === null ? 'variants without a sandbox' : variant.sandbox;
      throw new Conflict(
        `variants[${index}]: ${which} would run as plain processes without isolation on this server, which the operator has not allowed: ` +
          'install bubblewrap on the server, or set allowUnsandboxed: true in its ASSAY_CONFIG.',
      );
    }
  });
}

/** The variants of a started batch that run as plain processes: logged loudly per batch. */
export function unsandboxedVariants(plan: BatchPlan, policy: ExecutionPolicy): number[] {
  return plan.variants.flatMap((variant, index) => (policy.driverFor(variant.sandbox) === 'process' ? [index] : []));
}

/** A profile's provider must be one the server has: its agent reaches it through the model gateway. */
function checkProvider(provider: string | undefined, where: string, policy: ExecutionPolicy): void {
  if (provider === undefined || policy.providers.includes(provider)) return;
  const configured = policy.providers.length === 0 ? 'none is configured' : `configured: ${policy.providers.join(', ')}`;
  throw new BadRequest(`${where} names the model provider "${provider}", which this server does not have (${configured} in its ASSAY_CONFIG providers).`);
}

function checkRepository(source: EvalSource | null, where: string, policy: ExecutionPolicy): void {
  if (source?.kind !== 'repo') return;
  const problem = repositoryUrlProblem(source.url, policy.repositories);
  if (problem !== null) throw new BadRequest(`${where} ${problem}.`);
}
