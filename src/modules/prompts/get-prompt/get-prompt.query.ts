import type { PromptSelector } from './prompt-selector';

export class GetPrompt {
  constructor(
    readonly organization: string,
    readonly promptId: string,
    readonly selector: PromptSelector,
  ) {}
}
