import { registerDecorator, ValidationArguments } from 'class-validator';
import { ArrayMaxSize, ArrayMinSize, Equals, IsArray, IsNumber, IsOptional, IsString, Length, Max, Min } from 'class-validator';
import { EachString } from '#infrastructure/http/decode/each-element';

export const MAX_JUDGE_CHOICES = 20;
export const MAX_JUDGE_LABEL_CHARS = 100;
export const MAX_JUDGE_FILES = 20;
export const MAX_JUDGE_PATH_CHARS = 1000;

/**
 * The judge form of a case's validator (a gap of the spec): a rubric the configured judge model
 * reads with the conversation and the named workspace files, answering one of `choices`.
 * Unknown properties are refused, as in the first form.
 */
export class JudgeValidatorDto {
  @IsString() @Length(1, 200) name!: string;
  @Equals('judge') kind!: 'judge';
  @IsString() @Length(1, 8000) prompt!: string;
  @IsOptional() @IsString() @Length(1, 200) model?: string;
  @IsOptional() @IsChoices() choices?: Record<string, number>;
  @IsOptional() @IsNumber({ allowNaN: false, allowInfinity: false }) @Min(0) @Max(1) threshold?: number;
  @IsOptional()
  @IsArray()
  @ArrayMinSize(1)
  @ArrayMaxSize(MAX_JUDGE_FILES)
  @EachString(1, MAX_JUDGE_PATH_CHARS)
  files?: string[];
}

/** `choices`: 1 to 20 labels of 1 to 100 characters, each mapped to a score from 0 to 1. */
function IsChoices(): PropertyDecorator {
  return (target, propertyName) => {
    registerDecorator({
      name: 'isChoices',
      target: target.constructor,
      propertyName: String(propertyName),
      validator: {
        validate: (value: unknown) => choicesProblem(value) === null,
        defaultMessage: (args?: ValidationArguments) => choicesProblem(args?.value) ?? 'Expected choices',
      },
    });
  };
}

function choicesProblem(value: unknown): string | null {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return 'Expected an object mapping a label to a score from 0 to 1';
  const entries = Object.entries(value as Record<string, unknown>);
  if (entries.length < 1 || entries.length > MAX_JUDGE_CHOICES) return `Expected 1 to ${MAX_JUDGE_CHOICES} choices, actual ${entries.length}`;
  for (const [label, score] of entries) {
    if (label.length < 1 || label.length > MAX_JUDGE_LABEL_CHARS) return `Each label must be 1 to ${MAX_JUDGE_LABEL_CHARS} characters`;
    if (typeof score !== 'number' || !Number.isFinite(score) || score < 0 || score > 1) return `The score of "${label}" must be a number from 0 to 1`;
  }
  return null;
}
