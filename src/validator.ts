/**
 * The types a case's validator and prepare are written against:
 *
 * ```ts
 * import type { ValidatorContext, ValidatorResult } from 'assay/validator';
 *
 * export async function check(ctx: ValidatorContext): Promise<ValidatorResult> {
 *   const answer = ctx.workspace.readFile('answer.txt');
 *   return { passed: answer.trim() === '42', message: `answer.txt holds ${answer.trim()}` };
 * }
 * ```
 *
 * Both run with Node inside the trial's sandbox, in the workspace, as the trial's own user: no
 * network unless the case's sandbox allows it, no credentials, nothing of the server's files. They
 * talk to the server only through `ctx` (a judge call is the one thing they ask of it). Types
 * only: nothing here runs.
 */

/** A message of the conversation: the user's (the opening prompt is the first) or the agent's. */
export interface ConversationMessage {
  role: 'user' | 'agent';
  text: string;
}

/** The result of `ctx.workspace.exec`: the command ran with `/bin/sh -c` in the workspace. */
export interface ExecResult {
  /** The exit code, or 128 plus the signal's number when a signal ended it. */
  exitCode: number;
  stdout: string;
  stderr: string;
}

/** The trial's workspace, as the agent left it. Paths are relative to the workspace and may not leave it. */
export interface Workspace {
  /** The file's text (UTF-8); throws when it is missing. */
  readFile(path: string): string;
  /** Every file of the workspace, relative paths sorted, without `.git`'s contents. */
  listFiles(): string[];
  /** Runs a shell command in the workspace and waits for it (stdout and stderr up to 16 MiB each). */
  exec(command: string): ExecResult;
}

/** Prepare's workspace: the same, and it may write. */
export interface PrepareWorkspace extends Workspace {
  /** Writes a file (its directories are made), replacing any that was there. */
  writeFile(path: string, content: string): void;
}

/** A request to the LLM judge configured on the server (ASSAY_CONFIG `judges`). */
export interface JudgeRequest {
  /** The rubric, 1 to 8000 characters. */
  prompt: string;
  /** Labels and their scores from 0 to 1; default `{ pass: 1, fail: 0 }`. */
  choices?: Record<string, number>;
  /** The score at which the answer passes; default 0.5. */
  threshold?: number;
  /** Workspace files the judge reads besides the conversation: at most 20, each cut at 20,000 characters. */
  files?: string[];
  /** A model of the judge's provider other than the configured one. */
  model?: string;
}

/** The judge's answer. A failure of its provider rejects, and the validation is then an error whatever the validator does. */
export interface JudgeAnswer {
  choice: string;
  score: number;
  reason: string;
  /** `score >= threshold`. */
  passed: boolean;
}

/** What a validator gets, after the conversation. */
export interface ValidatorContext {
  workspace: Workspace;
  /** The opening prompt as the agent received it (variables and prepare's variables filled in). */
  prompt: string;
  conversation: ConversationMessage[];
  /** The agent's last message; null when it never answered. */
  finalMessage: string | null;
  /** The trial's trajectory so far: commands, messages, prepare (as the API shows them). */
  trajectory: Array<{ _tag: string } & Record<string, unknown>>;
  /** The case's variables, and `prepare.key` for each string its prepare returned. */
  variables: Record<string, string>;
  /** Recorded in the validation's logs (at most 64 entries, each up to 16,000 characters). */
  log(...values: unknown[]): void;
  /** Asks the server's LLM judge; each call is recorded in the validation's calls, the last one as its judgment. */
  judge(request: JudgeRequest): Promise<JudgeAnswer>;
}

/** What prepare gets, before the first agent turn (after the source, the cache and the installs). */
export interface PrepareContext {
  workspace: PrepareWorkspace;
  /** The case's variables. */
  variables: Record<string, string>;
  log(...values: unknown[]): void;
}

/** One check's result: a boolean, or the object form. */
export type CheckResult =
  | boolean
  | {
      passed: boolean;
      /** Any finite number; shown, not used for the verdict. */
      score?: number;
      /** One line, shown on the validation and in the trial's failure when it fails. */
      message?: string;
      /** Any JSON, kept up to 16,000 characters. */
      metadata?: unknown;
    };

/** A validator's answer: one result, or with a `manifest`, an array the manifest's indexes point into. */
export type ValidatorResult = CheckResult | CheckResult[];

/** Prepare's answer: nothing, or a JSON object of at most 16,000 characters; its string members become `{{prepare.key}}`. */
// eslint-disable-next-line @typescript-eslint/no-invalid-void-type -- a prepare that only writes files returns nothing: `void` is what TypeScript infers for it
export type PrepareResult = Record<string, unknown> | null | undefined | void;

export type Validator = (ctx: ValidatorContext) => ValidatorResult | Promise<ValidatorResult>;
export type Prepare = (ctx: PrepareContext) => PrepareResult | Promise<PrepareResult>;
