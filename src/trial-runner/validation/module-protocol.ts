/**
 * The conversation between the server and a validator's (or prepare's) process: one JSON object
 * per line, in both directions, over the process's stdin and stdout (validator-child.js speaks
 * the other side). The process has no network and no credentials: judge calls are the only
 * thing it asks of the server.
 */

/** What the module sees of the trial (ctx.prompt, ctx.conversation…). */
export interface ModuleContextData {
  prompt: string;
  conversation: Array<{ role: 'user' | 'agent'; text: string }>;
  finalMessage: string | null;
  trajectory: unknown[];
  variables: Record<string, string>;
}

/** The judge form's request, answered by the server's judge. */
export interface JudgeRequest {
  prompt: unknown;
  choices?: unknown;
  threshold?: unknown;
  model?: unknown;
  name?: unknown;
  files: Array<{ path: string; content: string | null; truncated: boolean; missing?: string }>;
}

export interface JudgeAnswer {
  choice: string;
  score: number;
  reason: string;
  passed: boolean;
}

/** Server to process. `judge` is the judge form's request, run as `ctx => ctx.judge(judge)`. */
export type ServerMessage =
  | {
      type: 'start';
      mode: 'validator' | 'prepare' | 'judge';
      file: string | null;
      name: string;
      judge?: Record<string, unknown>;
      context: ModuleContextData;
      /** The service's own files in the workspace (the conversation file): not listed. */
      serviceFiles: string[];
    }
  | { type: 'answer'; id: number; result?: JudgeAnswer; error?: string };

/** Process to server. */
export type ModuleMessage =
  | { type: 'log'; level: 'stdout' | 'stderr' | 'log'; text: string }
  | { type: 'judge'; id: number; request: JudgeRequest }
  | { type: 'result'; value?: unknown }
  | { type: 'error'; message: string; stack: string };

/** The longest line the server reads before it calls the process's output garbage. */
export const MAX_PROTOCOL_LINE_CHARS = 4 * 1024 * 1024;

/** A line read from the process, or why it is not part of the protocol. */
export function parseModuleMessage(line: string): ModuleMessage | { garbage: string } {
  let parsed: unknown;
  try {
    parsed = JSON.parse(line);
  } catch {
    return { garbage: preview(line) };
  }
  if (parsed === null || typeof parsed !== 'object' || Array.isArray(parsed)) return { garbage: preview(line) };
  const message = parsed as Record<string, unknown>;
  switch (message.type) {
    case 'log':
      return ['stdout', 'stderr', 'log'].includes(message.level as string) && typeof message.text === 'string'
        ? (message as ModuleMessage)
        : { garbage: preview(line) };
    case 'judge':
      return Number.isInteger(message.id) && isJudgeRequest(message.request) ? (message as ModuleMessage) : { garbage: preview(line) };
    case 'result':
      return message as ModuleMessage;
    case 'error':
      return typeof message.message === 'string' && typeof message.stack === 'string' ? (message as ModuleMessage) : { garbage: preview(line) };
    default:
      return { garbage: preview(line) };
  }
}

function isJudgeRequest(value: unknown): value is JudgeRequest {
  return value !== null && typeof value === 'object' && Array.isArray((value as JudgeRequest).files);
}

function preview(line: string): string {
  const flat = line.replace(/\s+/g, ' ').trim();
  return flat.length <= 60 ? flat : `${flat.slice(0, 60)}…`;
}
