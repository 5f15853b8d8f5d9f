import type { Projection } from './infrastructure/processing/projection';
import { apiKeyProjection } from './modules/auth/api-keys/api-key.projection';
import { connectionProjection } from './modules/connectors/connection.projection';
import { environmentProjection } from './modules/environment/environment.projection';
import { batchProjection } from './modules/evals/batches/batch.projection';
import { runProjection } from './modules/evals/runs/run.projection';
import { promptProjections } from './modules/prompts/prompt.projections';

/** Every projection of the service: what the runner feeds, and what a rebuild replays. */
export const allProjections: readonly Projection[] = [apiKeyProjection, batchProjection, runProjection, ...promptProjections, connectionProjection, environmentProjection];
