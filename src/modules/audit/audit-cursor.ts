import { BadRequest } from '#shared/errors';

/**
 * The audit's cursor: the log position of the last event of a page, opaque to callers (it may
 * carry more later). Positions only grow, so a page never repeats or skips an event, whatever
 * is appended between two pages.
 */
const PREFIX = 'p1:';

export function encodeCursor(position: number): string {
  return Buffer.from(`${PREFIX}${position}`, 'utf8').toString('base64url');
}

export function decodeCursor(cursor: string): number {
  const text = Buffer.from(cursor, 'base64url').toString('utf8');
  const position = Number(text.slice(PREFIX.length));
  if (!text.startsWith(PREFIX) || !/^\d+$/.test(text.slice(PREFIX.length)) || !Number.isSafeInteger(position)) {
    throw new BadRequest(
      '"cursor" is not a cursor this service gave: pass the "next" of a previous answer unchanged, or leave it out to start at the oldest event.',
    );
  }
  return position;
}
