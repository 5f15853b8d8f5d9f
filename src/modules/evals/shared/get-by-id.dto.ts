import { IsString, Length } from 'class-validator';

export class GetByIdDto {
  @IsString() @Length(1, 200) id!: string;
}
