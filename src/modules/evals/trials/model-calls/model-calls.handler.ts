import { Inject } from '@nestjs/common';
import { IQueryHandler, QueryHandler } from '@nestjs/cqrs';
import { EVENT_STORE, EventStore } from '#infrastructure/event-store/event-store.port';
import { NotFound } from '#shared/errors';
import type { ModelCallBodies, TrajectoryModelCall } from '#trial-runner';
import { TrialModelCalled, trialStream } from '../trial.events';
import { ListModelCalls } from './model-calls.query';

/** A model call of a trial as `evals.trials.modelCalls` answers it: the trajectory entry, and its bodies when they were recorded. */
export type ModelCallView = TrajectoryModelCall & { request: string | null; response: string | null; truncated: boolean };

/**
 * A trial's calls through the model gateway, read from its own stream (a trial has few; the
 * bodies, recorded with `gateway.recordBodies`, live with their events, large ones in the blob
 * store, and no read model holds them).
 */
@QueryHandler(ListModelCalls)
export class ListModelCallsHandler implements IQueryHandler<ListModelCalls, { calls: ModelCallView[] }> {
  constructor(@Inject(EVENT_STORE) private readonly eventStore: EventStore) {}

  async execute({ organization, trialId }: ListModelCalls): Promise<{ calls: ModelCallView[] }> {
    const events = await this.eventStore.readStream(trialStream(trialId));
    const first = events.at(0);
    if (!first || (first.data as { organization?: string }).organization !== organization) throw new NotFound(`Trial "${trialId}" does not exist.`);
    const calls = events
      .filter((event) => event.type === 'TrialModelCalled')
      .map((event) => {
        const { entry, bodies } = event.data as TrialModelCalled['data'];
        return view(entry, bodies);
      });
    return { calls };
  }
}

function view(entry: TrajectoryModelCall, bodies: ModelCallBodies | undefined): ModelCallView {
  return { ...entry, request: bodies?.request ?? null, response: bodies?.response ?? null, truncated: bodies?.truncated ?? false };
}
