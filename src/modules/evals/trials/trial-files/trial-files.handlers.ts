import { Inject, Optional } from '@nestjs/common';
import { IQueryHandler, QueryHandler } from '@nestjs/cqrs';
import { EVENT_STORE, EventStore, RecordedEvent } from '#infrastructure/event-store/event-store.port';
import { NotFound } from '#shared/errors';
import { textOf } from '#trial-runner';
import type { TrialArtifact, TrialDiff } from '#trial-runner';
import { TrialDiffRecorded, trialStream } from '../trial.events';
import { ARTIFACT_READER, ArtifactReader } from './artifact-reader';
import { GetTrialArtifact, GetTrialDiff } from './trial-files.queries';

/** What evals.trials.diff answers: the trial's diff, `recorded: false` when it has none (no change, or made before diffs were kept). */
export type TrialDiffView = TrialDiff & { recorded: boolean };

/** What evals.trials.artifact answers: a text artifact's content, or a binary one's base64. */
export interface TrialArtifactView {
  path: string;
  byteSize: number;
  sha256: string;
  encoding: 'utf8' | 'base64';
  content: string;
}

/** Larger artifacts are not answered whole (the viewer shows their size; the store keeps them). */
export const MAX_ARTIFACT_ANSWER_BYTES = 4 * 1024 * 1024;

/** The trial's own stream, when it is the organization's; else NotFound, as for an unknown trial. */
async function trialEvents(eventStore: EventStore, organization: string, trialId: string): Promise<RecordedEvent[]> {
  const events = await eventStore.readStream(trialStream(trialId));
  const first = events.at(0);
  if (!first || (first.data as { organization?: string }).organization !== organization) throw new NotFound(`Trial "${trialId}" does not exist.`);
  return events;
}

@QueryHandler(GetTrialDiff)
export class GetTrialDiffHandler implements IQueryHandler<GetTrialDiff, TrialDiffView> {
  constructor(@Inject(EVENT_STORE) private readonly eventStore: EventStore) {}

  async execute({ organization, trialId }: GetTrialDiff): Promise<TrialDiffView> {
    const events = await trialEvents(this.eventStore, organization, trialId);
    const recorded = events.find((event) => event.type === 'TrialDiffRecorded');
    if (recorded === undefined) return { files: [], patch: '', truncated: false, recorded: false };
    return { ...(recorded.data as TrialDiffRecorded['data']).diff, recorded: true };
  }
}

@QueryHandler(GetTrialArtifact)
export class GetTrialArtifactHandler implements IQueryHandler<GetTrialArtifact, TrialArtifactView> {
  constructor(
    @Inject(EVENT_STORE) private readonly eventStore: EventStore,
    @Optional() @Inject(ARTIFACT_READER) private readonly reader?: ArtifactReader,
  ) {}

  async execute({ organization, trialId, path }: GetTrialArtifact): Promise<TrialArtifactView> {
    const events = await trialEvents(this.eventStore, organization, trialId);
    const verdict = events.find((event) => event.type === 'TrialScored' || event.type === 'TrialVoided');
    const artifacts = (verdict?.data as { artifacts?: TrialArtifact[] } | undefined)?.artifacts ?? [];
    const artifact = artifacts.find((candidate) => candidate.path === path);
    if (artifact === undefined) throw new NotFound(`Trial "${trialId}" has no artifact "${path}": evals.runs.get lists its artifacts.`);
    if (artifact.byteSize > MAX_ARTIFACT_ANSWER_BYTES) {
      throw new NotFound(`Artifact "${path}" is ${artifact.byteSize} bytes, more than the ${MAX_ARTIFACT_ANSWER_BYTES} answered whole.`);
    }
    if (this.reader === undefined) throw new NotFound(`This server keeps no artifacts to read.`);
    const content = await this.reader.read(organization, artifact.sha256).catch(() => null);
    if (content === null) throw new NotFound(`Artifact "${path}" is no longer stored (its content was removed or its key destroyed).`);
    const text = textOf(content);
    return { ...artifact, encoding: text === null ? 'base64' : 'utf8', content: text ?? content.toString('base64') };
  }
}
