import { Inject } from '@nestjs/common';
import { CommandHandler, ICommandHandler } from '@nestjs/cqrs';
import { EVENT_STORE, EventStore } from '#infrastructure/event-store/event-store.port';
import { READ_STORE, ReadStore } from '#infrastructure/read-store/read-store.port';
import { requestMetadata } from '#shared/caller';
import { BadGateway, BadRequest, Conflict, NotFound } from '#shared/errors';
import { newEventId, newId } from '#shared/ids';
import { addJudgeUse, configuredJudge, JudgeModelUse, JudgeSettings, Redactor, ValidationRecord } from '#trial-runner';
import { MODEL_PROVIDER_INTEGRATIONS } from '../../trials/trial-decisions';
import { TRIAL_ENVIRONMENT, TrialEnvironment } from '../../trials/trial-environment';
import { DEFAULT_JUDGE_CHOICES, DEFAULT_JUDGE_THRESHOLD } from '#shared/eval-definitions';
import { JUDGE_SETTINGS } from '../../shared/judge-settings';
import { computeDistribution, Distribution } from '../../trials/distribution';
import { RescoreFailure, judgeTrial } from './judge-trial';
import { RunRescored, rescoreStream, TrialRescored } from '../rescore.events';
import { RUNS, RunDocument } from '../run.projection';
import { runViews } from '../run-view';
import { RescoreRunCommand } from './rescore-run.command';

/** Trials judged at once: a run's judge calls overlap, without flooding the provider. */
const CONCURRENT_JUDGES = 4;

export interface Rescore {
  rescoreId: string;
  runId: string;
  validator: RescoreRunCommand['validator'];
  original: Distribution;
  rescored: Distribution;
  trials: Array<{ id: string; ordinal: number; original: string; rescored: 'passed' | 'failed' | 'void'; validations: ValidationRecord[] }>;
  judge: JudgeModelUse | null;
  rescoredAt: string;
}

@CommandHandler(RescoreRunCommand)
export class RescoreRunHandler implements ICommandHandler<RescoreRunCommand, Rescore> {
  constructor(
    @Inject(EVENT_STORE) private readonly eventStore: EventStore,
    @Inject(READ_STORE) private readonly readStore: ReadStore,
    @Inject(JUDGE_SETTINGS) private readonly settings: JudgeSettings,
    @Inject(TRIAL_ENVIRONMENT) private readonly environment: TrialEnvironment,
  ) {}

  async execute({ runId, validator, context }: RescoreRunCommand): Promise<Rescore> {
    const organization = context.caller.organization;
    const run = await this.readStore.collection<RunDocument>(RUNS).findOne({ _id: runId, organization });
    if (!run) throw new NotFound(`Run "${runId}" does not exist.`);
    if (validator.files !== undefined) {
      throw new BadRequest(
        'A rescore cannot read workspace files: the trials\' workspaces are gone once they end. Remove "files"; the judge reads the stored conversation.',
      );
    }
    if (run.status === 'running') throw new Conflict(`Run "${runId}" is still running: rescore it once it has finished.`);
    if (this.settings.judges === null) throw new Conflict('This server has no judge model: set judges ({provider, model}) in ASSAY_CONFIG to rescore.');
    const keys = (await this.environment.providerKeys?.(organization, MODEL_PROVIDER_INTEGRATIONS))?.keys ?? {};
    let use: JudgeModelUse | null = null;
    const judge = configuredJudge(this.settings, keys, (provider, model, usage) => (use = addJudgeUse(use, provider, model, usage)));
    const form = { ...validator, choices: validator.choices ?? DEFAULT_JUDGE_CHOICES, threshold: validator.threshold ?? DEFAULT_JUDGE_THRESHOLD };
    const redactor = new Redactor(Object.values(keys));
    // The conversations are in the trials' detail documents, joined as the API shows them.
    const [view] = await runViews(this.readStore, organization, [run]);
    const judged = view.trials.filter((trial) => trial.status === 'passed' || trial.status === 'failed');
    const outcomes = new Map<string, { status: 'passed' | 'failed' | 'void'; validations: ValidationRecord[] }>();
    try {
      for (let start = 0; start < judged.length; start += CONCURRENT_JUDGES) {
        const slice = judged.slice(start, start + CONCURRENT_JUDGES);
        const results = await Promise.all(
          slice.map((trial) => judgeTrial({ judge, form, validator, redactor, trial, prompt: run.setup.prompt, now: () => Date.now() })),
        );
        slice.forEach((trial, index) => outcomes.set(trial.id, results[index]));
      }
    } catch (error) {
      if (!(error instanceof RescoreFailure)) throw error;
      if (error.failedOn === 'provider') throw new BadGateway(`The judge could not be asked, and nothing was recorded: ${error.message}. Retry the rescore.`);
      throw new Conflict(`The judge cannot be called: ${error.message}.`);
    }
    return this.record(run, validator, outcomes, use, context);
  }

  /** One append: the rescore and every trial's new validations, or nothing. */
  private async record(
    run: RunDocument,
    validator: RescoreRunCommand['validator'],
    outcomes: Map<string, { status: 'passed' | 'failed' | 'void'; validations: ValidationRecord[] }>,
    judge: JudgeModelUse | null,
    context: RescoreRunCommand['context'],
  ): Promise<Rescore> {
    const rescoreId = newId('rsc', context.now.getTime());
    const ref = { rescoreId, runId: run._id, batchId: run.batchId, organization: run.organization };
    const trials = run.trials.map((trial) => {
      const outcome = outcomes.get(trial.id);
      const rescored = outcome?.status ?? 'void';
      return { id: trial.id, ordinal: trial.ordinal, original: trial.status, rescored, validations: outcome?.validations ?? [], commands: trial.commands };
    });
    const rescored = computeDistribution(trials.map((trial) => ({ status: trial.rescored, commands: trial.commands })));
    const rescoredAt = context.now.toISOString();
    const metadata = requestMetadata(context);
    const first: RunRescored = { type: 'RunRescored', data: { ...ref, validator, original: run.distribution, rescored, judge, rescoredAt } };
    const perTrial: TrialRescored[] = trials
      .filter((trial) => outcomes.has(trial.id))
      .map((trial) => ({
        type: 'TrialRescored',
        data: { ...ref, trialId: trial.id, originalStatus: trial.original, status: trial.rescored, validations: trial.validations },
      }));
    await this.eventStore.append(
      rescoreStream(rescoreId),
      [first, ...perTrial].map((event) => ({ id: newEventId(), ...event, metadata })),
      'no_stream',
    );
    return {
      rescoreId,
      runId: run._id,
      validator,
      original: run.distribution,
      rescored,
      trials: trials.map(({ commands: _commands, ...trial }) => trial),
      judge,
      rescoredAt,
    };
  }
}
