// Live progress of a running batch: the server's event stream when it has one, else polling.
import { keyStore } from './api.js';

const POLL_MS = 1000;
const DEBOUNCE_MS = 200;
const RECONNECT_MS = 1000;

/**
 * Calls `onChange` (debounced) whenever the batch may have changed, until `stop()` is called.
 * The page re-reads the batch on each call rather than patching it per event: one code path for
 * the first load and every update, and nothing to get out of step.
 *
 * The stream is read with fetch() and a stream reader, because EventSource cannot send the
 * `authorization` header. A server without the stream (404 or 405) is polled every second.
 * Returns `{ stop, mode }`; `mode()` is "stream", "polling" or "connecting".
 */
export function watchBatch(batchId, onChange) {
  const controller = new AbortController();
  let stopped = false;
  let mode = 'connecting';
  let timer = null;
  let poller = null;
  let lastEventId = null;

  const changed = () => {
    if (stopped || timer !== null) return;
    timer = setTimeout(() => {
      timer = null;
      if (!stopped) onChange();
    }, DEBOUNCE_MS);
  };

  const poll = () => {
    mode = 'polling';
    poller = setInterval(() => !stopped && onChange(), POLL_MS);
  };

  const connect = async () => {
    const headers = { authorization: `Bearer ${keyStore.get() ?? ''}`, accept: 'text/event-stream' };
    if (lastEventId !== null) headers['last-event-id'] = lastEventId;
    let response;
    try {
      response = await fetch(`/v1/evals.batches.watch?id=${encodeURIComponent(batchId)}`, { headers, signal: controller.signal });
    } catch {
      if (!stopped) setTimeout(() => !stopped && void connect(), RECONNECT_MS);
      return;
    }
    if (!response.ok || !response.body) {
      // No stream here (a server without it, or a refusal): polling shows the batch and any error.
      poll();
      return;
    }
    mode = 'stream';
    changed();
    let finished = false;
    try {
      for await (const event of serverSentEvents(response.body)) {
        if (event.id !== null) lastEventId = event.id;
        if (event.event === 'batch.finished') finished = true;
        changed();
      }
    } catch {
      // A dropped connection: resume below from the last event seen.
    }
    if (!stopped && !finished) setTimeout(() => !stopped && void connect(), RECONNECT_MS);
  };

  void connect();
  return {
    mode: () => mode,
    stop() {
      stopped = true;
      controller.abort();
      if (timer !== null) clearTimeout(timer);
      if (poller !== null) clearInterval(poller);
    },
  };
}

/** Parses a text/event-stream body into `{id, event, data}` records (the WHATWG format). */
export async function* serverSentEvents(body) {
  const reader = body.pipeThrough(new TextDecoderStream()).getReader();
  let buffer = '';
  let current = { id: null, event: 'message', data: [] };
  for (;;) {
    const { value, done } = await reader.read();
    if (done) return;
    buffer += value;
    let newline;
    while ((newline = buffer.search(/\r\n|\r|\n/)) >= 0) {
      const line = buffer.slice(0, newline);
      buffer = buffer.slice(newline + (buffer.startsWith('\r\n', newline) ? 2 : 1));
      if (line === '') {
        if (current.data.length > 0 || current.event !== 'message') yield { id: current.id, event: current.event, data: current.data.join('\n') };
        current = { id: current.id, event: 'message', data: [] };
        continue;
      }
      if (line.startsWith(':')) continue;
      const colon = line.indexOf(':');
      const field = colon < 0 ? line : line.slice(0, colon);
      const text = colon < 0 ? '' : line.slice(colon + 1).replace(/^ /, '');
      if (field === 'data') current.data.push(text);
      else if (field === 'event') current.event = text;
      else if (field === 'id') current.id = text;
    }
  }
}
