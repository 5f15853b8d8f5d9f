import { CursorPageDto } from '../../shared/cursor';

/** `evals.batches.list`: `{cursor?, limit?}`. */
export class ListBatchesDto extends CursorPageDto {}
