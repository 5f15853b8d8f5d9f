import { Conflict } from '#shared/errors';
import type { EvidenceRequirement } from './prompt-policy';

/** What a batch shows about a prompt version, gathered by the promote handler. */
export interface BatchFacts {
  batchId: string;
  status: 'running' | 'finished' | 'failed';
  /** The prompt versions its suite prompt named, resolved at start. */
  prompts: Array<{ promptId: string; version: number }>;
  scored: number;
  passed: number;
}

/** What the channel-promoted event records of the evidence. */
export interface PromotionEvidence {
  batchId: string;
  scored: number;
  passed: number;
  /** passed / scored, or null when nothing was scored. */
  passRate: number | null;
}

export function evidenceOf(batch: BatchFacts): PromotionEvidence {
  return { batchId: batch.batchId, scored: batch.scored, passed: batch.passed, passRate: batch.scored === 0 ? null : batch.passed / batch.scored };
}

/**
 * The gate of a channel with a policy: the batch finished, ran this prompt version, and met the
 * bar. Pure, so each refusal is tested alone; each says what would let the promotion through.
 */
export function checkEvidence(
  requirement: EvidenceRequirement,
  target: { promptId: string; version: number; channel: string },
  batch: BatchFacts | null,
): void {
  const gate = `Promotions to "${target.channel}" need the evidence of a finished batch that ran ${target.promptId}@${target.version} with a pass rate of at least ${requirement.minPassRate} over at least ${requirement.minTrials} scored trials`;
  if (batch === null) throw new Conflict(`${gate}: give "evidence": {"batchId": …}.`);
  if (batch.status !== 'finished') throw new Conflict(`${gate}: batch ${batch.batchId} is ${batch.status}, not finished.`);
  if (!batch.prompts.some((ran) => ran.promptId === target.promptId && ran.version === target.version)) {
    const ran = batch.prompts.map((entry) => `${entry.promptId}@${entry.version}`).join(', ') || 'no prompt version';
    throw new Conflict(`${gate}: batch ${batch.batchId} ran ${ran}; reference {{prompt:${target.promptId}@${target.version}}} in its suite prompt.`);
  }
  if (batch.scored < requirement.minTrials) throw new Conflict(`${gate}: batch ${batch.batchId} scored ${batch.scored} trials.`);
  const passRate = batch.passed / batch.scored;
  if (passRate < requirement.minPassRate) {
    throw new Conflict(`${gate}: batch ${batch.batchId} passed ${batch.passed} of ${batch.scored} scored trials (${passRate.toFixed(3)}).`);
  }
}
