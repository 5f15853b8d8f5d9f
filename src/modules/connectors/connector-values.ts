import { DecodeError } from '#infrastructure/http/decode/decode.pipe';
import type { DecodeIssue } from '#infrastructure/http/decode/decode-issues';
import { MIN_SECRET_VALUE_LENGTH, tooShortForASecret } from '#shared/secret-values';
import type { AuthMethod } from './integrations/integration-catalogue';

/** The bound of one field value, the same as an environment variable's. */
export const MAX_VALUE_LENGTH = 32768;

/**
 * Checks `values` against the auth method's fields: each required field given, no field it
 * does not have, each value 1 to 32768 characters, a secret one at least 8. A refusal names the
 * field (path `["values", name]`) and never echoes a value.
 */
export function checkValues(method: AuthMethod, values: Record<string, string>): void {
  const issues: DecodeIssue[] = [];
  const known = new Set(method.fields.map((field) => field.name));
  const secretFields = new Set(method.fields.filter((field) => field.secret).map((field) => field.name));
  for (const field of method.fields) {
    const given = Object.prototype.hasOwnProperty.call(values, field.name);
    if (!given && field.required) issues.push({ _tag: 'Missing', path: ['values', field.name], message: `is required by the auth method "${method.id}"` });
  }
  for (const [name, value] of Object.entries(values)) {
    if (!known.has(name)) {
      const expected = method.fields.map((field) => field.name).join(', ');
      issues.push({ _tag: 'Unexpected', path: ['values', name], message: `is not a field of the auth method "${method.id}" (its fields: ${expected})` });
    } else if (value.length < 1 || value.length > MAX_VALUE_LENGTH) {
      issues.push({ _tag: 'Refinement', path: ['values', name], message: `must be 1 to ${MAX_VALUE_LENGTH} characters` });
    } else if (secretFields.has(name) && tooShortForASecret(value)) {
      issues.push({ _tag: 'Refinement', path: ['values', name], message: `is a secret: it must be at least ${MIN_SECRET_VALUE_LENGTH} characters` });
    }
  }
  if (issues.length > 0) throw new DecodeError(issues);
}

/**
 * The environment variable a connector field becomes in a trial: `ASSAY_HARNESS_` or
 * `ASSAY_SANDBOX_` and the field's name in upper snake case (`apiKey` → `ASSAY_HARNESS_API_KEY`).
 * `ASSAY_` names are the service's own: no organization variable can take them.
 */
export function connectorEnvName(role: 'harness' | 'sandbox', field: string): string {
  const snake = field
    .replace(/([a-z0-9])([A-Z])/g, '$1_$2')
    .replace(/[^A-Za-z0-9]+/g, '_')
    .toUpperCase();
  return `ASSAY_${role.toUpperCase()}_${snake}`;
}
