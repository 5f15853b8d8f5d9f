/** Small builders for the answers' JSON schemas, so each reads like the reference's field lists. */
export type Schema = Record<string, unknown>;

export const text: Schema = { type: 'string' };
export const integer: Schema = { type: 'integer' };
export const number: Schema = { type: 'number' };
export const boolean: Schema = { type: 'boolean' };
export const time: Schema = { type: 'string', format: 'date-time' };
export const anyObject: Schema = { type: 'object' };

export const ref = (name: string): Schema => ({ $ref: `#/components/schemas/${name}` });
export const list = (items: Schema): Schema => ({ type: 'array', items });
export const oneOf = (...values: string[]): Schema => ({ type: 'string', enum: values });
export const record = (values: Schema): Schema => ({ type: 'object', additionalProperties: values });

export function orNull(schema: Schema): Schema {
  if (typeof schema.type === 'string' && !Array.isArray(schema.enum)) return { ...schema, type: [schema.type, 'null'] };
  return { anyOf: [schema, { type: 'null' }] };
}

/** An object whose listed fields are all present (a field that may be empty says so with orNull). */
export function object(properties: Record<string, Schema>, description?: string): Schema {
  return { type: 'object', ...(description ? { description } : {}), properties, required: Object.keys(properties) };
}

/** An object whose `optional` fields may be absent. */
export function objectWith(properties: Record<string, Schema>, optional: Record<string, Schema>): Schema {
  return { type: 'object', properties: { ...properties, ...optional }, required: Object.keys(properties) };
}

/** What an operation answers with 200, and the statuses of its errors beyond 401 and 500. */
export interface OperationAnswer {
  summary: string;
  answer: Schema;
  errors: number[];
}
