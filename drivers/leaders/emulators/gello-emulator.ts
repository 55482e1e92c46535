/**
 * An emulated GELLO arm at the byte level: a chain of seven Dynamixel X servos (IDs 1–7) on one
 * USB serial line, answering Protocol 2.0 Sync Read (and Ping) with status packets whose Present
 * Position is where the operator's hand has the joint. GELLO's gripper convention on the wire
 * (0 open … 1 closed). Served through the in-process serialport binding, or any byte pipe.
 *
 * Typed faults: silence, garbage bytes, CRC errors (the next replies carry a wrong CRC).
 */
import type { BindingPortInterface, OpenOptions } from '@serialport/bindings-interface' with {
  'resolution-mode': 'require',
};
import {
  ARM_SIDES,
  DOF_PER_ARM,
  JOINTS_PER_ARM,
  STATE_DIM,
  type ArmSide,
  type Clock,
} from '../../../src/rig/contract.js';
import {
  EmulatedPort,
  EmulatorBinding,
  type ByteEndpoint,
  type EmulatedSerialDevice,
} from '../../emulators/serial-binding.js';
import {
  ADDR_PRESENT_VELOCITY,
  INST_PING,
  INST_SYNC_READ,
  PacketDecoder,
  RAD_PER_TICK,
  RAD_S_PER_VELOCITY_TICK,
  int32Bytes,
  statusPacket,
} from '../dynamixel-protocol.js';
import { GELLO_DEFAULT_CALIBRATION, GelloLeader, type GelloCalibration } from '../gello-leader.js';
import { scriptedMotion, type HandMotion } from './operator-hand.js';

export type GelloFault =
  | { readonly kind: 'silence' }
  | { readonly kind: 'recover' }
  | { readonly kind: 'garbage'; readonly bytes?: number }
  /** The next `packets` status packets go out with a wrong CRC. */
  | { readonly kind: 'crc-errors'; readonly packets: number };

export class GelloChainEmulator implements ByteEndpoint {
  silent = false;
  corruptNext = 0;
  syncReads = 0;
  private readonly outputs = new Set<(b: Buffer) => void>();
  private readonly decoder: PacketDecoder;
  private readonly q = new Float64Array(STATE_DIM);
  private readonly v = new Float64Array(STATE_DIM);

  constructor(
    readonly side: ArmSide,
    private readonly hand: HandMotion,
    private readonly nowS: () => number,
    private readonly startS: () => number,
    private readonly calibration: GelloCalibration = GELLO_DEFAULT_CALIBRATION,
  ) {
    this.decoder = new PacketDecoder((e) => {
      if (e.type !== 'packet' || this.silent) return;
      const p = e.packet;
      if (p.instruction === INST_SYNC_READ && p.params.length >= 4) {
        this.syncReads++;
        const address = p.params[0] | (p.params[1] << 8);
        const ids = Array.from(p.params.subarray(4));
        const replies = ids.flatMap((id) => (id >= 1 && id <= 7 ? [this.status(id, address)] : []));
        if (replies.length) this.emit(Buffer.concat(replies));
      } else if (p.instruction === INST_PING && p.id >= 1 && p.id <= 7) {
        this.emit(Buffer.from(statusPacket(p.id, 0, [0x06, 0x04, 0x26])));
      }
    });
  }

  /** The servo's status for a sync read at `address` (only 128, velocity + position, is emulated). */
  private status(id: number, address: number): Buffer {
    this.hand.pose(this.nowS() - this.startS(), this.q, this.v);
    const base = this.side === 'left' ? 0 : DOF_PER_ARM;
    const cal = this.calibration;
    let rad: number;
    let radS = 0;
    if (id <= JOINTS_PER_ARM) {
      const j = id - 1;
      rad = (this.q[base + j] + cal.offsetsRad[j]) / cal.signs[j];
      radS = this.v[base + j] / cal.signs[j];
    } else {
      // The hand works the YAM convention (1 open); GELLO's servo reads 0 at open, 1 at closed.
      const closed = 1 - this.q[base + JOINTS_PER_ARM];
      rad = cal.gripperOpenRad + closed * (cal.gripperClosedRad - cal.gripperOpenRad);
    }
    const data =
      address === ADDR_PRESENT_VELOCITY
        ? [...int32Bytes(Math.round(radS / RAD_S_PER_VELOCITY_TICK)), ...int32Bytes(Math.round(rad / RAD_PER_TICK))]
        : new Array<number>(8).fill(0);
    const pkt = Buffer.from(statusPacket(id, 0, data));
    if (this.corruptNext > 0) {
      this.corruptNext--;
      pkt[pkt.length - 1] ^= 0x5a;
    }
    return pkt;
  }

  write(bytes: Uint8Array): void {
    this.decoder.push(bytes);
  }

  onOutput(listener: (bytes: Buffer) => void): () => void {
    this.outputs.add(listener);
    return () => this.outputs.delete(listener);
  }

  inject(fault: GelloFault): void {
    if (fault.kind === 'silence') this.silent = true;
    else if (fault.kind === 'recover') this.silent = false;
    else if (fault.kind === 'crc-errors') this.corruptNext += fault.packets;
    else {
      const n = fault.bytes ?? 64;
      const junk = Buffer.alloc(n);
      for (let i = 0; i < n; i++) junk[i] = 0x20 + ((i * 13) % 0x5f); // never FF: no header appears
      this.emit(junk);
    }
  }

  private emit(b: Buffer): void {
    for (const l of this.outputs) l(b);
  }
}

/** A GELLO's USB serial adapter in the in-process binding. */
export class EmulatedGelloDevice implements EmulatedSerialDevice {
  plugged = true;
  constructor(
    readonly path: string,
    readonly chain: GelloChainEmulator,
  ) {}

  connect(options: Required<OpenOptions>): BindingPortInterface {
    return new EmulatedPort(options, this.chain);
  }
}

export function emulatedGelloPath(side: ArmSide): string {
  return `/emulated/gello-${side}`;
}

export interface EmulatedGello {
  readonly leader: GelloLeader;
  readonly binding: EmulatorBinding;
  readonly chains: Partial<Record<ArmSide, GelloChainEmulator>>;
  startHand(): void;
  inject(fault: GelloFault, arms?: readonly ArmSide[]): void;
}

/** One hand's GELLO chains, one per arm, however they are reached (the in-process binding, a pty). */
export function createGelloChains(o: {
  readonly nowS: () => number;
  readonly arms?: readonly ArmSide[];
  readonly hand?: HandMotion;
}): { chains: Partial<Record<ArmSide, GelloChainEmulator>>; startHand(): void } {
  const hand = o.hand ?? scriptedMotion();
  const chains: Partial<Record<ArmSide, GelloChainEmulator>> = {};
  let startS = NaN;
  const start = (): number => (Number.isNaN(startS) ? (startS = o.nowS()) : startS);
  for (const side of o.arms ?? ARM_SIDES) chains[side] = new GelloChainEmulator(side, hand, o.nowS, start);
  return {
    chains,
    startHand: () => {
      startS = o.nowS();
    },
  };
}

export function createEmulatedGello(o: { clock: Clock; arms?: readonly ArmSide[]; hand?: HandMotion }): EmulatedGello {
  const binding = new EmulatorBinding();
  const { chains, startHand } = createGelloChains({ nowS: () => o.clock.nowS(), arms: o.arms, hand: o.hand });
  const ports: Partial<Record<ArmSide, { path: string }>> = {};
  for (const [side, chain] of Object.entries(chains) as [ArmSide, GelloChainEmulator][]) {
    binding.add(new EmulatedGelloDevice(emulatedGelloPath(side), chain));
    ports[side] = { path: emulatedGelloPath(side) };
  }
  const leader = new GelloLeader({ ports, clock: o.clock, binding });
  return {
    leader,
    binding,
    chains,
    startHand,
    inject(fault, arms = o.arms ?? ARM_SIDES) {
      for (const side of arms) chains[side]?.inject(fault);
    },
  };
}
