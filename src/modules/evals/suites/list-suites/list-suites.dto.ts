import { CursorPageDto } from '../../shared/cursor';

/** `evals.suites.list`: `{cursor?, limit?}`. */
export class ListSuitesDto extends CursorPageDto {}
