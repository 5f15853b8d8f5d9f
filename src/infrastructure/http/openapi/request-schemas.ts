// eslint-disable-next-line @typescript-eslint/no-require-imports -- class-transformer types its storage module but exports it only by this path
const { defaultMetadataStorage } = require('class-transformer/cjs/storage') as typeof import('class-transformer/types/storage');
import { getMetadataStorage, IS_IN, ValidationTypes } from 'class-validator';
import type { ValidationMetadata } from 'class-validator/types/metadata/ValidationMetadata';
import { validationMetadatasToSchemas } from 'class-validator-jsonschema';
import type { ISchemaConverters } from 'class-validator-jsonschema/build/defaultConverters';
import { isForbiddingUnknownProperties } from '../decode/decode.pipe';
import { EACH_ELEMENT } from '../decode/each-element';
import type { ClassType } from '../decode/validation-metadata-cache';

export type JsonSchema = Record<string, unknown>;

export const SCHEMA_PREFIX = '#/components/schemas/';

type Condition = (object: object, value: unknown) => boolean;

/**
 * The request bodies' JSON schemas, generated from the same class-validator DTOs the decode pipe
 * validates with: a DTO change is a document change, with no second description to keep in
 * step. The project's own decorators (string records, `kind` unions, per-element checks) carry
 * their schema in their constraints; optional and nullable fields are read from the
 * IsOptional/ValidateIf conditions themselves, by asking them about an absent and a null value.
 */
export function requestSchemas(bodies: readonly ClassType[]): Record<string, JsonSchema> {
  const all = validationMetadatasToSchemas({
    refPointerPrefix: SCHEMA_PREFIX,
    classTransformerMetadataStorage: defaultMetadataStorage,
    additionalConverters: converters as unknown as ISchemaConverters,
  }) as Record<string, JsonSchema>;
  const classes = reachableClasses(bodies);
  const strict = strictClasses(bodies);
  const schemas: Record<string, JsonSchema> = {};
  for (const dto of classes.keys()) {
    const generated = all[dto.name] ?? { type: 'object', properties: {} };
    schemas[dto.name] = withPresence(dto, generated, strict.has(dto));
  }
  return schemas;
}

// Typed as our own: the library's schema type does not know JSON Schema 2020's type lists.
const converters: Record<string, (meta: ValidationMetadata) => JsonSchema | object> = {
  // The library's own fails on a list holding null; null is a value here like any other.
  [IS_IN]: (meta) => {
    const values = meta.constraints[0] as unknown[];
    const types = [...new Set(values.map((value) => (value === null ? 'null' : typeof value)))];
    return { enum: values, type: types.length === 1 ? types[0] : types };
  },
  isStringRecord: (meta) => {
    const options = (meta.constraints[0] ?? {}) as { maxValueLength?: number };
    return { type: 'object', additionalProperties: { type: 'string', ...(options.maxValueLength ? { maxLength: options.maxValueLength } : {}) } };
  },
  recordKeys: (meta) => {
    const options = (meta.constraints[0] ?? {}) as { keyPattern?: RegExp; keyRule?: string };
    return options.keyPattern ? { propertyNames: { pattern: options.keyPattern.source }, description: `Keys: ${options.keyRule ?? ''}`.trim() } : {};
  },
  // A judge's choices: 1 to 20 labels of 1 to 100 characters, each a score from 0 to 1.
  isChoices: () => ({
    type: 'object',
    minProperties: 1,
    maxProperties: 20,
    propertyNames: { minLength: 1, maxLength: 100 },
    additionalProperties: { type: 'number', minimum: 0, maximum: 1 },
  }),
  // A `kind` union: its members come from the nested converter below (a oneOf of their schemas).
  composite: () => ({}),
  [EACH_ELEMENT]: (meta) => ({ type: 'array', items: (meta.constraints[0] ?? {}) as JsonSchema }),
  [ValidationTypes.NESTED_VALIDATION]: (meta) => {
    const members = unionMembersOf(meta);
    if (members) return { oneOf: Object.values(members).map((member) => ({ $ref: SCHEMA_PREFIX + member.name })) };
    const child = nestedType(meta);
    return child ? { $ref: SCHEMA_PREFIX + child.name } : {};
  },
};

function typeMetadata(target: ClassType, property: string): { typeFunction: (options?: unknown) => unknown } | undefined {
  return defaultMetadataStorage.findTypeMetadata(target, property) as { typeFunction: (options?: unknown) => unknown } | undefined;
}

function unionMembersOf(meta: ValidationMetadata): Record<string, ClassType> | null {
  const type = typeMetadata(meta.target as ClassType, meta.propertyName);
  const members = (type?.typeFunction as { unionMembers?: Record<string, ClassType> } | undefined)?.unionMembers;
  return members ?? null;
}

function nestedType(meta: ValidationMetadata): ClassType | null {
  if (typeof meta.target !== 'function') return null;
  const type = typeMetadata(meta.target as ClassType, meta.propertyName);
  const child = (type ? type.typeFunction() : Reflect.getMetadata('design:type', meta.target.prototype as object, meta.propertyName)) as unknown;
  return typeof child === 'function' && child !== Object ? (child as ClassType) : null;
}

function metadataOf(dto: ClassType): ValidationMetadata[] {
  return getMetadataStorage().getTargetValidationMetadatas(dto, '', true, false);
}

/** Every DTO class a body reaches through its nested properties, the bodies included. */
function reachableClasses(roots: readonly ClassType[]): Map<ClassType, Set<ClassType>> {
  const reached = new Map<ClassType, Set<ClassType>>();
  const visit = (dto: ClassType, root: ClassType) => {
    const roots = reached.get(dto);
    if (roots?.has(root)) return;
    reached.set(dto, (roots ?? new Set()).add(root));
    for (const meta of metadataOf(dto)) {
      if (meta.type !== ValidationTypes.NESTED_VALIDATION) continue;
      const members = unionMembersOf(meta);
      const children = members ? Object.values(members) : [nestedType(meta)].filter((child): child is ClassType => child !== null);
      for (const child of children) visit(child, root);
    }
  };
  for (const root of roots) visit(root, root);
  return reached;
}

/** Classes every body that reaches them refuses unknown properties in (the decode pipe forbids them at every depth). */
function strictClasses(roots: readonly ClassType[]): Set<ClassType> {
  const reached = reachableClasses(roots);
  return new Set([...reached].filter(([, from]) => [...from].every(isForbiddingUnknownProperties)).map(([dto]) => dto));
}

/** Required and nullable as the decode pipe decides them, and the class's strictness. */
function withPresence(dto: ClassType, generated: JsonSchema, strict: boolean): JsonSchema {
  const properties = { ...((generated.properties ?? {}) as Record<string, JsonSchema>) };
  const required: string[] = [];
  for (const name of Object.keys(properties)) {
    const conditions = metadataOf(dto)
      .filter((meta) => meta.propertyName === name && meta.type === ValidationTypes.CONDITIONAL_VALIDATION)
      .map((meta) => meta.constraints[0] as Condition);
    if (conditions.every((condition) => asks(condition, name, undefined))) required.push(name);
    if (conditions.length > 0 && !conditions.every((condition) => asks(condition, name, null))) properties[name] = nullable(properties[name]);
  }
  const schema: JsonSchema = { ...generated, type: 'object', properties };
  delete schema.required;
  if (required.length > 0) schema.required = required;
  if (strict) schema.additionalProperties = false;
  return schema;
}

/** Whether a condition validates the property when it holds `value` (its other fields unknown: assumed absent). */
function asks(condition: Condition, name: string, value: unknown): boolean {
  try {
    return condition({ [name]: value }, value);
  } catch {
    return true;
  }
}

function nullable(schema: JsonSchema | undefined): JsonSchema {
  if (!schema) return { type: 'null' };
  if (typeof schema.type === 'string') {
    return { ...schema, type: [schema.type, 'null'], ...(Array.isArray(schema.enum) ? { enum: [...(schema.enum as unknown[]), null] } : {}) };
  }
  return { anyOf: [schema, { type: 'null' }] };
}
