/**
 * Dynamixel Protocol 2.0 packets: `FF FF FD 00 | ID | LEN_L LEN_H | INST | params | CRC_L CRC_H`,
 * LEN = the bytes after it (instruction, parameters, CRC), CRC-16 with polynomial 0x8005, initial
 * value 0, not reflected, over every byte before the CRC. Byte stuffing as the protocol defines it:
 * an FF FF FD inside the instruction and parameters gets an extra FD (LEN counts it), so the
 * header can never appear inside a packet.
 */

export const HEADER: readonly number[] = [0xff, 0xff, 0xfd, 0x00];
export const BROADCAST_ID = 0xfe;
export const INST_PING = 0x01;
export const INST_READ = 0x02;
export const INST_STATUS = 0x55;
export const INST_SYNC_READ = 0x82;
/** Present Velocity (4 bytes) then Present Position (4 bytes): one sync read of 8 bytes gives both. */
export const ADDR_PRESENT_VELOCITY = 128;
export const ADDR_PRESENT_POSITION = 132;
export const PRESENT_READ_LENGTH = 8;
/** Radians per position tick (4096 ticks per turn). */
export const RAD_PER_TICK = Math.PI / 2048;
/** Velocity unit of the X series: 0.229 rev/min per tick. */
export const RAD_S_PER_VELOCITY_TICK = (0.229 * 2 * Math.PI) / 60;

const CRC_TABLE = (() => {
  const t = new Uint16Array(256);
  for (let i = 0; i < 256; i++) {
    let c = i << 8;
    for (let b = 0; b < 8; b++) c = c & 0x8000 ? ((c << 1) ^ 0x8005) & 0xffff : (c << 1) & 0xffff;
    t[i] = c;
  }
  return t;
})();

export function crc16(bytes: Uint8Array, start = 0, end = bytes.length): number {
  let crc = 0;
  for (let i = start; i < end; i++) crc = ((crc << 8) ^ CRC_TABLE[((crc >> 8) ^ bytes[i]) & 0xff]) & 0xffff;
  return crc;
}

function stuff(body: readonly number[]): number[] {
  const out: number[] = [];
  for (let i = 0; i < body.length; i++) {
    out.push(body[i]);
    if (i >= 2 && body[i] === 0xfd && body[i - 1] === 0xff && body[i - 2] === 0xff) out.push(0xfd);
  }
  return out;
}

function unstuff(body: Uint8Array): Uint8Array {
  const out: number[] = [];
  for (let i = 0; i < body.length; i++) {
    out.push(body[i]);
    if (i >= 2 && body[i] === 0xfd && body[i - 1] === 0xff && body[i - 2] === 0xff && body[i + 1] === 0xfd) i++;
  }
  return Uint8Array.from(out);
}

/** One packet: instruction (or 0x55 status) and its parameters (for a status: error byte first). */
export function encodePacket(id: number, instruction: number, params: readonly number[]): Uint8Array {
  const body = stuff([instruction, ...params]);
  const len = body.length + 2;
  const bytes = Uint8Array.from([...HEADER, id & 0xff, len & 0xff, len >> 8, ...body, 0, 0]);
  const crc = crc16(bytes, 0, bytes.length - 2);
  bytes[bytes.length - 2] = crc & 0xff;
  bytes[bytes.length - 1] = crc >> 8;
  return bytes;
}

export function syncReadPacket(address: number, length: number, ids: readonly number[]): Uint8Array {
  return encodePacket(BROADCAST_ID, INST_SYNC_READ, [address & 0xff, address >> 8, length & 0xff, length >> 8, ...ids]);
}

export function statusPacket(id: number, error: number, data: readonly number[]): Uint8Array {
  return encodePacket(id, INST_STATUS, [error, ...data]);
}

export interface Packet {
  readonly id: number;
  readonly instruction: number;
  /** Unstuffed parameters (a status packet: error byte, then data). */
  readonly params: Uint8Array;
}

export type DecoderEvent =
  | { type: 'packet'; packet: Packet }
  | { type: 'crc-error'; bytes: number }
  | { type: 'garbage'; bytes: number };

/** Longest packet we accept; anything longer is a broken length field. */
const MAX_LEN = 1024;

/** Splits a byte stream into packets; bytes before a header are garbage, a bad CRC is reported and skipped. */
export class PacketDecoder {
  private buf = new Uint8Array(0);

  constructor(private readonly onEvent: (e: DecoderEvent) => void) {}

  push(chunk: Uint8Array): void {
    const merged = new Uint8Array(this.buf.length + chunk.length);
    merged.set(this.buf);
    merged.set(chunk, this.buf.length);
    let o = 0;
    let garbage = 0;
    // Bytes of a packet whose CRC failed are reported once, as that CRC error, not again as garbage.
    let reportedUntil = this.reportedUntil;
    const stray = (from: number, to: number): number => Math.max(0, to - Math.max(from, reportedUntil));
    while (o < merged.length) {
      const h = findHeader(merged, o);
      if (h < 0) {
        // Keep a possible header start at the end for the next chunk.
        const keep = Math.min(3, merged.length - o);
        garbage += stray(o, merged.length - keep);
        o = merged.length - keep;
        break;
      }
      garbage += stray(o, h);
      o = h;
      if (merged.length - o < 7) break;
      const len = merged[o + 5] | (merged[o + 6] << 8);
      if (len < 3 || len > MAX_LEN) {
        garbage += stray(o, o + 1);
        o += 1;
        continue;
      }
      const total = 7 + len;
      if (merged.length - o < total) break;
      const crc = merged[o + total - 2] | (merged[o + total - 1] << 8);
      if (crc16(merged, o, o + total - 2) !== crc) {
        if (garbage) this.onEvent({ type: 'garbage', bytes: garbage });
        garbage = 0;
        this.onEvent({ type: 'crc-error', bytes: total });
        reportedUntil = Math.max(reportedUntil, o + total);
        o += 1; // resync: the next header may start inside this one
        continue;
      }
      if (garbage) this.onEvent({ type: 'garbage', bytes: garbage });
      garbage = 0;
      const body = unstuff(merged.subarray(o + 7, o + total - 2));
      this.onEvent({ type: 'packet', packet: { id: merged[o + 4], instruction: body[0], params: body.subarray(1) } });
      o += total;
    }
    if (garbage) this.onEvent({ type: 'garbage', bytes: garbage });
    this.buf = merged.slice(o);
    this.reportedUntil = Math.max(0, reportedUntil - o);
  }

  private reportedUntil = 0;
}

function findHeader(b: Uint8Array, from: number): number {
  for (let i = from; i + 3 < b.length; i++)
    if (b[i] === 0xff && b[i + 1] === 0xff && b[i + 2] === 0xfd && b[i + 3] === 0x00) return i;
  return -1;
}

export function int32le(b: Uint8Array, o: number): number {
  return b[o] | (b[o + 1] << 8) | (b[o + 2] << 16) | (b[o + 3] << 24) | 0;
}

export function int32Bytes(v: number): number[] {
  const x = v | 0;
  return [x & 0xff, (x >> 8) & 0xff, (x >> 16) & 0xff, (x >>> 24) & 0xff];
}
