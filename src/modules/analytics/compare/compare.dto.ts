import { ArrayMaxSize, ArrayMinSize, IsArray, IsOptional } from 'class-validator';
import { EachString } from '#infrastructure/http/decode/each-element';
import { OptionalSlug } from '../analytics-fields';

export const MAX_COMPARED = 10;

/**
 * `analytics.compare`: `{batchIds}` (each batch's variants, side by side) or `{suiteId, variants}`
 * (variant definitions by their key, over the suite's whole history).
 */
export class CompareDto {
  @IsOptional() @IsArray() @ArrayMinSize(1) @ArrayMaxSize(MAX_COMPARED) @EachString(1, 200) batchIds?: string[];
  @OptionalSlug() suiteId?: string;
  @IsOptional() @IsArray() @ArrayMinSize(2) @ArrayMaxSize(MAX_COMPARED) @EachString(1, 200) variants?: string[];
}
