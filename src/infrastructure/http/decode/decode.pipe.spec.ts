import 'reflect-metadata';
import { Type } from 'class-transformer';
import { getMetadataStorage, IsArray, IsInt, IsOptional, IsString, Length, Max, Min, ValidateNested } from 'class-validator';
import { DecodeError, DecodePipe, ForbidUnknownProperties } from './decode.pipe';
import { mapError } from '../error-mapping';
import { BadRequest, Conflict } from '#shared/errors';
import { loadServiceDtos } from '../../../../test/support/dtos';

class SuiteFixture {
  @IsString() id!: string;
  @IsString() prompt!: string;
}

class CaseFixture {
  @IsString() @Length(1, 100) id!: string;
  @IsOptional() @IsInt() @Min(1000) @Max(3600000) timeoutMs?: number;
}

@ForbidUnknownProperties()
class StartFixture {
  @ValidateNested() @Type(() => SuiteFixture) suite!: SuiteFixture;
  @IsArray() @ValidateNested({ each: true }) @Type(() => CaseFixture) cases!: CaseFixture[];
}

class LenientFixture {
  @IsString() name!: string;
}

async function issuesOf(dto: new () => object, body: unknown) {
  try {
    await new DecodePipe().transform(body, { type: 'body', metatype: dto as never });
  } catch (error) {
    if (error instanceof DecodeError) return error.issues;
    throw error;
  }
  return [];
}

describe('decoding request bodies into the spec issue list', () => {
  it('puts a missing nested field at its full path', async () => {
    expect(await issuesOf(StartFixture, { suite: { id: 's' }, cases: [] })).toEqual([{ _tag: 'Missing', path: ['suite', 'prompt'], message: 'is missing' }]);
  });

  it('puts an unknown property inside an array element at a path with a numeric index', async () => {
    const issues = await issuesOf(StartFixture, { suite: { id: 's', prompt: 'p' }, cases: [{ id: 'a' }, { id: 'b', extra: 1 }] });
    expect(issues).toEqual([{ _tag: 'Unexpected', path: ['cases', 1, 'extra'], message: expect.any(String) }]);
  });

  it('tells a wrong type from a broken bound, on both sides of the bound', async () => {
    const body = (timeoutMs: unknown) => ({ suite: { id: 's', prompt: 'p' }, cases: [{ id: 'a', timeoutMs }] });
    expect(await issuesOf(StartFixture, body('soon'))).toEqual([{ _tag: 'Type', path: ['cases', 0, 'timeoutMs'], message: expect.any(String) }]);
    expect(await issuesOf(StartFixture, body(999))).toEqual([{ _tag: 'Refinement', path: ['cases', 0, 'timeoutMs'], message: expect.any(String) }]);
    expect(await issuesOf(StartFixture, body(1000))).toEqual([]);
    expect(await issuesOf(StartFixture, body(3600000))).toEqual([]);
    expect(await issuesOf(StartFixture, body(3600001))).toEqual([{ _tag: 'Refinement', path: ['cases', 0, 'timeoutMs'], message: expect.any(String) }]);
  });

  it('reports a nested object of the wrong type as Type', async () => {
    expect(await issuesOf(StartFixture, { suite: 'nope', cases: [] })).toEqual([{ _tag: 'Type', path: ['suite'], message: expect.any(String) }]);
  });

  it('drops unknown properties where the schema allows extras', async () => {
    const decoded = await new DecodePipe().transform({ name: 'x', other: 1 }, { type: 'body', metatype: LenientFixture as never });
    expect(decoded).toEqual(Object.assign(new LenientFixture(), { name: 'x' }));
  });
});

describe('unions told apart by kind', () => {
  it('reports a kind no member has as one Composite issue, not the fields of no member', async () => {
    const { StartBatchDto } = await import('#modules/evals/batches/start-batch.dto');
    const { startBody } = await import('../../../../test/support/evals');
    const body = startBody({ cases: [{ id: 'c', verify: 'true', variables: { word: 'x' }, user: { kind: 'robot', extra: 1 } }] });
    expect(await issuesOf(StartBatchDto, body)).toEqual([
      { _tag: 'Composite', path: ['cases', 0, 'user'], message: expect.stringContaining('actual an object with kind "robot"') },
    ]);
  });

  it('validates a matching member with its own fields at their paths', async () => {
    const { StartBatchDto } = await import('#modules/evals/batches/start-batch.dto');
    const { startBody } = await import('../../../../test/support/evals');
    const body = startBody({ cases: [{ id: 'c', verify: 'true', variables: { word: 'x' }, user: { kind: 'scripted', replies: ['ok', 7], extra: 1 } }] });
    expect(await issuesOf(StartBatchDto, body)).toEqual([
      { _tag: 'Unexpected', path: ['cases', 0, 'user', 'extra'], message: expect.any(String) },
      { _tag: 'Type', path: ['cases', 0, 'user', 'replies', 1], message: expect.any(String) },
    ]);
  });
});

describe('mapping errors to HTTP answers', () => {
  it('maps domain errors to their status and tag', () => {
    expect(mapError(new BadRequest('b'), 'POST', '/v1/x')).toEqual({ status: 400, body: { _tag: 'BadRequest', message: 'b' }, unexpected: false });
    expect(mapError(new Conflict('c'), 'POST', '/v1/x').status).toBe(409);
  });

  it('answers an unexpected error with 500 InternalError and no internal detail', () => {
    const error = new TypeError('secret internal detail at /srv/app.js:12');
    const mapped = mapError(error, 'POST', '/v1/x');
    expect(mapped.status).toBe(500);
    expect(mapped.unexpected).toBe(true);
    expect(mapped.body._tag).toBe('InternalError');
    expect(JSON.stringify(mapped.body)).not.toContain('secret internal detail');
  });
});

describe('the DTOs the pipe decodes', () => {
  it('use only synchronous constraints, because the pipe validates with validateSync (which skips async ones)', () => {
    expect(loadServiceDtos().length).toBeGreaterThan(10);
    const storage = getMetadataStorage() as unknown as { constraintMetadatas: Map<unknown, Array<{ async: boolean; target: { name: string } }>> };
    const constraints = [...storage.constraintMetadatas.values()].flat();
    expect(constraints.length).toBeGreaterThan(0);
    expect(constraints.filter((constraint) => constraint.async).map((constraint) => constraint.target.name)).toEqual([]);
  });
});
