import 'reflect-metadata';
import { plainToInstance, Transform, Type } from 'class-transformer';
import type { DecodeIssue } from './decode-issues';
import {
  getMetadataStorage,
  IsIn,
  IsInt,
  IsOptional,
  IsString,
  Length,
  Matches,
  Max,
  Min,
  registerDecorator,
  ValidateNested,
  validateSync,
} from 'class-validator';
import { bodyShapeIssues, MAX_BODY_DEPTH } from './body-shape';
import { DecodePipe, ForbidUnknownProperties } from './decode.pipe';
import { passesFlatValidation } from './fast-validation';
import { instantiate } from './instantiate';
import { memoizeValidationMetadata } from './validation-metadata-cache';
import { loadServiceDtos } from '../../../../test/support/dtos';

class RunsFixture {
  @IsString() @Length(1, 100) @Matches(/^[a-z]+(-[a-z]+)*$/) caseId!: string;
  @IsOptional() @IsInt() @Min(1) @Max(1_000_000) page: number = 1;
  @IsOptional() @IsIn(['a', 'b']) kind?: string;
}

@ForbidUnknownProperties()
class StrictFixture {
  @IsString() @Length(1, 5) name!: string;
}

/** Values at and past the usual bounds, and of every JSON type. */
const VALUES: unknown[] = [
  undefined,
  null,
  true,
  0,
  1,
  -1,
  1.5,
  1_000_000,
  1_000_001,
  '',
  'a',
  'b',
  'c',
  'abcde',
  'abcdef',
  'two-words',
  'Two',
  'x'.repeat(100),
  'x'.repeat(101),
  'x'.repeat(200),
  'x'.repeat(201),
  'harness_kind_1',
  'command',
  [],
  ['a'],
  {},
  { a: 1 },
];

const OPTIONS = (strict: boolean) => ({
  whitelist: true,
  forbidNonWhitelisted: strict,
  forbidUnknownValues: false,
  validationError: { target: false, value: true },
});

/** The fast verdict and class-validator's, each on its own fresh instance of the body. */
function verdicts(dto: new () => object, body: Record<string, unknown>, strict: boolean) {
  const fastInstance = instantiate(dto, { ...body });
  const fast = passesFlatValidation(fastInstance, dto, strict);
  const fullInstance = instantiate(dto, { ...body });
  const errors = validateSync(fullInstance, OPTIONS(strict));
  return { fast, valid: errors.length === 0, fastInstance, fullInstance };
}

/**
 * A body of the first accepted value of each property, then that body with each property
 * replaced by every value in turn (undefined: left out), and with an unknown property.
 */
function bodiesFor(dto: new () => object): Array<Record<string, unknown>> {
  const properties = [
    ...new Set(
      getMetadataStorage()
        .getTargetValidationMetadatas(dto, undefined as unknown as string, false, false)
        .map((m) => m.propertyName),
    ),
  ];
  const good: Record<string, unknown> = {};
  for (const property of properties) {
    const accepted = VALUES.find((value) => {
      const instance = instantiate(dto, { [property]: value });
      return !validateSync(instance, OPTIONS(false)).some((error) => error.property === property);
    });
    if (accepted !== undefined) good[property] = accepted;
  }
  const bodies: Array<Record<string, unknown>> = [{}, good, { ...good, unknown: 1 }];
  for (const property of properties) {
    for (const value of VALUES) {
      bodies.push(value === undefined ? Object.fromEntries(Object.entries(good).filter(([key]) => key !== property)) : { ...good, [property]: value });
    }
  }
  return bodies;
}

describe('accepting flat bodies without the full executor', () => {
  beforeAll(() => memoizeValidationMetadata());

  it('agrees with validateSync on every body: it accepts exactly the valid ones and strips what it strips', () => {
    let accepted = 0;
    for (const body of bodiesFor(RunsFixture)) {
      const { fast, valid, fastInstance, fullInstance } = verdicts(RunsFixture, body, false);
      expect({ body, fast }).toEqual({ body, fast: valid });
      if (fast) {
        accepted += 1;
        expect(fastInstance).toEqual(fullInstance);
        expect(Object.keys(fastInstance)).not.toContain('unknown');
      }
    }
    expect(accepted).toBeGreaterThan(15);
  });

  it('leaves an unknown property of a strict DTO to validateSync, which names it', () => {
    expect(verdicts(StrictFixture, { name: 'abc' }, true)).toMatchObject({ fast: true, valid: true });
    expect(verdicts(StrictFixture, { name: 'abc', extra: 1 }, true)).toMatchObject({ fast: false, valid: false });
    expect(verdicts(StrictFixture, { name: 'abcdef' }, true)).toMatchObject({ fast: false, valid: false });
  });

  it('never accepts a body of a service DTO that validateSync refuses, and accepts the valid bodies of the flat ones', () => {
    const dtos = loadServiceDtos();
    expect(dtos.length).toBeGreaterThan(20);
    let flatValid = 0;
    for (const dto of dtos) {
      for (const body of bodiesFor(dto)) {
        for (const strict of [false, true]) {
          const { fast, valid } = verdicts(dto, body, strict);
          if (fast) expect({ dto: dto.name, body, strict, valid }).toEqual({ dto: dto.name, body, strict, valid: true });
          if (fast && valid) flatValid += 1;
        }
      }
    }
    expect(flatValid).toBeGreaterThan(20);
  });

  it('sees constraints registered after a class was first validated', () => {
    class LateFixture {
      @IsString() @Length(2, 3) code!: string;
    }
    const pipe = new DecodePipe();
    const decode = (body: unknown) => pipe.transform(body, { type: 'body', metatype: LateFixture as never });
    expect(decode({ code: 'ab' })).toEqual(Object.assign(new LateFixture(), { code: 'ab' }));
    expect(() => decode({ code: 'a' })).toThrow(/code/);
    registerDecorator({ name: 'notAb', target: LateFixture, propertyName: 'code', validator: { validate: (value: unknown) => value !== 'ab' } });
    expect(() => decode({ code: 'ab' })).toThrow(/code/);
    expect(decode({ code: 'abc' })).toEqual(Object.assign(new LateFixture(), { code: 'abc' }));
  });
});

describe('instances of the DTOs', () => {
  class InnerFixture {
    @IsString() name!: string;
  }
  class OuterFixture {
    @ValidateNested() @Type(() => InnerFixture) inner!: InnerFixture;
    @IsOptional() @IsInt() limit: number = 20;
  }

  it("copies a plain DTO's body onto a new instance, keeping the defaults the body leaves out", () => {
    const decoded = instantiate(RunsFixture, { caseId: 'a' });
    expect(decoded).toBeInstanceOf(RunsFixture);
    // eslint-disable-next-line @typescript-eslint/no-misused-spread -- the copy drops the prototype on purpose: it compares the instance's own properties
    expect({ ...decoded }).toEqual({ caseId: 'a', page: 1, kind: undefined });
  });

  it('builds the nested classes of a DTO with @Type, as class-transformer would', () => {
    const decoded = instantiate(OuterFixture, { inner: { name: 'x' } });
    expect(decoded.inner).toBeInstanceOf(InnerFixture);
    expect(decoded.limit).toBe(20);
    expect(decoded).toEqual(plainToInstance(OuterFixture, { inner: { name: 'x' } }, { exposeDefaultValues: true }));
    const list = instantiate(OuterFixture, { inner: [{ name: 'a' }, [{ name: 'b' }], 3] }) as unknown as { inner: unknown[] };
    expect(list.inner[0]).toBeInstanceOf(InnerFixture);
    expect((list.inner[1] as unknown[])[0]).toBeInstanceOf(InnerFixture);
    expect(list.inner[2]).toBe(3);
  });

  it('still goes through class-transformer for a DTO with @Transform', () => {
    class TrimmedFixture {
      @Transform(({ value }) => (typeof value === 'string' ? value.trim() : value)) @IsString() name!: string;
    }
    expect(instantiate(TrimmedFixture, { name: '  x ' }).name).toBe('x');
  });

  it('notes a missing required nested object and an array given for one, at their paths', () => {
    const issues: DecodeIssue[] = [];
    instantiate(OuterFixture, {}, issues);
    instantiate(OuterFixture, { inner: [] }, issues);
    expect(issues).toEqual([
      { _tag: 'Missing', path: ['inner'], message: 'is missing' },
      { _tag: 'Type', path: ['inner'], message: expect.any(String) },
    ]);
  });
});

describe('the shape a body must have before any schema', () => {
  const chain = (levels: number): object => {
    let value: object = {};
    for (let level = 1; level < levels; level += 1) value = { next: value };
    return value;
  };

  it(`takes ${MAX_BODY_DEPTH} levels of nesting and refuses ${MAX_BODY_DEPTH + 1}, where the excess starts`, () => {
    expect(bodyShapeIssues(chain(MAX_BODY_DEPTH))).toEqual([]);
    expect(bodyShapeIssues(chain(MAX_BODY_DEPTH + 1))).toEqual([
      { _tag: 'Refinement', path: Array(MAX_BODY_DEPTH).fill('next'), message: expect.stringContaining(`${MAX_BODY_DEPTH}`) },
    ]);
  });

  it('finds reserved keys in arrays and objects, and passes their look-alikes', () => {
    const body = JSON.parse('{"a":[{"b":1},{"constructor":2}],"c":{"__proto__":{}},"constructors":1,"proto":"__proto__"}');
    expect(bodyShapeIssues(body).map((issue) => issue.path)).toEqual([
      ['a', 1, 'constructor'],
      ['c', '__proto__'],
    ]);
  });
});
