/** Every benchmark suite, in the order `npm run bench` runs them: a new suite is an import and an entry. */
import { agentsSuite } from './agents.bench';
import { analyticsSuite } from './analytics.bench';
import { appendsSuite } from './event-store.bench';
import { conversationSuite } from './conversation.bench';
import { eventIdsSuite } from './event-ids.bench';
import { evalsReadSuite } from './evals-read.bench';
import { gatewaySuite } from './gateway.bench';
import { lagSuite } from './projection-lag.bench';
import { orchestrationSuite } from './orchestration.bench';
import { replaySuite } from './replay.bench';
import { peersSuite } from './peers.bench';
import { productionSuite } from './production.bench';
import { scaleSuite } from './scale.bench';
import { throughputSuite } from './throughput.bench';
import type { Suite } from './support/suite';

export const suites: readonly Suite[] = [
  appendsSuite,
  eventIdsSuite,
  replaySuite,
  lagSuite,
  orchestrationSuite,
  conversationSuite,
  gatewaySuite,
  evalsReadSuite,
  scaleSuite,
  analyticsSuite,
  throughputSuite,
  peersSuite,
  agentsSuite,
  productionSuite,
];
