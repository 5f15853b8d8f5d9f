import { Type } from 'class-transformer';
import { IsInt, IsNumber, IsObject, IsOptional, IsString, Length, MaxLength, Min, ValidateNested } from 'class-validator';
import type { Filter, Sort } from '#infrastructure/read-store/read-store.port';

/** The spec's cursor: where the last item of a page sits in its list's order. */
export interface Cursor {
  id: string;
  startedAtMillis: number;
  name: string;
}

export class CursorDto implements Cursor {
  @IsString() @Length(1, 200) id!: string;
  @IsInt() @Min(0) startedAtMillis!: number;
  @IsString() @MaxLength(1000) name!: string;
}

/** `{cursor?, limit?}`: the paging members every cursor-paged list takes. */
export class CursorPageDto {
  @IsOptional() @IsObject() @ValidateNested() @Type(() => CursorDto) cursor?: CursorDto | null;
  @IsOptional() @IsNumber({ allowNaN: false, allowInfinity: false }) limit?: number;
}

export const DEFAULT_LIMIT = 20;
export const MAX_LIMIT = 100;

/** Defaults to 20; a fraction is rounded down; anything outside 1..100 is clamped into it. */
export function clampLimit(limit: number | null | undefined): number {
  if (limit === undefined || limit === null) return DEFAULT_LIMIT;
  return Math.min(MAX_LIMIT, Math.max(1, Math.floor(limit)));
}

/** One key of a list's order, with the value the cursor holds for it. */
export interface SortKey {
  field: string;
  direction: 1 | -1;
  value: string | number;
}

/** The sort document of a keyset order. */
export function sortOf(keys: readonly Omit<SortKey, 'value'>[]): Sort {
  return Object.fromEntries<SortKey['direction']>(keys.map((key) => [key.field, key.direction]));
}

/**
 * Keyset paging: the documents strictly after the cursor in the order the keys give, as a
 * filter an index on those keys answers. Unlike `skip`, it neither repeats nor skips an item
 * when items are added before the cursor between two pages.
 */
export function afterCursor(keys: readonly SortKey[]): Filter {
  const branches = keys.map((key, index) => {
    const branch: Filter = {};
    for (const earlier of keys.slice(0, index)) branch[earlier.field] = earlier.value;
    branch[key.field] = { [key.direction === 1 ? '$gt' : '$lt']: key.value };
    return branch;
  });
  return { $or: branches };
}

/**
 * A page read with `limit + 1` documents: the extra one only says whether a next page exists,
 * so a full last page answers `next: null` rather than leading to an empty page.
 */
export function pageOf<D, V>(
  documents: D[],
  limit: number,
  toCursor: (document: D) => Cursor,
  toView: (document: D) => V,
): { items: V[]; next: Cursor | null } {
  const page = documents.slice(0, limit);
  const next = documents.length > limit ? toCursor(page[page.length - 1]) : null;
  return { items: page.map(toView), next };
}

/** A literal text as a regular expression that matches it anywhere. */
export function escapeRegex(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
}
