/**
 * The shortest secret value accepted (environment variables, connector secret fields): shorter
 * ones could not be redacted without replacing ordinary words, and their encodings could not be
 * told from other output. Counted in UTF-16 code units, as the other value bounds are.
 */
export const MIN_SECRET_VALUE_LENGTH = 8;

export function tooShortForASecret(value: string): boolean {
  return value.length < MIN_SECRET_VALUE_LENGTH;
}
