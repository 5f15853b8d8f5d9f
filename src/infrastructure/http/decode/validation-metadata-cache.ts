import { getMetadataStorage } from 'class-validator';
import type { ValidationMetadata } from 'class-validator/types/metadata/ValidationMetadata';

/** A class constructor, as class-validator and class-transformer key their metadata. */
export type ClassType = abstract new (...args: never[]) => unknown;

type GroupedMetadata = Record<string, ValidationMetadata[]>;

const INSTALLED = Symbol.for('assay.validationMetadataCache');

/** Counts registrations seen since the memo was installed; answers built on the metadata compare it. */
let generation = 0;

/**
 * class-validator looks up a class's constraints on every validate call: it filters the
 * class's metadata and tests the class against every other registered class for inheritance,
 * then groups the result by property. Constraints are fixed once the decorators have run, so
 * each class's answer is kept; a later registration (a DTO module loaded late) empties the memo.
 * Only the plain lookup is kept: a call with a schema or with groups goes through unchanged.
 * class-validator treats both answers as read-only, which is what makes sharing them safe.
 */
export function memoizeValidationMetadata(): void {
  const storage = getMetadataStorage();
  const marked = storage as typeof storage & { [INSTALLED]?: true };
  if (marked[INSTALLED]) return;
  marked[INSTALLED] = true;

  const lookUp = storage.getTargetValidationMetadatas.bind(storage);
  const group = storage.groupByPropertyName.bind(storage);
  const addMetadata = storage.addValidationMetadata.bind(storage);
  /** Per class, by the `always` and `strictGroups` flags (the other arguments are absent). */
  let byClass = new Map<object, ValidationMetadata[][]>();
  let grouped = new WeakMap<ValidationMetadata[], GroupedMetadata>();

  storage.getTargetValidationMetadatas = (target, schema, always, strictGroups, groups) => {
    // eslint-disable-next-line @typescript-eslint/no-unnecessary-condition -- typed string, but class-validator (and constraintsOf) pass undefined when there is no schema
    if (schema !== undefined || (groups !== undefined && groups.length > 0)) return lookUp(target, schema, always, strictGroups, groups);
    let answers = byClass.get(target);
    if (!answers) byClass.set(target, (answers = []));
    const slot = (always ? 2 : 0) + (strictGroups ? 1 : 0);
    return (answers[slot] ??= lookUp(target, schema, always, strictGroups, groups));
  };
  storage.groupByPropertyName = (metadata) => {
    let answer = grouped.get(metadata);
    // Without a prototype: class-validator's whitelist asks `grouped[key]` for each body key,
    // and an inherited `hasOwnProperty` (a function of length 1) passed as a known property.
    if (!answer) grouped.set(metadata, (answer = Object.assign(Object.create(null) as GroupedMetadata, group(metadata))));
    return answer;
  };
  // addValidationSchema registers through addValidationMetadata too.
  storage.addValidationMetadata = (metadata) => {
    generation += 1;
    byClass = new Map();
    grouped = new WeakMap();
    addMetadata(metadata);
  };
}

/** A class's constraints as validateSync sees them without groups (memoized once installed). */
export function constraintsOf(dto: ClassType): ValidationMetadata[] {
  return getMetadataStorage().getTargetValidationMetadatas(dto, undefined as unknown as string, false, false);
}

/**
 * `compute` kept per class until any validation metadata registers again. Installs the memo
 * above, which is what counts the registrations.
 */
export function perClassUntilMetadataChanges<T>(compute: (dto: ClassType) => T): (dto: ClassType) => T {
  memoizeValidationMetadata();
  const answers = new WeakMap<ClassType, { generation: number; answer: T }>();
  return (dto) => {
    const known = answers.get(dto);
    if (known && known.generation === generation) return known.answer;
    const answer = compute(dto);
    answers.set(dto, { generation, answer });
    return answer;
  };
}
