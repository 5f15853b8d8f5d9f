import { Type } from 'class-transformer';
import { ArrayMaxSize, ArrayMinSize, IsArray, IsBoolean, IsOptional, IsString, Length, Matches, ValidateNested } from 'class-validator';
import { ForbidUnknownProperties } from '#infrastructure/http/decode/decode.pipe';
import { reservedVariableMessage, UNRESERVED_VARIABLE_PATTERN } from '#shared/reserved-variables';
import { MAX_NAME_LENGTH, MAX_VALUE_LENGTH, MAX_VARIABLES_PER_REQUEST, VARIABLE_NAME_PATTERN } from '../variable-rules';

export class VariableDto {
  @IsString({ message: 'Expected a string' })
  @Length(1, MAX_NAME_LENGTH, { message: `must be 1 to ${MAX_NAME_LENGTH} characters` })
  @Matches(VARIABLE_NAME_PATTERN, { message: 'must be upper-case letters, digits and "_", not starting with a digit' })
  @Matches(UNRESERVED_VARIABLE_PATTERN, { message: ({ value }) => reservedVariableMessage(String(value)) })
  name!: string;

  /** Never echoed in an error: the messages below name the bound, not the value. */
  @IsString({ message: 'Expected a string' })
  @Length(1, MAX_VALUE_LENGTH, { message: `must be 1 to ${MAX_VALUE_LENGTH} characters` })
  value!: string;

  @IsOptional()
  @IsBoolean({ message: 'Expected a boolean' })
  secret?: boolean | null;
}

/** Strict, as a credential operation: a misspelt `secret` must not silently fall back to a default. */
@ForbidUnknownProperties()
export class SetVariablesDto {
  @IsArray()
  @ArrayMinSize(1, { message: 'must hold at least 1 variable' })
  @ArrayMaxSize(MAX_VARIABLES_PER_REQUEST, { message: `must hold at most ${MAX_VARIABLES_PER_REQUEST} variables` })
  @ValidateNested({ each: true })
  @Type(() => VariableDto)
  variables!: VariableDto[];
}
