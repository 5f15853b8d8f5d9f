import { newId } from '#shared/ids';
import type { Redactor } from '../output/captured-output';
import type { Validator } from '#shared/eval-definitions';
import type { ModuleEnd } from './module-process';
import type { JudgeAnswer } from './module-protocol';
import {
  CAPTURE_CHARS,
  empty,
  FULL_CAPTURE_CHARS,
  jsonCapture,
  Judgment,
  MAX_CALLS,
  MAX_LOGS,
  omitted,
  textCapture,
  ValidationCall,
  ValidationLog,
  ValidationRecord,
} from './validation-record';

/** One result as a validator may answer it: `true`, `false` or `{passed, score?, message?, metadata?}`. */
interface CheckResult {
  passed: boolean;
  score: number | null;
  message: string | null;
  metadata: unknown;
}

const MESSAGE_CHARS = 4000;
const RESULT_RULE = 'return true, false or { passed: boolean, score?: number, message?: string, metadata?: object }';

/**
 * Collects what one validator run produced (its logs, its judge calls and their judgments) and
 * turns its end into validation records: one per result, or one per manifest entry.
 */
export class ValidationRecorder {
  private readonly logs: ValidationLog[] = [];
  private readonly calls: ValidationCall[] = [];
  private judgment: Judgment | null = null;
  /** A judge call that failed: the validation is an error whatever the module made of it. */
  private judgeFailure: string | null = null;
  private dropped = false;
  private readonly captureChars: number;

  constructor(
    private readonly validator: Validator,
    private readonly redactor: Redactor,
  ) {
    this.captureChars = validator.kind !== 'judge' && validator.capture === true ? FULL_CAPTURE_CHARS : CAPTURE_CHARS;
  }

  log(level: ValidationLog['level'], text: string, at: number): void {
    if (this.logs.length >= MAX_LOGS) {
      this.dropped = true;
      return;
    }
    this.logs.push({ index: this.logs.length + 1, at, level, value: textCapture(text, this.redactor) });
  }

  /** Whether another judge call may be made (at most 64 a validation). */
  get callsLeft(): boolean {
    return this.calls.length < MAX_CALLS;
  }

  call(fields: { startedAt: number; durationMs: number; input: unknown; answer: JudgeAnswer | null; error: string | null; judgment: Judgment | null }): void {
    if (fields.error !== null && this.judgeFailure === null) this.judgeFailure = fields.error;
    if (fields.judgment !== null) this.judgment = fields.judgment;
    if (!this.callsLeft) {
      this.dropped = true;
      return;
    }
    this.calls.push({
      index: this.calls.length + 1,
      method: 'answer',
      startedAt: fields.startedAt,
      durationMs: fields.durationMs,
      input: jsonCapture(fields.input, this.redactor),
      output: fields.answer === null ? empty() : jsonCapture(fields.answer, this.redactor),
      error: textCapture(fields.error, this.redactor),
    });
  }

  /** The records of a run that ended (or of one that never started: `end` says why). */
  records(end: ModuleEnd, run: { startedAt: number; durationMs: number; exitCode: number | null; input: unknown }): ValidationRecord[] {
    return sealed(this.build(end, run), this.dropped);
  }

  private build(end: ModuleEnd, run: { startedAt: number; durationMs: number; exitCode: number | null; input: unknown }): ValidationRecord[] {
    const slots = this.slots();
    const results = end.kind === 'result' ? this.results(end.value, slots.length) : null;
    return slots.map((slot, position) => {
      const first = position === 0;
      const base = this.base(slot, run, first, end.kind === 'result' ? end.value : undefined);
      // A failed judge call decides, even where the module caught it (or threw it on).
      if (this.judgeFailure !== null) {
        return { ...base, status: 'error', message: line(`could not be judged: ${this.judgeFailure}`), error: textCapture(this.judgeFailure, this.redactor) };
      }
      if (end.kind === 'error') return { ...base, status: 'error', message: line(end.failure), error: textCapture(end.detail ?? end.failure, this.redactor) };
      const result = results?.[position];
      if (result === undefined || typeof result === 'string') {
        const problem = typeof result === 'string' ? result : 'gave no result';
        return { ...base, status: 'error', message: line(problem), error: textCapture(problem, this.redactor) };
      }
      return {
        ...base,
        status: result.passed ? 'passed' : 'failed',
        message: result.message === null ? null : line(this.redactor.redact(result.message)),
        metadata: result.metadata === undefined ? empty() : jsonCapture(result.metadata, this.redactor),
      };
    });
  }

  /** Where each record goes: the manifest's entries (index 0-based into the answer), else one record. */
  private slots(): Array<{ index: number; name: string; position: number }> {
    const manifest = this.validator.kind === 'judge' ? undefined : this.validator.manifest;
    if (manifest === undefined) return [{ index: 1, name: this.validator.name, position: 0 }];
    return manifest.map((entry) => ({ index: entry.index + 1, name: entry.name, position: entry.index }));
  }

  /** Each slot's result, or why its answer is not one. */
  private results(value: unknown, slotCount: number): Array<CheckResult | string> {
    const manifest = this.validator.kind !== 'judge' && this.validator.manifest !== undefined;
    if (!manifest) return [checkResult(value)];
    if (!Array.isArray(value))
      return Array.from({ length: slotCount }, () => `has a manifest but returned ${describe(value)}; return an array, one result per manifest entry`);
    const answers = value as unknown[];
    return this.slots().map((slot) =>
      slot.position < answers.length ? checkResult(answers[slot.position]) : `returned ${answers.length} results; the manifest names index ${slot.position}`,
    );
  }

  private base(
    slot: { index: number; name: string },
    run: { startedAt: number; durationMs: number; exitCode: number | null; input: unknown },
    first: boolean,
    output: unknown,
  ): ValidationRecord {
    const capture = this.validator.kind !== 'judge' && this.validator.capture === true;
    return {
      id: newId('val', run.startedAt),
      index: slot.index,
      name: slot.name,
      kind: this.validator.kind === 'judge' ? 'judge' : 'code',
      status: 'running',
      startedAt: run.startedAt,
      durationMs: run.durationMs,
      message: null,
      exitCode: run.exitCode,
      truncated: false,
      input: capture ? jsonCapture(run.input, this.redactor, this.captureChars) : omitted(),
      output: output === undefined ? empty() : jsonCapture(output, this.redactor, this.captureChars),
      error: empty(),
      // The run's logs, calls and judgment are the validator's, not one check's: kept once, on the first record.
      calls: first ? this.calls : [],
      logs: first ? this.logs : [],
      judgment: first ? this.judgment : null,
      metadata: empty(),
    };
  }
}

/** Marks the records whose captures, calls or logs were cut (or, on the first, dropped). */
function sealed(records: ValidationRecord[], dropped: boolean): ValidationRecord[] {
  return records.map((record, position) => ({
    ...record,
    truncated:
      (position === 0 && dropped) ||
      [record.input, record.output, record.error, record.metadata].some((capture) => capture.truncated) ||
      record.calls.some((call) => call.input.truncated || call.output.truncated || call.error.truncated) ||
      record.logs.some((log) => log.value.truncated),
  }));
}

function checkResult(value: unknown): CheckResult | string {
  if (typeof value === 'boolean') return { passed: value, score: null, message: null, metadata: undefined };
  if (value === null || typeof value !== 'object' || Array.isArray(value)) return `returned ${describe(value)}; ${RESULT_RULE}`;
  const answer = value as Record<string, unknown>;
  if (typeof answer.passed !== 'boolean') return `returned an object without a boolean "passed"; ${RESULT_RULE}`;
  if (answer.score !== undefined && (typeof answer.score !== 'number' || !Number.isFinite(answer.score))) return 'returned a score that is not a finite number';
  if (answer.message !== undefined && answer.message !== null && typeof answer.message !== 'string') return 'returned a message that is not a string';
  return {
    passed: answer.passed,
    score: typeof answer.score === 'number' ? answer.score : null,
    message: typeof answer.message === 'string' ? answer.message : null,
    metadata: answer.metadata,
  };
}

function describe(value: unknown): string {
  if (value === undefined) return 'nothing';
  if (Array.isArray(value)) return 'an array';
  if (value === null) return 'null';
  return typeof value === 'object' ? 'an object' : `a ${typeof value}`;
}

/** A record's message: one line, bounded. */
function line(text: string): string {
  const flat = text.replace(/\s*[\r\n]+\s*/g, ' ').trim();
  return flat.length <= MESSAGE_CHARS ? flat : `${flat.slice(0, MESSAGE_CHARS - 1)}…`;
}
