import { ArgumentMetadata, Injectable, PipeTransform } from '@nestjs/common';
import { validateSync } from 'class-validator';
import { DecodeIssue, mergeIssues, summarizeIssues, toDecodeIssues } from './decode-issues';
import { bodyShapeIssues } from './body-shape';
import { passesFlatValidation } from './fast-validation';
import { instantiate } from './instantiate';
import type { ClassType } from './validation-metadata-cache';

const STRICT = Symbol('forbidUnknownProperties');

/**
 * Marks a request DTO whose schema forbids extras: an unknown property anywhere in the body is
 * an `Unexpected` issue. Other bodies drop unknown properties.
 */
export function ForbidUnknownProperties(): ClassDecorator {
  return (target) => {
    Reflect.defineMetadata(STRICT, true, target);
  };
}

const strictness = new WeakMap<ClassType, boolean>();

/** Whether a body of this DTO refuses unknown properties (also read by the API document). */
export function isForbiddingUnknownProperties(dto: ClassType): boolean {
  let strict = strictness.get(dto);
  if (strict === undefined) {
    strict = Reflect.getMetadata(STRICT, dto) === true;
    strictness.set(dto, strict);
  }
  return strict;
}

/** The 400 `HttpApiDecodeError` of the spec: the body did not match the operation's schema. */
export class DecodeError extends Error {
  constructor(readonly issues: DecodeIssue[]) {
    super(summarizeIssues(issues));
    this.name = 'HttpApiDecodeError';
  }
}

/**
 * Decodes every `@Body()` into its DTO class with class-validator, once for all endpoints:
 * the body's shape first (reserved keys, depth, keys per object), then the instance (with the
 * nested shapes class-validator lets through), then its constraints. A
 * body of a flat DTO that passes them is accepted without the full executor; anything else,
 * and every failure, goes through validateSync, which names the issues. Synchronous, as every
 * constraint of the DTOs is: it runs on each parameter of each request, and an async pipe
 * would cost each of them a promise.
 */
@Injectable()
export class DecodePipe implements PipeTransform {
  transform(value: unknown, metadata: ArgumentMetadata): unknown {
    const dto = metadata.metatype;
    // A query is decoded like a body: the GET operations (a stream's `?id=`) take their input there.
    if ((metadata.type !== 'body' && metadata.type !== 'query') || !dto || dto === Object) return value;
    const body = value === undefined || value === null || value === '' ? {} : value;
    if (typeof body !== 'object' || Array.isArray(body)) {
      throw new DecodeError([{ _tag: 'Type', path: [], message: 'Expected a JSON object as the request body' }]);
    }
    const shapeIssues = bodyShapeIssues(body);
    if (shapeIssues.length > 0) throw new DecodeError(shapeIssues);
    const nestedIssues: DecodeIssue[] = [];
    const instance = instantiate(dto as new () => object, body, nestedIssues);
    const strict = isForbiddingUnknownProperties(dto);
    if (nestedIssues.length === 0 && passesFlatValidation(instance, dto, strict)) return instance;
    const errors = validateSync(instance, {
      whitelist: true,
      forbidNonWhitelisted: strict,
      forbidUnknownValues: false,
      validationError: { target: false, value: true },
    });
    const issues = mergeIssues(nestedIssues, toDecodeIssues(errors));
    if (issues.length > 0) throw new DecodeError(issues);
    return instance;
  }
}
