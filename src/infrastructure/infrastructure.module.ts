import { DynamicModule, Global, Module } from '@nestjs/common';
import { CLOCK, systemClock } from '#shared/clock';
import { EVENT_STORE, EventStore } from './event-store/event-store.port';
import { JsonLogger } from './logging/json-logger';
import { ProjectionRunner } from './processing/projection-runner';
import { READ_STORE, ReadStore } from './read-store/read-store.port';
import { KeyRing } from './secrets/key-ring';

/** What the composition root has opened before the application starts: one of each, for the whole process. */
export interface InfrastructureParts {
  logger: JsonLogger;
  eventStore: EventStore;
  readStore: ReadStore;
  projections: ProjectionRunner;
  /** The process's one key ring: HTTP handlers and the trial runner share its cache of data keys. */
  keyRing: KeyRing;
}

/**
 * The ports feature modules inject, bound to what the composition root opened: the stores, the
 * read models' progress, the logger, the clock and the key ring. Global, so a feature module
 * names a port and never the wiring that chose its adapter.
 */
@Global()
@Module({})
export class InfrastructureModule {
  static forRoot(parts: InfrastructureParts): DynamicModule {
    return {
      module: InfrastructureModule,
      providers: [
        { provide: EVENT_STORE, useValue: parts.eventStore },
        { provide: READ_STORE, useValue: parts.readStore },
        { provide: ProjectionRunner, useValue: parts.projections },
        { provide: JsonLogger, useValue: parts.logger },
        { provide: KeyRing, useValue: parts.keyRing },
        { provide: CLOCK, useValue: systemClock },
      ],
      exports: [EVENT_STORE, READ_STORE, ProjectionRunner, JsonLogger, KeyRing, CLOCK],
    };
  }
}
