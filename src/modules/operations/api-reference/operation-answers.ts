import type { RouteAnswer } from '#infrastructure/http/openapi/openapi-document';
import { ANALYTICS_ANSWERS } from './responses/analytics-answers';
import { AUDIT_ANSWERS } from './responses/audit-answers';
import { EVALS_ANSWERS, RUNNER_ANSWERS } from './responses/evals-answers';
import { OTHER_ANSWERS } from './responses/other-answers';
import { WATCH_ANSWER } from './responses/watch-answer';
import { SERVICE_ANSWERS } from './service-answers';

/** Every route's answer, by operation name or `GET /path`: the one place the document's responses are written. */
export const OPERATION_ANSWERS: Readonly<Record<string, RouteAnswer>> = {
  ...EVALS_ANSWERS,
  ...RUNNER_ANSWERS,
  ...OTHER_ANSWERS,
  ...AUDIT_ANSWERS,
  ...ANALYTICS_ANSWERS,
  ...SERVICE_ANSWERS,
  'evals.batches.watch': WATCH_ANSWER,
};
