import type { RunDocument } from './run.projection';

/** The run as the API shows it: the document without its bookkeeping fields. */
export function runView(document: RunDocument) {
  const { _id, organization: _organization, startedAtMillis: _millis, tags: _tags, _position, ...fields } = document as RunDocument & { _position?: number };
  return { id: _id, ...fields };
}

export type RunView = ReturnType<typeof runView>;
