import { IsString, Length, Matches } from 'class-validator';
import { SLUG } from '../../shared/definition.dto';

export class GetSuiteDto {
  @IsString() @Length(1, 100) @Matches(SLUG, { message: 'must be lower-case words joined by "-"' }) id!: string;
}
