/** One Server-Sent Event as a client parses it. */
export interface StreamEvent {
  id: string;
  event: string;
  data: any;
}

export interface EventStreamAnswer {
  status: number;
  contentType: string | null;
  events: StreamEvent[];
  /** Error bodies (a refusal before the stream) are JSON. */
  body: any;
}

/**
 * Reads `GET url` as text/event-stream until the server ends it (or `stopAfter` events, then the
 * client hangs up), over real HTTP with fetch.
 */
export async function readEventStream(
  url: string,
  key: string | null,
  options: { headers?: Record<string, string>; stopAfter?: number; timeoutMs?: number; onOpen?: () => void } = {},
): Promise<EventStreamAnswer> {
  const abort = new AbortController();
  const timer = setTimeout(() => abort.abort(), options.timeoutMs ?? 60000);
  try {
    const response = await fetch(url, { headers: { ...(key ? { authorization: `Bearer ${key}` } : {}), ...options.headers }, signal: abort.signal });
    const contentType = response.headers.get('content-type');
    if (!contentType?.startsWith('text/event-stream')) {
      return { status: response.status, contentType, events: [], body: JSON.parse(await response.text()) };
    }
    options.onOpen?.();
    const events: StreamEvent[] = [];
    const decoder = new TextDecoder();
    let buffer = '';
    const reader = response.body!.getReader();
    for (;;) {
      const { done, value } = await reader.read();
      if (done) break;
      buffer += decoder.decode(value, { stream: true });
      let end: number;
      while ((end = buffer.indexOf('\n\n')) >= 0) {
        const block = buffer.slice(0, end);
        buffer = buffer.slice(end + 2);
        const fields = Object.fromEntries(
          block
            .split('\n')
            .filter((line) => line !== '' && !line.startsWith(':'))
            .map((line) => [line.slice(0, line.indexOf(':')), line.slice(line.indexOf(':') + 1).trimStart()]),
        );
        if (fields.event) events.push({ id: fields.id, event: fields.event, data: JSON.parse(fields.data) });
      }
      if (options.stopAfter !== undefined && events.length >= options.stopAfter) {
        await reader.cancel();
        break;
      }
    }
    return { status: response.status, contentType, events, body: null };
  } finally {
    clearTimeout(timer);
  }
}
