/**
 * Damiao USB-CAN serial framing, both directions, written here because the vendor ships only Python:
 *   host → adapter: 30 bytes `55 AA 1E 03 01 00 00 00 0A 00 00 00 00 | id (4 LE) | 00 | dlc | 00 00 | data (8) | 00`
 *   adapter → host: 16 bytes `AA | cmd | info | id (4 LE) | data (8) | 55`, cmd 0x11 = a received frame.
 * The framing has no checksum, so a candidate is a frame only when every fixed field is what the
 * protocol allows (header, reserved bytes, DLC 0–8, an ID that fits 11 or 29 bits, trailer). After
 * every rejected candidate the decoders re-scan from the next byte, never skip the candidate: a
 * truncated frame then costs only its own bytes, and the whole frame after it still decodes.
 * Whether a report's *values* are plausible (a position step no motor can make) is for the motor
 * layer (drivers/yam/arm-link.ts), which knows the motor and the time between its reports.
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
  /** A candidate with header and trailer whose fields no adapter writes; its first byte is counted as garbage too. */
  | { readonly type: 'rejected'; readonly reason: string }
  | { readonly type: 'garbage'; readonly bytes: number };

/**
 * Accumulates bytes and hands out fixed-length candidates that start with `head` and end with `tail`.
 * `judge` sees the candidate followed by every byte buffered after it and returns 'accept', 'reject'
 * (scanning then resumes one byte after the candidate's start) or 'wait' (for more bytes, to tell a
 * real frame from a truncated one running into the next).
 */
class FixedPacketScanner {
  private readonly buf: Buffer;
  private len = 0;

  constructor(
    private readonly size: number,
    private readonly head: readonly number[],
    private readonly tail: number,
  ) {
    this.buf = Buffer.alloc(size * 4);
  }

  /** Calls `onPacket` for each candidate and `onGarbage` with the number of skipped bytes. */
  push(chunk: Uint8Array, judge: (candidateAndRest: Buffer) => Verdict, onGarbage: (n: number) => void): void {
    let i = 0;
    while (i < chunk.length) {
      const n = Math.min(chunk.length - i, this.buf.length - this.len);
      this.buf.set(chunk.subarray(i, i + n), this.len);
      this.len += n;
      i += n;
      this.drain(judge, onGarbage);
    }
  }

  private drain(judge: (candidateAndRest: Buffer) => Verdict, onGarbage: (n: number) => void): void {
    let start = 0;
    let skipped = 0;
    while (this.len - start > 0) {
      if (!this.headMatches(start)) {
        start++;
        skipped++;
        continue;
      }
      if (this.len - start < this.size) break; // wait for the rest
      const verdict =
        this.buf[start + this.size - 1] === this.tail ? judge(this.buf.subarray(start, this.len)) : 'reject';
      // A judge waits only while less than two frames' worth is buffered after `start`, well inside the buffer.
      if (verdict === 'wait') break;
      if (verdict !== 'reject') {
        if (skipped > 0) {
          onGarbage(skipped);
          skipped = 0;
        }
        start += this.size;
        continue;
      }
      // Not a frame: its first byte is garbage, and the next frame may start anywhere inside it.
      start++;
      skipped++;
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

type Verdict = 'accept' | 'reject' | 'wait';

/** Info byte of a report: bits 0–5 DLC, bit 6 extended ID, bit 7 remote frame. */
const INFO_DLC_MASK = 0x3f;
const INFO_EXTENDED = 0x40;
const INFO_REMOTE = 0x80;

/** Why the report fields at `at` are impossible, or undefined if they are fine. */
function implausibleReportFields(p: Buffer, at: number): string | undefined {
  const info = p[at + 2];
  const dlc = info & INFO_DLC_MASK;
  if (dlc > 8) return `DLC ${dlc}`;
  // Motors never send remote frames, and a CanFrame cannot carry one.
  if (info & INFO_REMOTE) return 'a remote frame';
  const id = p.readUInt32LE(at + 3);
  if (info & INFO_EXTENDED ? id > 0x1fffffff : id > 0x7ff)
    return `ID 0x${id.toString(16)} does not fit ${info & INFO_EXTENDED ? 29 : 11} bits`;
  return undefined;
}

/** Header byte, cmd, info and ID: the part of a received-frame report whose values are constrained. */
const REPORT_HEAD_LENGTH = 7;

function reportHeadAt(p: Buffer, k: number): boolean {
  return p[k] === 0xaa && p[k + 1] === DAMIAO_RX_RECEIVED && implausibleReportFields(p, k) === undefined;
}

/**
 * Judges a 16-byte report candidate (`p` holds it and whatever was buffered after it). Besides its own
 * fields: a candidate with a whole, plausible received-frame header inside it may be the remains of a
 * truncated report running into the next one (its trailer test passed because a data byte of the
 * next report was 0x55). Then the inner report decides: if it is complete and valid, the outer one was
 * the truncated remains and is rejected; if it is not, the outer one is real. Until the inner one has
 * arrived, wait. Real motor reports hold such a header (7 constrained bytes) almost never, so waiting
 * is rare and lasts until the next report.
 */
function judgeReport(p: Buffer): { verdict: Verdict; reason?: string } {
  const own = implausibleReportFields(p, 0);
  if (own !== undefined) return { verdict: 'reject', reason: own };
  for (let k = 1; k + REPORT_HEAD_LENGTH <= DAMIAO_RX_LENGTH; k++) {
    if (!reportHeadAt(p, k)) continue;
    if (p.length < k + DAMIAO_RX_LENGTH) return { verdict: 'wait' };
    if (p[k + DAMIAO_RX_LENGTH - 1] === 0x55)
      return { verdict: 'reject', reason: `a whole report starts at its byte ${k}` };
  }
  return { verdict: 'accept' };
}

/** Host-side decoder: 16-byte reports from the adapter. */
export class DamiaoHostDecoder {
  private readonly scanner = new FixedPacketScanner(DAMIAO_RX_LENGTH, [0xaa], 0x55);
  constructor(private readonly emit: (e: DamiaoHostEvent) => void) {}

  push(chunk: Uint8Array): void {
    this.scanner.push(
      chunk,
      (p) => {
        const { verdict, reason } = judgeReport(p);
        if (verdict === 'reject') this.emit({ type: 'rejected', reason: reason ?? '' });
        if (verdict !== 'accept') return verdict;
        const cmd = p[1];
        if (cmd !== DAMIAO_RX_RECEIVED) {
          this.emit({ type: 'report', cmd });
          return 'accept';
        }
        const info = p[2];
        // DLC 0 is a frame without data: never eight zero bytes, which would read as feedback at −P_MAX.
        const dlc = info & INFO_DLC_MASK;
        const extended = (info & INFO_EXTENDED) !== 0;
        this.emit({
          type: 'frame',
          frame: { id: p.readUInt32LE(3), extended, data: Uint8Array.from(p.subarray(7, 7 + dlc)) },
        });
        return 'accept';
      },
      (n) => this.emit({ type: 'garbage', bytes: n }),
    );
  }
}

export type DamiaoAdapterEvent =
  | { readonly type: 'frame'; readonly frame: CanFrame }
  | { readonly type: 'rejected'; readonly reason: string }
  | { readonly type: 'garbage'; readonly bytes: number };

/**
 * Shortest header prefix that marks a request starting inside a candidate. Shorter overlaps need no
 * test: the candidate's last byte would then be one of 55 AA 1E 03 01, never the trailer 00.
 */
const REQUEST_PREFIX_LENGTH = 6;

/** Judges a 30-byte request candidate (`p` holds it and whatever was buffered after it), as judgeReport does. */
function judgeRequest(p: Buffer): { verdict: Verdict; reason?: string } {
  const own = implausibleRequest(p, 0);
  if (own !== undefined) return { verdict: 'reject', reason: own };
  for (let k = 1; k + REQUEST_PREFIX_LENGTH <= DAMIAO_TX_LENGTH; k++) {
    let match = true;
    for (let j = 0; j < REQUEST_PREFIX_LENGTH && match; j++) match = p[k + j] === TX_HEADER[j];
    if (!match) continue;
    if (p.length < k + DAMIAO_TX_LENGTH) return { verdict: 'wait' };
    if (p[k + DAMIAO_TX_LENGTH - 1] === 0x00 && implausibleRequest(p, k) === undefined)
      return { verdict: 'reject', reason: `a whole request starts at its byte ${k}` };
  }
  return { verdict: 'accept' };
}

/** Why the transmit request's fixed fields at `at` are impossible, or undefined if they are fine. */
function implausibleRequest(b: Buffer, at: number): string | undefined {
  const p = b.subarray(at, at + DAMIAO_TX_LENGTH);
  for (let i = 0; i < TX_HEADER.length - 1; i++)
    if (p[i] !== TX_HEADER[i]) return `byte ${i} is 0x${p[i].toString(16)}`;
  if (p[12] > 1 || p[17] > 1) return 'an ID-type flag that is not 0 or 1';
  if (p[18] > 8) return `DLC ${p[18]}`;
  if (p[19] !== 0 || p[20] !== 0) return 'non-zero reserved bytes';
  const id = p.readUInt32LE(13);
  const extended = p[17] === 0x01;
  if (extended ? id > 0x1fffffff : id > 0x7ff) return `ID 0x${id.toString(16)} does not fit ${extended ? 29 : 11} bits`;
  return undefined;
}

/** Adapter-side decoder (used by the emulator): 30-byte transmit requests from the host. */
export class DamiaoAdapterDecoder {
  private readonly scanner = new FixedPacketScanner(DAMIAO_TX_LENGTH, [0x55, 0xaa, 0x1e], 0x00);
  constructor(private readonly emit: (e: DamiaoAdapterEvent) => void) {}

  push(chunk: Uint8Array): void {
    this.scanner.push(
      chunk,
      (p) => {
        const { verdict, reason } = judgeRequest(p);
        if (verdict === 'reject') this.emit({ type: 'rejected', reason: reason ?? '' });
        if (verdict !== 'accept') return verdict;
        const dlc = p[18];
        this.emit({
          type: 'frame',
          frame: { id: p.readUInt32LE(13), extended: p[17] === 0x01, data: Uint8Array.from(p.subarray(21, 21 + dlc)) },
        });
        return 'accept';
      },
      (n) => this.emit({ type: 'garbage', bytes: n }),
    );
  }
}
