import { requestSchemas, JsonSchema, SCHEMA_PREFIX } from '#infrastructure/http/openapi/request-schemas';
import { StartBatchDto } from '#modules/evals/batches/start-batch.dto';
import type { IssuePath } from './suite-file';

type Json = Record<string, unknown>;

/** Keys of a suite file that are not in the start body: the CLI reads them (and, for `…File`, loads what they name). */
const SUITE_FILE_KEYS = ['name', 'env', 'casesFile'];
const FILE_KEYS: Record<string, string> = { prompt: 'promptFile', verify: 'verifyFile', files: 'directory' };

let schemas: Record<string, JsonSchema> | null = null;

/**
 * What to say of an unknown key: "did you mean `trials`?" when a key of the same place is a
 * slip of a letter or two away (a swap counts as one), else the keys the place takes.
 */
export function unknownKeyMessage(body: Json, at: IssuePath): string {
  const key = String(at[at.length - 1]);
  const known = knownKeys(body, at.slice(0, -1));
  if (known.length === 0) return 'unknown key';
  const near = closest(key, known);
  return near
    ? `unknown key; did you mean \`${near}\`?`
    : `unknown key; this place takes ${[...known]
        .sort()
        .map((name) => `\`${name}\``)
        .join(', ')}`;
}

/** The keys the body's schema allows at `at` (an object of the start body), with the suite file's own. */
function knownKeys(body: Json, at: IssuePath): string[] {
  schemas ??= requestSchemas([StartBatchDto]);
  let members: JsonSchema[] = [schemas.StartBatchDto];
  let value: unknown = body;
  for (const key of at) {
    value = (value as Record<string | number, unknown> | null)?.[key];
    members = members.flatMap((schema) => {
      const child = typeof key === 'number' ? schema.items : (schema.properties as Record<string, JsonSchema> | undefined)?.[key];
      return child ? objectsOf(child as JsonSchema, value) : [];
    });
  }
  const keys = new Set<string>();
  for (const schema of members) {
    const properties = (schema.properties ?? {}) as Record<string, JsonSchema>;
    for (const name of Object.keys(properties)) {
      keys.add(name);
      if (FILE_KEYS[name]) keys.add(FILE_KEYS[name]);
      // A validator's or prepare's code (a string) may come from a file; a workspace source may not.
      if (name === 'source' && properties.source.type === 'string') keys.add('sourceFile');
    }
  }
  if (at.length === 0) for (const name of SUITE_FILE_KEYS) keys.add(name);
  return [...keys];
}

/** The object schemas a value of `schema` may be: a union's member by the value's `kind`, else all of them. */
function objectsOf(schema: JsonSchema, value: unknown): JsonSchema[] {
  if (typeof schema.$ref === 'string') return objectsOf(schemas?.[schema.$ref.slice(SCHEMA_PREFIX.length)] ?? {}, value);
  const union = (schema.anyOf ?? schema.oneOf) as JsonSchema[] | undefined;
  if (union) {
    const all = union.flatMap((member) => objectsOf(member, value));
    const kind = (value as { kind?: unknown } | null)?.kind;
    const chosen = all.filter((member) => ((member.properties as Json | undefined)?.kind as { enum?: unknown[] } | undefined)?.enum?.includes(kind));
    return chosen.length > 0 ? chosen : all;
  }
  if (schema.type === 'array' && schema.items) return [schema];
  return schema.properties ? [schema] : [];
}

/** The known key nearest to `key`, if it is near enough to be a slip. */
function closest(key: string, known: string[]): string | null {
  const limit = key.length <= 4 ? 1 : 2;
  let best: { name: string; distance: number } | null = null;
  for (const name of known) {
    const distance = name.toLowerCase() === key.toLowerCase() ? 0 : editDistance(key, name);
    if (distance <= limit && (best === null || distance < best.distance)) best = { name, distance };
  }
  return best?.name ?? null;
}

/** Edits from one word to the other: a letter added, removed or changed, or two neighbours swapped. */
function editDistance(a: string, b: string): number {
  const rows = Array.from({ length: a.length + 1 }, (_, i) => Array.from({ length: b.length + 1 }, (_, j) => (i === 0 ? j : j === 0 ? i : 0)));
  for (let i = 1; i <= a.length; i += 1) {
    for (let j = 1; j <= b.length; j += 1) {
      const cost = a[i - 1] === b[j - 1] ? 0 : 1;
      rows[i][j] = Math.min(rows[i - 1][j] + 1, rows[i][j - 1] + 1, rows[i - 1][j - 1] + cost);
      if (i > 1 && j > 1 && a[i - 1] === b[j - 2] && a[i - 2] === b[j - 1]) rows[i][j] = Math.min(rows[i][j], rows[i - 2][j - 2] + 1);
    }
  }
  return rows[a.length][b.length];
}
