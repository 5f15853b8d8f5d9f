import { registerDecorator, ValidationArguments } from 'class-validator';
import type { ClassType } from './validation-metadata-cache';

function isPlainObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/**
 * An object mapping names to strings (variables, env, files). The key rule, when given, is
 * checked for every key; a value that is not a string is a `Type` issue.
 */
export function IsStringRecord(options: { keyPattern?: RegExp; keyRule?: string; maxValueLength?: number } = {}): PropertyDecorator {
  return (target, propertyName) => {
    registerDecorator({
      name: 'isStringRecord',
      target: target.constructor,
      propertyName: String(propertyName),
      // Read by the API document (request-schemas), not by the check.
      constraints: [options],
      validator: {
        validate: (value: unknown) => isPlainObject(value) && Object.values(value).every((member) => typeof member === 'string'),
        defaultMessage: () => 'Expected an object mapping names to strings',
      },
    });
    if (options.keyPattern || options.maxValueLength) {
      registerDecorator({
        name: 'recordKeys',
        target: target.constructor,
        propertyName: String(propertyName),
        constraints: [options],
        validator: {
          validate: (value: unknown) =>
            !isPlainObject(value) ||
            Object.entries(value).every(
              ([key, member]) =>
                (!options.keyPattern || options.keyPattern.test(key)) &&
                (!options.maxValueLength || typeof member !== 'string' || member.length <= options.maxValueLength),
            ),
          defaultMessage: (args?: ValidationArguments) => {
            const bad = isPlainObject(args?.value) ? Object.keys(args.value).find((key) => options.keyPattern && !options.keyPattern.test(key)) : undefined;
            return bad !== undefined
              ? `The key ${JSON.stringify(bad)} breaks the rule: ${options.keyRule ?? String(options.keyPattern)}`
              : `Each value must be at most ${options.maxValueLength} characters`;
          },
        },
      });
    }
  };
}

/**
 * A union told apart by a `kind` member. A value whose kind matches no member is a
 * `Composite` issue at the union's path; a matching one is validated as that member's class
 * (see `unionMember`), so its own issues keep their full paths.
 */
export function IsUnionOf(kinds: readonly string[], description: string): PropertyDecorator {
  return (target, propertyName) => {
    registerDecorator({
      name: 'composite',
      target: target.constructor,
      propertyName: String(propertyName),
      constraints: [kinds],
      validator: {
        validate: (value: unknown) => isPlainObject(value) && kinds.includes(value.kind as string),
        defaultMessage: (args?: ValidationArguments) => {
          const value: unknown = args?.value;
          const actual = isPlainObject(value)
            ? `an object with kind ${JSON.stringify(value.kind)}`
            : ((JSON.stringify(value) as string | undefined) ?? 'undefined');
          return `Expected ${description}, actual ${actual}`;
        },
      },
    });
  };
}

/**
 * For class-transformer's `@Type`: the member class for the value's kind, else a plain object.
 * Only the members' own kinds count: `{"kind": "valueOf"}` (or toString, __proto__,
 * hasOwnProperty) must not reach Object.prototype and be built as a class (it was a 500).
 */
export function unionMember(members: Record<string, ClassType>): UnionMemberType {
  const member = (options?: { object: Record<string, unknown>; property: string }): ClassType => {
    const value = options?.object[options.property];
    const kind = isPlainObject(value) ? value.kind : undefined;
    return (typeof kind === 'string' && Object.hasOwn(members, kind) && members[kind]) || Object;
  };
  // The API document names the union's members from here (a `oneOf` of their schemas).
  return Object.assign(member, { unionMembers: members });
}

export type UnionMemberType = ((options?: { object: Record<string, unknown>; property: string }) => ClassType) & {
  unionMembers: Record<string, ClassType>;
};
