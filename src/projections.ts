import type { Projection } from './infrastructure/processing/projection';
import { apiKeyProjection } from './modules/auth/api-keys/api-key.projection';

/** Every projection of the service: what the runner feeds, and what a rebuild replays. */
export const allProjections: readonly Projection[] = [apiKeyProjection];
