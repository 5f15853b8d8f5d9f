import { IsChannel, IsPromptId, IsVersion } from '../prompt.fields';

/** The spec's request; like the spec's other bodies but the start, extras are dropped. */
export class PromoteChannelDto {
  @IsChannel()
  channel!: string;

  @IsPromptId()
  id!: string;

  @IsVersion()
  version!: number;
}
