import { verifyWorkspace } from '../trial-turns';
import type { TrialSession } from '../trial-session';
import { scored, TrialVoid, Verdict } from '../trial-verdict';
import { validatorContext } from './module-context';
import { runValidator } from './run-validator';

/**
 * The trial's verdict once the agent is done: verify, then the validator, when the case gives
 * them. It passes when verify passes and every validation passes; it fails when one of them
 * fails; a validation in error (the validator threw, timed out, broke the protocol, or its judge
 * failed) voids it, naming the validator.
 */
export async function decideTrial(session: TrialSession, env: Record<string, string>): Promise<Verdict> {
  const { verify, validator } = session.spec;
  const hasVerify = verify !== null && verify.trim() !== '';
  if (!hasVerify && validator === null) throw new TrialVoid('the case has neither a verify command nor a validator', ['verify']);
  // Read before verify runs: the agent's output is then the trajectory's last command.
  const context = validatorContext(session);
  const verified = hasVerify ? await verifyWorkspace(session, env) : scored(true);
  if (validator === null) return verified;
  const startedAt = session.settings.clock.now().getTime();
  const records = await runValidator(session, context);
  session.verifyMs += session.settings.clock.now().getTime() - startedAt;
  session.validations.push(...records);
  const broken = records.find((record) => record.status === 'error');
  if (broken !== undefined) throw new TrialVoid(`validator "${broken.name}" ${broken.message ?? 'failed to run'}`, ['validator']);
  if (verified.status !== 'passed') return verified;
  const failed = records.find((record) => record.status === 'failed');
  if (failed === undefined) return scored(true);
  return { ...scored(false), failure: `validation "${failed.name}" failed${failed.message === null ? '' : `: ${failed.message}`}` };
}
