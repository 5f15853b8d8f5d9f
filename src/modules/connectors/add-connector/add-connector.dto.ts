import { IsBoolean, IsIn, IsOptional, IsString, Length } from 'class-validator';
import { ForbidUnknownProperties } from '#infrastructure/http/decode/decode.pipe';
import { IsStringRecord } from '#infrastructure/http/decode/shapes';
import { CONNECTION_SCOPES, ConnectionScope } from '../connector.events';

/**
 * Strict, as a credential operation. `values` is checked against the auth method's fields by
 * the handler, once the integration is known (404 first, then 400 naming the field).
 */
@ForbidUnknownProperties()
export class AddConnectorDto {
  @IsString({ message: 'Expected a string' })
  @Length(1, 200, { message: 'must be 1 to 200 characters' })
  integrationId!: string;

  @IsString({ message: 'Expected a string' })
  @Length(1, 200, { message: 'must be 1 to 200 characters' })
  authMethodId!: string;

  @IsString({ message: 'Expected a string' })
  @Length(1, 80, { message: 'must be 1 to 80 characters' })
  name!: string;

  @IsStringRecord()
  values!: Record<string, string>;

  @IsOptional()
  @IsBoolean({ message: 'Expected a boolean' })
  isDefault?: boolean | null;

  @IsOptional()
  @IsIn(CONNECTION_SCOPES, { message: `Expected one of ${CONNECTION_SCOPES.join(', ')}` })
  scope?: ConnectionScope | null;
}
