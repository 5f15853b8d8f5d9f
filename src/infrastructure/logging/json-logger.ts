import type { LoggerService } from '@nestjs/common';
import type { LogLevel } from '../../config';

const RANK: Record<LogLevel, number> = { debug: 10, info: 20, warn: 30, error: 40, silent: 100 };

export type LogFields = Record<string, unknown>;

/**
 * Structured logs: one JSON object per line on stdout. Callers pass fields, never request
 * bodies or credentials, so that no secret reaches a log line.
 */
export class JsonLogger implements LoggerService {
  constructor(
    private readonly level: LogLevel = 'info',
    private readonly write: (line: string) => void = (line) => process.stdout.write(line + '\n'),
  ) {}

  debug(message: unknown, ...rest: unknown[]): void {
    this.emit('debug', message, rest);
  }

  info(message: unknown, ...rest: unknown[]): void {
    this.emit('info', message, rest);
  }

  log(message: unknown, ...rest: unknown[]): void {
    this.emit('info', message, rest);
  }

  warn(message: unknown, ...rest: unknown[]): void {
    this.emit('warn', message, rest);
  }

  error(message: unknown, ...rest: unknown[]): void {
    this.emit('error', message, rest);
  }

  verbose(message: unknown, ...rest: unknown[]): void {
    this.emit('debug', message, rest);
  }

  private emit(level: LogLevel, message: unknown, rest: unknown[]): void {
    if (RANK[level] < RANK[this.level]) return;
    const entry: LogFields = { time: new Date().toISOString(), level, msg: String(message) };
    for (const extra of rest) {
      // Nest passes its context name as a trailing string; our own callers pass field objects.
      if (typeof extra === 'string') entry.context = extra;
      else if (extra && typeof extra === 'object') Object.assign(entry, extra);
    }
    this.write(JSON.stringify(entry));
  }
}
