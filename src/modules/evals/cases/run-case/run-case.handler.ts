import { Inject } from '@nestjs/common';
import { CommandHandler, ICommandHandler } from '@nestjs/cqrs';
import { EVENT_STORE, EventStore } from '#infrastructure/event-store/event-store.port';
import { toDomainEvent } from '#infrastructure/event-store/stream-command';
import { foldEvents } from '#shared/decider';
import { BadRequest, NotFound } from '#shared/errors';
import { variantLabel, variantLabels } from '#shared/variant-label';
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
    const named = variantIds ? state.variants.filter((variant) => variantIds.includes(variant.variantId)) : state.variants;
    // A local variant runs on its caller's machine (assay eval --local): the server cannot run it again.
    const local = named.filter((variant) => variant.variant.sandbox === 'local');
    if (variantIds && local.length > 0) {
      throw new BadRequest(`${variantLabel(local[0].variant)} runs on its caller's machine (sandbox local): run it again with assay eval --local.`);
    }
    const chosen = named.filter((variant) => variant.variant.sandbox !== 'local');
    if (chosen.length === 0) {
      throw new BadRequest(`Every variant of case "${caseId}" runs on its caller's machine (sandbox local): run it again with assay eval --local.`);
    }
    const labels = variantLabels(chosen.map((variant) => variant.variant));
    try {
      return await this.starter.start({ ...start, context, plan: { suite, cases: [state.latest.definition], variants: chosen.map((v) => v.variant), trials } });
    } catch (error) {
      // The start names variants by their place in its plan, which the caller never saw: by their names instead.
      if (error instanceof BadRequest)
        throw new BadRequest(error.message.replace(/variants\[(\d+)\]/g, (whole, index: string) => labels[Number(index)] ?? whole));
      throw error;
    }
  }
}
