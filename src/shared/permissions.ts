/** Every permission a key or token may hold: the API's list (docs/api.md). */
export const PERMISSIONS = [
  'evals:read',
  'evals:write',
  'prompts:read',
  'prompts:write',
  'connectors:read',
  'connectors:write',
  'environment:read',
  'environment:write',
  'keys:admin',
  'audit:read',
] as const;

export type Permission = (typeof PERMISSIONS)[number];

export function isPermission(value: unknown): value is Permission {
  return typeof value === 'string' && (PERMISSIONS as readonly string[]).includes(value);
}
