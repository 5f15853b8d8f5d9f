import { Inject } from '@nestjs/common';
import { CommandHandler, ICommandHandler } from '@nestjs/cqrs';
import { EVENT_STORE, EventStore } from '#infrastructure/event-store/event-store.port';
import { toDomainEvent } from '#infrastructure/event-store/stream-command';
import { foldEvents } from '#shared/decider';
import { BadRequest, NotFound } from '#shared/errors';
import { BatchStarter, StartedBatch } from '../../batches/batch-starter';
import { suiteDecider, SuiteDefined, suiteStream } from '../../suites/suite.events';
import { caseDecider } from '../case.decider';
import { CaseEvent, caseStream } from '../case.events';
import { RunCaseCommand } from './run-case.command';

/** Starts a batch of a stored case's newest version on the variants it has run on. */
@CommandHandler(RunCaseCommand)
export class RunCaseHandler implements ICommandHandler<RunCaseCommand> {
  constructor(
    @Inject(EVENT_STORE) private readonly eventStore: EventStore,
    private readonly starter: BatchStarter,
  ) {}

  async execute({ payload, context }: RunCaseCommand): Promise<StartedBatch> {
    const { caseId, trials, variantIds, start } = payload;
    const organization = context.caller.organization;
    const events = (await this.eventStore.readStream(caseStream(organization, caseId))).map(toDomainEvent) as CaseEvent[];
    const state = foldEvents(caseDecider, events);
    if (!state.latest || !state.suiteId) throw new NotFound(`Case "${caseId}" does not exist.`);
    const suiteEvents = (await this.eventStore.readStream(suiteStream(organization, state.suiteId))).map(toDomainEvent) as SuiteDefined[];
    const suite = foldEvents(suiteDecider, suiteEvents);
    if (!suite) throw new NotFound(`The suite of case "${caseId}" does not exist.`);
    const unknown = (variantIds ?? []).filter((id) => !state.variants.some((variant) => variant.variantId === id));
    if (unknown.length > 0) {
      throw new BadRequest(`"${unknown[0]}" is not a variant of case "${caseId}"; evals.cases.get lists its variants.`);
    }
    const chosen = variantIds ? state.variants.filter((variant) => variantIds.includes(variant.variantId)) : state.variants;
    return this.starter.start({ ...start, context, plan: { suite, cases: [state.latest.definition], variants: chosen.map((v) => v.variant), trials } });
  }
}
