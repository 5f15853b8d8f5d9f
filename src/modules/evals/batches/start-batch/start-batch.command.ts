import type { StartRequest } from '../batch-starter';

export class StartBatch {
  constructor(readonly request: StartRequest) {}
}
