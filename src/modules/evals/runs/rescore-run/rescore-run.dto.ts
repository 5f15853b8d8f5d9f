import { Type } from 'class-transformer';
import { IsDefined, IsString, Length, ValidateNested } from 'class-validator';
import { JudgeValidatorDto } from '../../shared/judge-validator.dto';

/** `evals.runs.rescore`: a finished run's conversations judged again by a new judge-form validator. */
export class RescoreRunDto {
  @IsString() @Length(1, 200) id!: string;
  @IsDefined() @ValidateNested() @Type(() => JudgeValidatorDto) validator!: JudgeValidatorDto;
}
