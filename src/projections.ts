import type { Projection } from '#infrastructure/processing/projection';
import { analyticsProjection } from '#modules/analytics/analytics.projection';
import { apiKeyProjection } from '#modules/auth/api-keys/api-key.projection';
import { connectionProjection } from '#modules/connectors/connection.projection';
import { environmentProjection } from '#modules/environment/environment.projection';
import { batchProjection } from '#modules/evals/batches/batch.projection';
import { batchTotalsProjection } from '#modules/evals/batches/batch-totals.projection';
import { openBatchesProjection } from '#modules/evals/orchestration/open-batches.projection';
import { caseProjection } from '#modules/evals/cases/case.projection';
import { runProjection } from '#modules/evals/runs/run.projection';
import { runTotalsProjection } from '#modules/evals/runs/run-totals.projection';
import { trialDetailProjection } from '#modules/evals/runs/trial-detail.projection';
import { suiteProjection } from '#modules/evals/suites/suite.projection';
import { promptProjections } from '#modules/prompts/prompt.projections';

/**
 * Every projection of the service: what the runner feeds, and what a rebuild replays. In this
 * order: the case projection reads run documents, so it comes after the run projection.
 */
export const allProjections: readonly Projection[] = [
  apiKeyProjection,
  batchProjection,
  batchTotalsProjection,
  openBatchesProjection,
  runProjection,
  runTotalsProjection,
  trialDetailProjection,
  caseProjection,
  suiteProjection,
  ...promptProjections,
  connectionProjection,
  environmentProjection,
  analyticsProjection,
];
