import type { RouteAnswer } from '#infrastructure/http/openapi/openapi-document';

/** evals.batches.watch: a text/event-stream, described event by event. */
export const WATCH_ANSWER: RouteAnswer = {
  summary: "A batch's progress as Server-Sent Events, until it ends",
  contentType: 'text/event-stream',
  answer: {
    type: 'string',
    description:
      'Each event has `id:` (its position in the event log), `event:` (its name) and one `data:` line of JSON naming ' +
      '`batchId` and, where they apply, `runId` and `trialId`. Names: `batch.started` {startedAt, runs, trials}; ' +
      '`trial.started` {startedAt}; `turn.ended` {turn, text, at} (the agent answered a turn); `trial.scored` ' +
      '{status: passed|failed, failure, timed, exitCode}; `trial.voided` {status: void, failure, voidFields}; ' +
      '`run.finished` {status, failure, distribution}; `batch.finished` {status: finished|failed, failure, finishedAt}, ' +
      'after which the stream closes. Comments (`: ping`) every 15 s keep the connection alive.',
  },
  description:
    'A batch already over replays its events and closes. Send `Last-Event-ID` (as EventSource does on reconnecting) to ' +
    'resume after that event, with nothing lost or repeated. At most ASSAY_WATCH_STREAMS_PER_ORG streams (16 by default) ' +
    'per organization at once: 429 beyond.',
  headers: [
    {
      name: 'Last-Event-ID',
      description: 'Resume after this event id (a position the stream sent).',
      schema: { type: 'string', pattern: '^\\d{1,15}$' },
    },
  ],
  errors: [400, 403, 404, 429],
};
