import { registerDecorator, ValidationArguments } from 'class-validator';
import type { IssueTag } from './issue-tag';

export const EACH_ELEMENT = 'eachElement';

/** What the `eachElement` constraint reports: which elements failed, under which tag. */
export interface ElementFailure {
  indexes: number[];
  tag: IssueTag;
  message: string;
}

/**
 * Validates every element of an array of plain values, so that a bad element is reported at
 * its own path (`["permissions", 1]`), which class-validator's `each` option cannot do.
 */
export function EachElement(check: (value: unknown) => boolean, tag: IssueTag, message: string, itemSchema: object = {}): PropertyDecorator {
  return (target, propertyName) => {
    registerDecorator({
      name: EACH_ELEMENT,
      target: target.constructor,
      propertyName: String(propertyName),
      // The JSON schema of an element, for the API document (request-schemas), not for the check.
      constraints: [itemSchema],
      validator: {
        validate: (value: unknown) => !Array.isArray(value) || value.every(check),
        defaultMessage: (args?: ValidationArguments) => {
          const elements = Array.isArray(args?.value) ? (args.value as unknown[]) : [];
          const indexes = elements.flatMap((element, index) => (check(element) ? [] : [index]));
          const failure: ElementFailure = { indexes, tag, message };
          return JSON.stringify(failure);
        },
      },
    });
  };
}

export function EachIn(values: readonly string[]): PropertyDecorator {
  return EachElement((value) => typeof value === 'string' && values.includes(value), 'Type', `Expected one of ${values.join(', ')}`, {
    type: 'string',
    enum: [...values],
  });
}

export function EachString(minLength: number, maxLength: number): PropertyDecorator {
  return EachElement(
    (value) => typeof value === 'string' && value.length >= minLength && value.length <= maxLength,
    'Refinement',
    `Expected a string of ${minLength} to ${maxLength} characters`,
    { type: 'string', minLength, maxLength },
  );
}
