/**
 * The frames the Python spawn helper reads and writes (spawn_helper.py): a 4-byte
 * big-endian length, then that many bytes: a 4-byte big-endian header length, the header (JSON),
 * and the payload (raw bytes: a chunk of a command's output, or what to write to its stdin).
 * Raw payloads keep output byte for byte, with no encoding on either side.
 */
export interface Frame {
  header: Record<string, unknown>;
  payload: Buffer;
}

export function encodeFrame(header: Record<string, unknown>, payload: Buffer = EMPTY): Buffer {
  const encoded = Buffer.from(JSON.stringify(header), 'utf8');
  const prefix = Buffer.allocUnsafe(8);
  prefix.writeUInt32BE(4 + encoded.length + payload.length, 0);
  prefix.writeUInt32BE(encoded.length, 4);
  return Buffer.concat([prefix, encoded, payload]);
}

const EMPTY = Buffer.alloc(0);

/** Cuts a stream of bytes into frames, however the chunks fall. */
export class FrameReader {
  private buffered: Buffer = EMPTY;

  push(chunk: Buffer): Frame[] {
    let buffer = this.buffered.length === 0 ? chunk : Buffer.concat([this.buffered, chunk]);
    const frames: Frame[] = [];
    while (buffer.length >= 8) {
      const length = buffer.readUInt32BE(0);
      if (buffer.length < 4 + length) break;
      const headerLength = buffer.readUInt32BE(4);
      const header = JSON.parse(buffer.toString('utf8', 8, 8 + headerLength)) as Record<string, unknown>;
      // A copy: a slice would keep the whole chunk alive as long as the payload.
      frames.push({ header, payload: Buffer.from(buffer.subarray(8 + headerLength, 4 + length)) });
      buffer = buffer.subarray(4 + length);
    }
    this.buffered = buffer.length === 0 ? EMPTY : Buffer.from(buffer);
    return frames;
  }
}
