import type { ValidationArguments } from 'class-validator';
import { getMetadataStorage, ValidationTypes } from 'class-validator';
import type { ConstraintMetadata } from 'class-validator/types/metadata/ConstraintMetadata';
import type { ValidationMetadata } from 'class-validator/types/metadata/ValidationMetadata';
import { constraintsOf, perClassUntilMetadataChanges } from './validation-metadata-cache';
import type { ClassType } from './validation-metadata-cache';

interface Check {
  metadata: ValidationMetadata;
  constraint: ConstraintMetadata;
}

interface PropertyPlan {
  name: string;
  /** IsOptional and ValidateIf: when one says no, the property is not validated at all. */
  conditions: Array<(object: object, value: unknown) => boolean>;
  /** IsDefined and every other constraint, each with its validator. */
  checks: Check[];
}

interface DtoPlan {
  properties: PropertyPlan[];
  known: ReadonlySet<string>;
}

/** Null for a DTO that only the full executor handles (nested, per-element or async constraints). */
const planOf = perClassUntilMetadataChanges((dto): DtoPlan | null => {
  const storage = getMetadataStorage();
  const byName = new Map<string, PropertyPlan>();
  const planned = constraintsOf(dto).every((metadata) => {
    let property = byName.get(metadata.propertyName);
    if (!property) byName.set(metadata.propertyName, (property = { name: metadata.propertyName, conditions: [], checks: [] }));
    if (metadata.type === ValidationTypes.WHITELIST) return true;
    if (metadata.type === ValidationTypes.CONDITIONAL_VALIDATION)
      return property.conditions.push(metadata.constraints[0] as (object: object, value: unknown) => boolean) > 0;
    if ((metadata.type !== ValidationTypes.CUSTOM_VALIDATION && metadata.type !== ValidationTypes.IS_DEFINED) || metadata.each) return false;
    const constraints = storage.getTargetValidatorConstraints(metadata.constraintCls);
    if (constraints.some((constraint) => constraint.async)) return false;
    for (const constraint of constraints) property.checks.push({ metadata, constraint });
    return true;
  });
  return planned ? { properties: [...byName.values()], known: new Set(byName.keys()) } : null;
});

/**
 * Accepts the common body without class-validator's executor, which builds error objects,
 * groups and filters for every property of every request. For a DTO of flat constraints only
 * (no nested, per-element or async ones), each property goes through the same validators with
 * the same arguments as validateSync would use, and unknown properties are stripped as its
 * whitelist strips them. True means validateSync would report nothing. False means "not
 * known to pass": an unknown property of a strict DTO, a failed constraint, or a DTO this does
 * not plan; the caller then runs validateSync, which gives the issues.
 */
export function passesFlatValidation(instance: object, dto: ClassType, strict: boolean): boolean {
  const plan = planOf(dto);
  if (!plan) return false;
  const fields = instance as Record<string, unknown>;
  for (const key of Object.keys(fields)) {
    if (plan.known.has(key)) continue;
    if (strict) return false;
    // eslint-disable-next-line @typescript-eslint/no-dynamic-delete -- strips a body key the class does not declare, in place, as class-validator's whitelist does
    delete fields[key];
  }
  for (const property of plan.properties) {
    const value = fields[property.name];
    if (!property.conditions.every((condition) => condition(instance, value))) continue;
    for (const { metadata, constraint } of property.checks) {
      const args: ValidationArguments = { targetName: dto.name, property: property.name, object: instance, value, constraints: metadata.constraints };
      if (constraint.instance.validate(value, args) !== true) return false;
    }
  }
  return true;
}
