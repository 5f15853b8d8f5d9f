import { OnModuleDestroy } from '@nestjs/common';
import { Counter, Gauge, Histogram } from 'prom-client';
import type { ProjectionRunner } from '../processing/projection-runner';
import type { ServiceMetrics } from './service-metrics';

/** A model provider call, as the trial engine reports it. */
export interface ProviderCallReport {
  provider: string;
  model: string;
  outcome: string;
  durationMs: number;
  inputTokens: number;
  outputTokens: number;
}

/** What the trials' metrics read from the evals and the trial engine, given by the module that wires them. */
export interface TrialMetricSources {
  /** The trials of running batches, queued and running, counted now. */
  unfinishedTrials(): Promise<{ queued: number; running: number }>;
  /** Listens to the engine's provider calls and sandbox starts until the returned function is called. */
  observeExecution(observer: {
    providerCall(report: ProviderCallReport): void;
    sandboxStarted(report: { driver: string; durationMs: number }): void;
  }): () => void;
}

/**
 * The evals' metrics: trials by what happened to them (counted from the log as this process
 * sees it), trials queued and running now (read from the running batches at each scrape, so
 * they are right whatever process runs them), provider calls and sandbox starts (reported by
 * the trial runner through its observer hook).
 */
export class TrialMetrics implements OnModuleDestroy {
  private readonly stopObserving: () => void;

  constructor(metrics: ServiceMetrics, projections: ProjectionRunner, sources: TrialMetricSources) {
    const registers = [metrics.registry];
    const queued = new Counter({ name: 'assay_trials_queued_total', help: 'Trials queued.', registers });
    const started = new Counter({ name: 'assay_trials_started_total', help: 'Trials started.', registers });
    const finished = new Counter({
      name: 'assay_trials_finished_total',
      help: 'Trials finished, by outcome: passed, failed (scored) or void.',
      labelNames: ['outcome'],
      registers,
    });
    new Gauge({
      name: 'assay_trials',
      help: 'Trials of running batches now, by state: queued or running.',
      labelNames: ['state'],
      registers,
      async collect() {
        const counts = await sources.unfinishedTrials();
        this.set({ state: 'queued' }, counts.queued);
        this.set({ state: 'running' }, counts.running);
      },
    });
    projections.observe((event, live) => {
      if (!live) return;
      if (event.type === 'TrialQueued') queued.inc();
      else if (event.type === 'TrialStarted') started.inc();
      else if (event.type === 'TrialScored') finished.inc({ outcome: (event.data as { status: string }).status });
      else if (event.type === 'TrialVoided') finished.inc({ outcome: 'void' });
    });
    this.stopObserving = sources.observeExecution(executionMetrics(registers));
  }

  onModuleDestroy(): void {
    this.stopObserving();
  }
}

function executionMetrics(registers: ServiceMetrics['registry'][]) {
  const calls = new Counter({
    name: 'assay_provider_calls_total',
    help: 'Model provider calls (simulated users, judges), by provider, model and outcome (ok or the failure kind).',
    labelNames: ['provider', 'model', 'outcome'],
    registers,
  });
  const callSeconds = new Histogram({
    name: 'assay_provider_call_duration_seconds',
    help: 'Time of a model provider call, its retries included.',
    labelNames: ['provider', 'model'],
    buckets: [0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 120],
    registers,
  });
  const tokens = new Counter({
    name: 'assay_provider_tokens_total',
    help: 'Tokens of model provider calls, by provider, model and direction (input or output).',
    labelNames: ['provider', 'model', 'direction'],
    registers,
  });
  const sandboxStart = new Histogram({
    name: 'assay_sandbox_start_seconds',
    help: 'Time from launching a sandboxed command to the sandbox reporting it runs, by driver.',
    labelNames: ['driver'],
    buckets: [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5],
    registers,
  });
  return {
    providerCall(report: ProviderCallReport) {
      const { provider, model } = report;
      calls.inc({ provider, model, outcome: report.outcome });
      callSeconds.observe({ provider, model }, report.durationMs / 1000);
      tokens.inc({ provider, model, direction: 'input' }, report.inputTokens);
      tokens.inc({ provider, model, direction: 'output' }, report.outputTokens);
    },
    sandboxStarted(report: { driver: string; durationMs: number }) {
      sandboxStart.observe({ driver: report.driver }, report.durationMs / 1000);
    },
  };
}
