import { plainToInstance, TransformationType } from 'class-transformer';
import type { MetadataStorage as TransformMetadataStorage } from 'class-transformer/types/MetadataStorage';
import { constraintsOf, perClassUntilMetadataChanges } from './validation-metadata-cache';

// class-transformer's registry of @Type, @Transform, @Expose and @Exclude; not in its index.
const transformMetadata = (require('class-transformer/cjs/storage') as { defaultMetadataStorage: TransformMetadataStorage }).defaultMetadataStorage;

/**
 * A DTO is plain when class-transformer has nothing to do for it beyond copying: none of its
 * validated properties has @Type or @Transform, and it exposes or excludes nothing. Its unknown
 * properties do not count: validation strips or refuses them. (class-transformer's decorators
 * run with the class's validation ones, so the answer keeps as long as those do.)
 */
const isPlain = perClassUntilMetadataChanges((dto) => {
  const properties = new Set(constraintsOf(dto).map((metadata) => metadata.propertyName));
  return (
    transformMetadata.getStrategy(dto) === 'none' &&
    transformMetadata.getExposedMetadatas(dto).length === 0 &&
    transformMetadata.getExcludedMetadatas(dto).length === 0 &&
    [...properties].every(
      (property) =>
        transformMetadata.findTypeMetadata(dto, property) === undefined &&
        transformMetadata.findTransformMetadatas(dto, property, TransformationType.PLAIN_TO_CLASS).length === 0,
    )
  );
});

/**
 * The DTO instance for a parsed JSON body that holds no reserved key. A plain DTO gets the
 * body's properties copied onto a new instance (its defaults stay where the body is silent),
 * which is what plainToInstance does for it, without walking its metadata on every request;
 * nested values are the parser's own fresh objects, so they need no copy. Any other DTO goes
 * through class-transformer, which builds its nested classes.
 */
export function instantiate<T extends object>(dto: new () => T, body: object): T {
  if (!isPlain(dto)) return plainToInstance(dto, body, { exposeDefaultValues: true });
  const instance = new dto() as Record<string, unknown>;
  for (const key of Object.keys(body)) instance[key] = (body as Record<string, unknown>)[key];
  return instance as T;
}
