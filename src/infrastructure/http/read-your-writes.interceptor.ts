import { CallHandler, ExecutionContext, Injectable, NestInterceptor } from '@nestjs/common';
import { from, lastValueFrom, Observable } from 'rxjs';
import type { JsonLogger } from '../logging/json-logger';
import type { ProjectionRunner } from '../processing/projection-runner';
import { withWriteScope } from '../processing/read-your-writes';
import type { AssayRequest } from './operation.decorator';

/**
 * Read-your-writes: a command answers only once the local read models reflect what it
 * appended, so a `get` right after a write sees it. The wait is bounded; past it the answer
 * goes out anyway and the delay is logged.
 */
@Injectable()
export class ReadYourWritesInterceptor implements NestInterceptor {
  constructor(
    private readonly projections: ProjectionRunner,
    private readonly timeoutMs: number,
    private readonly logger: JsonLogger,
  ) {}

  intercept(context: ExecutionContext, next: CallHandler): Observable<unknown> {
    const request = context.switchToHttp().getRequest<AssayRequest>();
    return from(this.run(next, request));
  }

  private async run(next: CallHandler, request: AssayRequest): Promise<unknown> {
    const { result, lastPosition } = await withWriteScope(() => lastValueFrom(next.handle(), { defaultValue: undefined }));
    if (lastPosition >= 0) {
      const reached = await this.projections.waitFor(lastPosition, this.timeoutMs);
      if (!reached) {
        this.logger.warn('read models lag behind a write', {
          correlationId: request.correlationId,
          position: lastPosition,
          projected: this.projections.position,
        });
      }
    }
    return result;
  }
}
