/** The rules of environment variables. */
export const VARIABLE_NAME_PATTERN = /^[A-Z_][A-Z0-9_]*$/;
/** Reserved names (PATH, LD_*, `ASSAY_`…) are refused too: see shared/reserved-variables.ts. */
export const MAX_NAME_LENGTH = 128;
export const MAX_VALUE_LENGTH = 32768;
export const MAX_VARIABLES_PER_REQUEST = 100;

const PLAIN_PREVIEW_LENGTH = 64;
const SHORT_SECRET_LENGTH = 20;

/**
 * What a listing shows instead of a value: a plain value as it is, cut at 64 characters with
 * "…"; a secret under 20 characters as "••••••••", a longer one as "••••" and its last 4.
 * Counted in code points, so a cut never splits a character.
 */
export function previewOf(value: string, secret: boolean): string {
  const characters = Array.from(value);
  if (secret) return characters.length < SHORT_SECRET_LENGTH ? '••••••••' : `••••${characters.slice(-4).join('')}`;
  return characters.length <= PLAIN_PREVIEW_LENGTH ? value : `${characters.slice(0, PLAIN_PREVIEW_LENGTH).join('')}…`;
}
