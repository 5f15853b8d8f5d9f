import * as net from 'node:net';

/** What a raw socket read back: the answer, if one arrived whole, and any socket error. */
export interface RawAnswer {
  status: number | null;
  headers: Record<string, string>;
  text: string;
  body: any;
  /** A socket error (ECONNRESET, EPIPE) met while sending or reading, if any. */
  error: string | null;
  /** Whether every byte of the request was handed to the socket. */
  sentAll: boolean;
}

function parse(buffer: Buffer): Omit<RawAnswer, 'error' | 'sentAll'> | null {
  const end = buffer.indexOf('\r\n\r\n');
  if (end < 0) return null;
  const [statusLine, ...lines] = buffer.subarray(0, end).toString('latin1').split('\r\n');
  const headers: Record<string, string> = {};
  for (const line of lines) headers[line.slice(0, line.indexOf(':')).toLowerCase()] = line.slice(line.indexOf(':') + 1).trim();
  const length = Number(headers['content-length'] ?? 0);
  if (buffer.length < end + 4 + length) return null;
  const text = buffer.subarray(end + 4, end + 4 + length).toString('utf8');
  let body: unknown;
  try {
    body = JSON.parse(text);
  } catch {
    body = undefined;
  }
  return { status: Number(statusLine.split(' ')[1]), headers, text, body };
}

/**
 * Sends `head` and then all of `body` over a plain TCP socket, as a simple client does (the
 * whole request first, then the answer), and reads one answer. Resolves once the request is
 * sent and an answer has arrived whole, or when the socket closes or fails.
 */
export function rawExchange(url: string, head: string, body: Buffer | string = '', chunkBytes = 64 * 1024): Promise<RawAnswer> {
  const { hostname, port } = new URL(url);
  return new Promise((resolve) => {
    const socket = net.connect(Number(port), hostname);
    let received = Buffer.alloc(0);
    let error: string | null = null;
    let sentAll = false;
    let settled = false;
    const settle = (force: boolean) => {
      const answer = parse(received);
      if (settled || (!force && !(sentAll && answer))) return;
      settled = true;
      socket.destroy();
      resolve({ ...(answer ?? { status: null, headers: {}, text: received.toString('utf8'), body: undefined }), error, sentAll });
    };
    socket.on('data', (data: Buffer) => {
      received = Buffer.concat([received, data]);
      settle(false);
    });
    socket.on('error', (failure: NodeJS.ErrnoException) => {
      error ??= failure.code ?? failure.message;
      settle(true);
    });
    socket.on('close', () => settle(true));
    const send = async () => {
      socket.write(head);
      const data = Buffer.from(body);
      for (let offset = 0; offset < data.length; offset += chunkBytes) {
        if (socket.destroyed) return;
        if (!socket.write(data.subarray(offset, offset + chunkBytes))) await new Promise((done) => socket.once('drain', done));
      }
      sentAll = true;
      settle(false);
    };
    socket.on('connect', () => void send());
  });
}
