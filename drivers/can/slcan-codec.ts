/**
 * Lawicel / SLCAN ASCII framing, both directions (host side and adapter side), written here because
 * no maintained npm package does SLCAN over the serialport API: `tIIILDD…\r` standard frames,
 * `TIIIIIIIILDD…\r` extended, `\r` / `z\r` OK, BEL (0x07) error. The decoders resync on garbage:
 * anything that does not parse up to the next `\r` or BEL is counted and dropped, never thrown.
 */
import type { CanFrame } from './frame.js';

const CR = 0x0d;
const BEL = 0x07;
/** Longest valid line: `T` + 8 id + 1 dlc + 16 data + 4 timestamp digits. */
const MAX_LINE = 30;

const HEX = '0123456789ABCDEF';

function hexVal(c: number): number {
  if (c >= 0x30 && c <= 0x39) return c - 0x30;
  if (c >= 0x41 && c <= 0x46) return c - 0x41 + 10;
  if (c >= 0x61 && c <= 0x66) return c - 0x61 + 10;
  return -1;
}

/** Encodes a frame as an SLCAN transmit (or, from an adapter, receive) line including the trailing `\r`. */
export function encodeSlcanFrame(frame: CanFrame): Buffer {
  const idDigits = frame.extended ? 8 : 3;
  const len = 1 + idDigits + 1 + frame.data.length * 2 + 1;
  const out = Buffer.allocUnsafe(len);
  encodeSlcanFrameInto(frame, out, 0);
  return out;
}

/** Writes the line into `out` at `offset`; returns the offset after it. Lets a caller batch frames into one write. */
export function encodeSlcanFrameInto(frame: CanFrame, out: Buffer, offset: number): number {
  const idDigits = frame.extended ? 8 : 3;
  let o = offset;
  out[o++] = frame.extended ? 0x54 /* T */ : 0x74; /* t */
  for (let i = idDigits - 1; i >= 0; i--) out[o++] = HEX.charCodeAt((frame.id >>> (i * 4)) & 0xf);
  out[o++] = HEX.charCodeAt(frame.data.length);
  for (let i = 0; i < frame.data.length; i++) {
    out[o++] = HEX.charCodeAt(frame.data[i] >> 4);
    out[o++] = HEX.charCodeAt(frame.data[i] & 0xf);
  }
  out[o++] = CR;
  return o;
}

export function slcanFrameLength(frame: CanFrame): number {
  return 1 + (frame.extended ? 8 : 3) + 1 + frame.data.length * 2 + 1;
}

/** Parses one line body (without the terminator) as `t`/`T` frame; undefined if it is not one. */
export function parseSlcanFrameLine(line: Uint8Array): CanFrame | undefined {
  const kind = line[0];
  if (kind !== 0x74 && kind !== 0x54) return undefined;
  const extended = kind === 0x54;
  const idDigits = extended ? 8 : 3;
  if (line.length < 1 + idDigits + 1) return undefined;
  let id = 0;
  for (let i = 0; i < idDigits; i++) {
    const v = hexVal(line[1 + i]);
    if (v < 0) return undefined;
    id = id * 16 + v;
  }
  if (!extended && id > 0x7ff) return undefined;
  if (extended && id > 0x1fffffff) return undefined;
  const dlc = hexVal(line[1 + idDigits]);
  if (dlc < 0 || dlc > 8) return undefined;
  const dataStart = 2 + idDigits;
  const rest = line.length - dataStart - dlc * 2;
  // Some firmwares append a 4-digit timestamp; anything else is malformed.
  if (rest !== 0 && rest !== 4) return undefined;
  const data = new Uint8Array(dlc);
  for (let i = 0; i < dlc; i++) {
    const hi = hexVal(line[dataStart + 2 * i]);
    const lo = hexVal(line[dataStart + 2 * i + 1]);
    if (hi < 0 || lo < 0) return undefined;
    data[i] = (hi << 4) | lo;
  }
  for (let i = line.length - rest; i < line.length; i++) if (hexVal(line[i]) < 0) return undefined;
  return { id, extended, data };
}

export type SlcanHostEvent =
  | { readonly type: 'frame'; readonly frame: CanFrame }
  | { readonly type: 'ok'; readonly transmitted: boolean }
  | { readonly type: 'error' }
  | { readonly type: 'garbage'; readonly bytes: number };

/** Host-side decoder: what an SLCAN adapter sends us. */
export class SlcanHostDecoder {
  private readonly line = Buffer.alloc(MAX_LINE);
  private len = 0;
  private overflow = false;
  /** Bytes past MAX_LINE in an overlong line, so garbage is reported at its true size. */
  private overflowBytes = 0;

  constructor(private readonly emit: (e: SlcanHostEvent) => void) {}

  push(chunk: Uint8Array): void {
    for (let i = 0; i < chunk.length; i++) {
      const b = chunk[i];
      if (b === BEL) {
        if (this.len > 0 || this.overflow) this.emit({ type: 'garbage', bytes: this.len + this.overflowBytes });
        this.reset();
        this.emit({ type: 'error' });
      } else if (b === CR) {
        this.finishLine();
      } else if (this.len >= MAX_LINE) {
        this.overflow = true;
        this.overflowBytes++;
        // Report a runaway line as it grows, not only at a CR that may never come.
        if (this.overflowBytes >= 4096) {
          this.emit({ type: 'garbage', bytes: this.overflowBytes });
          this.overflowBytes = 0;
        }
      } else {
        this.line[this.len++] = b;
      }
    }
  }

  private finishLine(): void {
    if (this.overflow) {
      this.emit({ type: 'garbage', bytes: this.len + this.overflowBytes });
    } else if (this.len === 0) {
      this.emit({ type: 'ok', transmitted: false });
    } else if (this.len === 1 && (this.line[0] === 0x7a || this.line[0] === 0x5a)) {
      this.emit({ type: 'ok', transmitted: true });
    } else {
      const frame = parseSlcanFrameLine(this.line.subarray(0, this.len));
      if (frame) this.emit({ type: 'frame', frame });
      // Version/serial answers (V…, N…) and status flags (F..) are not frames; a stray line is garbage.
      else this.emit({ type: 'garbage', bytes: this.len });
    }
    this.reset();
  }

  private reset(): void {
    this.len = 0;
    this.overflow = false;
    this.overflowBytes = 0;
  }
}

export type SlcanAdapterEvent =
  | { readonly type: 'frame'; readonly frame: CanFrame }
  | { readonly type: 'command'; readonly text: string }
  | { readonly type: 'garbage'; readonly bytes: number };

/** Adapter-side decoder (used by the emulator): what a host sends an SLCAN adapter. */
export class SlcanAdapterDecoder {
  private readonly line = Buffer.alloc(MAX_LINE);
  private len = 0;
  private overflow = false;

  constructor(private readonly emit: (e: SlcanAdapterEvent) => void) {}

  push(chunk: Uint8Array): void {
    for (let i = 0; i < chunk.length; i++) {
      const b = chunk[i];
      if (b === CR) {
        if (this.overflow) this.emit({ type: 'garbage', bytes: this.len });
        else if (this.len > 0) {
          const first = this.line[0];
          if (first === 0x74 || first === 0x54) {
            const frame = parseSlcanFrameLine(this.line.subarray(0, this.len));
            if (frame) this.emit({ type: 'frame', frame });
            else this.emit({ type: 'garbage', bytes: this.len });
          } else {
            this.emit({ type: 'command', text: this.line.toString('latin1', 0, this.len) });
          }
        } else this.emit({ type: 'command', text: '' });
        this.len = 0;
        this.overflow = false;
      } else if (this.len >= MAX_LINE) this.overflow = true;
      else this.line[this.len++] = b;
    }
  }
}

export const SLCAN_OK = Buffer.from([CR]);
export const SLCAN_TX_OK = Buffer.from([0x7a, CR]);
export const SLCAN_ERROR = Buffer.from([BEL]);

/** Lawicel bit-rate commands: S0 = 10 kbit/s … S8 = 1 Mbit/s. */
export const SLCAN_BITRATES: Readonly<Record<number, string>> = {
  10_000: 'S0',
  20_000: 'S1',
  50_000: 'S2',
  100_000: 'S3',
  125_000: 'S4',
  250_000: 'S5',
  500_000: 'S6',
  800_000: 'S7',
  1_000_000: 'S8',
};
