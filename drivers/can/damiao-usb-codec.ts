/**
 * Damiao USB-CAN serial framing, both directions, written here because the vendor ships only Python:
 *   host → adapter: 30 bytes `55 AA 1E 03 01 00 00 00 0A 00 00 00 00 | id (4 LE) | 00 | dlc | 00 00 | data (8) | 00`
 *   adapter → host: 16 bytes `AA | cmd | info | id (4 LE) | data (8) | 55`, cmd 0x11 = a received frame.
 * Both decoders resync byte by byte on a bad header or trailer, so garbage and truncated frames cost
 * only themselves.
 */
import type { CanFrame } from './frame.js';

export const DAMIAO_TX_LENGTH = 30;
export const DAMIAO_RX_LENGTH = 16;
export const DAMIAO_RX_RECEIVED = 0x11;
const TX_HEADER = [0x55, 0xaa, 0x1e, 0x03, 0x01, 0x00, 0x00, 0x00, 0x0a, 0x00, 0x00, 0x00, 0x00] as const;

/** Encodes a transmit request into `out` at `offset`; returns the offset after it. */
export function encodeDamiaoTxInto(frame: CanFrame, out: Buffer, offset: number): number {
  for (let i = 0; i < TX_HEADER.length; i++) out[offset + i] = TX_HEADER[i];
  out.writeUInt32LE(frame.id >>> 0, offset + 13);
  out[offset + 17] = frame.extended ? 0x01 : 0x00;
  out[offset + 18] = frame.data.length;
  out[offset + 19] = 0;
  out[offset + 20] = 0;
  for (let i = 0; i < 8; i++) out[offset + 21 + i] = i < frame.data.length ? frame.data[i] : 0;
  out[offset + 29] = 0;
  return offset + DAMIAO_TX_LENGTH;
}

export function encodeDamiaoTx(frame: CanFrame): Buffer {
  const out = Buffer.allocUnsafe(DAMIAO_TX_LENGTH);
  encodeDamiaoTxInto(frame, out, 0);
  return out;
}

/** Encodes a received-frame report (adapter → host). */
export function encodeDamiaoRx(frame: CanFrame, cmd = DAMIAO_RX_RECEIVED): Buffer {
  const out = Buffer.alloc(DAMIAO_RX_LENGTH);
  out[0] = 0xaa;
  out[1] = cmd;
  out[2] = (frame.data.length & 0x0f) | (frame.extended ? 0x40 : 0);
  out.writeUInt32LE(frame.id >>> 0, 3);
  for (let i = 0; i < 8; i++) out[7 + i] = i < frame.data.length ? frame.data[i] : 0;
  out[15] = 0x55;
  return out;
}

export type DamiaoHostEvent =
  | { readonly type: 'frame'; readonly frame: CanFrame }
  /** A well-formed report that is not a received frame (adapter status / transmit result). */
  | { readonly type: 'report'; readonly cmd: number }
  | { readonly type: 'garbage'; readonly bytes: number };

/** Accumulates bytes and hands out fixed-length packets that start with `head` and end with `tail`. */
class FixedPacketScanner {
  private readonly buf: Buffer;
  private len = 0;

  constructor(
    private readonly size: number,
    private readonly head: readonly number[],
    private readonly tail: number | undefined,
  ) {
    this.buf = Buffer.alloc(size * 4);
  }

  /** Calls `onPacket` for each packet and `onGarbage` with the number of skipped bytes. */
  push(chunk: Uint8Array, onPacket: (p: Buffer) => void, onGarbage: (n: number) => void): void {
    let i = 0;
    while (i < chunk.length) {
      const n = Math.min(chunk.length - i, this.buf.length - this.len);
      this.buf.set(chunk.subarray(i, i + n), this.len);
      this.len += n;
      i += n;
      this.drain(onPacket, onGarbage);
    }
  }

  private drain(onPacket: (p: Buffer) => void, onGarbage: (n: number) => void): void {
    let start = 0;
    let skipped = 0;
    while (this.len - start > 0) {
      // Find a header candidate.
      if (!this.headMatches(start)) {
        start++;
        skipped++;
        continue;
      }
      if (this.len - start < this.size) break; // wait for the rest
      if (this.tail !== undefined && this.buf[start + this.size - 1] !== this.tail) {
        start++;
        skipped++;
        continue;
      }
      if (skipped > 0) {
        onGarbage(skipped);
        skipped = 0;
      }
      onPacket(this.buf.subarray(start, start + this.size));
      start += this.size;
    }
    if (skipped > 0) onGarbage(skipped);
    if (start > 0) {
      this.buf.copyWithin(0, start, this.len);
      this.len -= start;
    }
  }

  private headMatches(at: number): boolean {
    for (let k = 0; k < this.head.length && at + k < this.len; k++) if (this.buf[at + k] !== this.head[k]) return false;
    return true;
  }
}

/** Host-side decoder: 16-byte reports from the adapter. */
export class DamiaoHostDecoder {
  private readonly scanner = new FixedPacketScanner(DAMIAO_RX_LENGTH, [0xaa], 0x55);
  constructor(private readonly emit: (e: DamiaoHostEvent) => void) {}

  push(chunk: Uint8Array): void {
    this.scanner.push(
      chunk,
      (p) => {
        const cmd = p[1];
        if (cmd !== DAMIAO_RX_RECEIVED) {
          this.emit({ type: 'report', cmd });
          return;
        }
        const info = p[2];
        const dlc = Math.min(8, info & 0x0f || 8);
        const extended = (info & 0x40) !== 0;
        const id = p.readUInt32LE(3);
        this.emit({ type: 'frame', frame: { id: extended ? id & 0x1fffffff : id & 0x7ff, extended, data: Uint8Array.from(p.subarray(7, 7 + dlc)) } });
      },
      (n) => this.emit({ type: 'garbage', bytes: n }),
    );
  }
}

export type DamiaoAdapterEvent = { readonly type: 'frame'; readonly frame: CanFrame } | { readonly type: 'garbage'; readonly bytes: number };

/** Adapter-side decoder (used by the emulator): 30-byte transmit requests from the host. */
export class DamiaoAdapterDecoder {
  private readonly scanner = new FixedPacketScanner(DAMIAO_TX_LENGTH, [0x55, 0xaa, 0x1e], 0x00);
  constructor(private readonly emit: (e: DamiaoAdapterEvent) => void) {}

  push(chunk: Uint8Array): void {
    this.scanner.push(
      chunk,
      (p) => {
        const dlc = Math.min(8, p[18]);
        const extended = p[17] === 0x01;
        const id = p.readUInt32LE(13);
        this.emit({ type: 'frame', frame: { id: extended ? id & 0x1fffffff : id & 0x7ff, extended, data: Uint8Array.from(p.subarray(21, 21 + dlc)) } });
      },
      (n) => this.emit({ type: 'garbage', bytes: n }),
    );
  }
}
