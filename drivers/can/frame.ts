/** One classic CAN frame (at most 8 data bytes). */
export interface CanFrame {
  /** 11-bit standard or 29-bit extended identifier. */
  readonly id: number;
  readonly extended: boolean;
  /** 0..8 bytes. */
  readonly data: Uint8Array;
}

export function canFrame(id: number, data: ArrayLike<number>, extended = false): CanFrame {
  return { id, extended, data: Uint8Array.from(data) };
}

export function formatCanId(id: number, extended = false): string {
  return `0x${id
    .toString(16)
    .toUpperCase()
    .padStart(extended ? 8 : 3, '0')}`;
}

export function describeFrame(f: CanFrame): string {
  return `${formatCanId(f.id, f.extended)} [${Array.from(f.data, (b) => b.toString(16).padStart(2, '0')).join(' ')}]`;
}
