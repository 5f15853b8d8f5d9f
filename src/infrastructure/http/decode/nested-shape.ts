import { ValidationTypes } from 'class-validator';
import type { DecodeIssue } from './decode-issues';
import { constraintsOf, perClassUntilMetadataChanges } from './validation-metadata-cache';
import type { ClassType } from './validation-metadata-cache';

type Condition = (object: object, value: unknown) => boolean;

/** A `@ValidateNested` property, with the IsOptional and ValidateIf conditions that guard it. */
interface NestedRule {
  name: string;
  each: boolean;
  conditions: Condition[];
}

const rulesOf = perClassUntilMetadataChanges((dto): NestedRule[] => {
  const constraints = constraintsOf(dto);
  const conditionsOf = (name: string): Condition[] =>
    constraints
      .filter((metadata) => metadata.propertyName === name && metadata.type === ValidationTypes.CONDITIONAL_VALIDATION)
      .map((metadata) => metadata.constraints[0] as Condition);
  return (
    constraints
      .filter((metadata) => metadata.type === ValidationTypes.NESTED_VALIDATION)
      // eslint-disable-next-line @typescript-eslint/no-unnecessary-boolean-literal-compare -- class-validator leaves `each` undefined at run time, whatever its type says
      .map((metadata) => ({ name: metadata.propertyName, each: metadata.each === true, conditions: conditionsOf(metadata.propertyName) }))
  );
});

/**
 * What class-validator lets through on a nested DTO property: it skips a missing value even
 * when the property is required (`evals.batches.start` without `suite` reached the handler),
 * and it validates an array given for one object as a list of them, so `[]` or `[[]]` passed
 * as a suite or a variable (and the handler failed on it: a 500). A required nested value
 * that is missing is `Missing`; an array where one object, or one element, belongs is `Type`.
 * Other wrong values (null, a string) class-validator reports itself.
 */
export function nestedShapeIssues(dto: ClassType, instance: Record<string, unknown>, path: Array<string | number>, issues: DecodeIssue[]): void {
  for (const rule of rulesOf(dto)) {
    const value = instance[rule.name];
    if (!rule.conditions.every((condition) => condition(instance, value))) continue;
    if (value === undefined) {
      issues.push({ _tag: 'Missing', path: [...path, rule.name], message: 'is missing' });
    } else if (!rule.each && Array.isArray(value)) {
      issues.push({ _tag: 'Type', path: [...path, rule.name], message: 'Expected an object, actual an array' });
    } else if (rule.each && Array.isArray(value)) {
      value.forEach((element: unknown, index) => {
        if (Array.isArray(element)) issues.push({ _tag: 'Type', path: [...path, rule.name, index], message: 'Expected an object, actual an array' });
      });
    }
  }
}
