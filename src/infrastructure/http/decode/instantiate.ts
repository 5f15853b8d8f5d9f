import { plainToInstance, TransformationType, TypeMetadata } from 'class-transformer';
import type { MetadataStorage as TransformMetadataStorage } from 'class-transformer/types/MetadataStorage';
import { withinArrayBound } from './array-bounds';
import type { DecodeIssue } from './decode-issues';
import { nestedShapeIssues } from './nested-shape';
import { constraintsOf, perClassUntilMetadataChanges } from './validation-metadata-cache';
import type { ClassType } from './validation-metadata-cache';

// class-transformer's registry of @Type, @Transform, @Expose and @Exclude; not in its index.
// eslint-disable-next-line @typescript-eslint/no-require-imports -- a CommonJS file outside the package's typed entry points
const transformMetadata = (require('class-transformer/cjs/storage') as { defaultMetadataStorage: TransformMetadataStorage }).defaultMetadataStorage;

const propertiesOf = (dto: ClassType): Set<string> => new Set(constraintsOf(dto).map((metadata) => metadata.propertyName));

/**
 * A DTO is built here when class-transformer would only copy it and build its `@Type` classes:
 * it exposes, excludes and transforms nothing. (class-transformer's decorators run with the
 * class's validation ones, so the answer keeps as long as those do.)
 */
const isBuildable = perClassUntilMetadataChanges(
  (dto) =>
    transformMetadata.getStrategy(dto) === 'none' &&
    transformMetadata.getExposedMetadatas(dto).length === 0 &&
    transformMetadata.getExcludedMetadatas(dto).length === 0 &&
    [...propertiesOf(dto)].every((property) => transformMetadata.findTransformMetadatas(dto, property, TransformationType.PLAIN_TO_CLASS).length === 0),
);

/** The `@Type` of each validated property that has one. */
const typesOf = perClassUntilMetadataChanges((dto) => {
  const types = new Map<string, TypeMetadata>();
  for (const property of propertiesOf(dto)) {
    // Typed as always found; it is undefined for a property without @Type.
    const type = transformMetadata.findTypeMetadata(dto, property) as TypeMetadata | undefined;
    if (type) types.set(property, type);
  }
  return types;
});

type Path = Array<string | number>;

/**
 * The DTO instance for a parsed JSON body that holds no reserved key, built in one pass over
 * it. class-transformer's plainToInstance, which did this before, deduplicates every object's
 * keys with `indexOf`: quadratic in the keys, so 100,000 unknown keys held the event loop for
 * seconds. Here each key costs one map lookup. The body's properties are copied onto a new
 * instance (its defaults stay where the body is silent); a property with `@Type` becomes its
 * class, element by element in an array, as plainToInstance does; every other value is the
 * parser's own fresh object and needs no copy. Shape problems of nested DTOs that
 * class-validator lets through (see nestedShapeIssues), and arrays past their `@ArrayMaxSize`
 * (cut to it, see withinArrayBound), go into `issues`. A DTO that uses
 * class-transformer's other decorators still goes through it.
 */
export function instantiate<T extends object>(dto: new () => T, body: object, issues: DecodeIssue[] = []): T {
  return build(dto, body as Record<string, unknown>, [], issues) as T;
}

function build(dto: ClassType, body: Record<string, unknown>, path: Path, issues: DecodeIssue[]): object {
  if (!isBuildable(dto)) return plainToInstance(dto as new () => object, body, { exposeDefaultValues: true });
  const instance = new (dto as new () => Record<string, unknown>)();
  const types = typesOf(dto);
  for (const key of Object.keys(body)) {
    const type = types.get(key);
    const member = withinArrayBound(dto, key, body[key], path, issues);
    instance[key] = type ? convert(classOf(type, instance, body, key), member, [...path, key], issues) : member;
  }
  nestedShapeIssues(dto, instance, path, issues);
  return instance;
}

function classOf(type: TypeMetadata, instance: object, body: object, property: string): ClassType | undefined {
  // class-transformer types these as Function/any; what they hold is the class named by @Type or reflected by TypeScript.
  // Without @Type there is no typeFunction, only the reflected design type.
  const typeFunction = type.typeFunction as TypeMetadata['typeFunction'] | undefined;
  return (typeFunction ? type.typeFunction({ newObject: instance, object: body, property }) : type.reflectedType) as ClassType | undefined;
}

/** The classes class-transformer converts a scalar to (`@Type(() => Number)` turns "5" into 5). */
const SCALARS = new Set<ClassType>([String, Number, Boolean, Date, Buffer]);

function convert(type: ClassType | undefined, value: unknown, path: Path, issues: DecodeIssue[]): unknown {
  if (Array.isArray(value)) return value.map((element, index) => convert(type, element, [...path, index], issues));
  if (type && SCALARS.has(type)) return plainToInstance(type as new () => unknown, value);
  if (value === null || typeof value !== 'object' || !type || type === Object) return value;
  return build(type, value as Record<string, unknown>, path, issues);
}
