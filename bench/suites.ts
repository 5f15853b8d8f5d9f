/** Every benchmark suite, in the order `npm run bench` runs them: a new suite is an import and an entry. */
import { appendsSuite } from './event-store.bench';
import { conversationSuite } from './conversation.bench';
import { evalsReadSuite } from './evals-read.bench';
import { lagSuite } from './projection-lag.bench';
import { orchestrationSuite } from './orchestration.bench';
import { replaySuite } from './replay.bench';
import { scaleSuite } from './scale.bench';
import type { Suite } from './support/suite';

export const suites: readonly Suite[] = [appendsSuite, replaySuite, lagSuite, orchestrationSuite, conversationSuite, evalsReadSuite, scaleSuite];
