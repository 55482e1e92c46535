/**
 * GELLO-style leaders: Dynamixel servos 1–6 on the joints and 7 on the gripper, one USB serial
 * chain (FTDI, default 57600 baud) per arm, read with Protocol 2.0 Sync Read of Present Velocity +
 * Present Position (address 128, 8 bytes) through the real `serialport` API. Passive: no torque,
 * so bilateral feedback is ignored.
 *
 * Each poll sends a new Sync Read once the previous round is answered (or has timed out), never
 * more than one in flight; every reply overwrites that servo's newest reading (latest value wins).
 * Joint = sign × ticks × π/2048 − offset, per the arm's calibration. GELLO's gripper reads 0 open …
 * 1 closed; it is flipped here to YAM's 0 closed … 1 open.
 */
import { SerialPort } from 'serialport';
import { SerialPortStream } from '@serialport/stream';
import type { BindingInterface } from '@serialport/bindings-interface' with { 'resolution-mode': 'require' };
import { sleepOn, timerOf } from '../../src/rig/clocks.js';
import { ARM_SIDES, DOF_PER_ARM, JOINTS_PER_ARM, STATE_DIM, type ArmSide, type Clock } from '../../src/rig/contract.js';
import type { Leader, LeaderEvent, LeaderReading } from '../../src/rig/leader.js';
import {
  ADDR_PRESENT_VELOCITY,
  INST_STATUS,
  PRESENT_READ_LENGTH,
  PacketDecoder,
  RAD_PER_TICK,
  int32le,
  syncReadPacket,
} from './dynamixel-protocol.js';

export const GELLO_SERVO_IDS: readonly number[] = [1, 2, 3, 4, 5, 6, 7];
export const GELLO_DEFAULT_BAUD = 57600;

/** One GELLO arm's calibration: what its servo readings mean on the follower. */
export interface GelloCalibration {
  /** Per joint (6): subtracted after the sign, rad. */
  readonly offsetsRad: readonly number[];
  /** Per joint (6): +1 or −1. */
  readonly signs: readonly number[];
  /** Gripper servo positions (rad) at open and at closed. */
  readonly gripperOpenRad: number;
  readonly gripperClosedRad: number;
}

export const GELLO_DEFAULT_CALIBRATION: GelloCalibration = {
  offsetsRad: [0, 0, 0, 0, 0, 0],
  signs: [1, 1, 1, 1, 1, 1],
  gripperOpenRad: 0,
  gripperClosedRad: 1.2,
};

export interface GelloArmPort {
  readonly path: string;
  readonly baudRate?: number;
  readonly calibration?: GelloCalibration;
}

export interface GelloLeaderOptions {
  readonly ports: Partial<Record<ArmSide, GelloArmPort>>;
  readonly clock: Clock;
  /** Defaults to the native binding (real ttys, socat ptys). */
  readonly binding?: BindingInterface;
  /** A sync read unanswered this long is given up and sent again. Default 50 ms. */
  readonly roundTimeoutMs?: number;
  /** More bytes than this per second in packets with a wrong CRC or outside any packet make the arm's samples untrusted. Default 200. */
  readonly badBytesPerSecondLimit?: number;
}

class GelloArm {
  port: SerialPortStream | undefined;
  readonly ticks = new Float64Array(7).fill(NaN);
  readonly replyS = new Float64Array(7).fill(NaN);
  readonly decoder: PacketDecoder;
  inFlightSinceS = NaN;
  answeredThisRound = 0;
  roundDoneS = NaN;
  rounds = 0;
  crcErrors = 0;
  garbageBytes = 0;
  servoErrors = 0;
  windowS = 0;
  badInWindow = 0;
  problem: string | undefined;

  constructor(
    readonly side: ArmSide,
    readonly cfg: GelloArmPort,
    private readonly owner: GelloLeader,
  ) {
    this.decoder = new PacketDecoder((e) => {
      const now = owner.clock.nowS();
      if (e.type === 'packet') {
        const p = e.packet;
        const i = p.id - 1;
        if (p.instruction !== INST_STATUS || i < 0 || i >= 7 || p.params.length !== 1 + PRESENT_READ_LENGTH) return;
        if (p.params[0] !== 0) {
          this.servoErrors++;
          if (p.params[0] & 0x80)
            this.bad(
              now,
              1,
              `GELLO ${side} servo ${p.id} reports a hardware error (0x${p.params[0].toString(16)}); power-cycle the leader if it persists.`,
            );
        }
        this.ticks[i] = int32le(p.params, 1 + 4);
        this.replyS[i] = now;
        this.answeredThisRound++;
        if (this.answeredThisRound >= 7) {
          this.rounds++;
          this.roundDoneS = now;
          this.inFlightSinceS = NaN;
        }
      } else if (e.type === 'crc-error') {
        this.crcErrors++;
        this.bad(now, e.bytes, `Dropped a packet with a wrong CRC from the ${side} GELLO leader on ${cfg.path}.`);
      } else {
        this.garbageBytes += e.bytes;
        this.bad(
          now,
          e.bytes,
          `Dropped ${e.bytes} bytes from the ${side} GELLO leader on ${cfg.path} that were not Dynamixel packets.`,
        );
      }
    });
  }

  private bad(now: number, n: number, note: string): void {
    if (now - this.windowS > 1) {
      this.windowS = now;
      this.badInWindow = 0;
    }
    this.badInWindow += n;
    if (this.badInWindow > this.owner.badLimit && !this.problem) {
      this.problem = `The ${this.side} GELLO leader on ${this.cfg.path} keeps sending corrupt data (over ${this.owner.badLimit} bytes with CRC errors or outside any packet in a second); check the cable, the baud rate and --leader.`;
      this.owner.note(this.side, this.problem, now);
    } else this.owner.note(this.side, note, now);
  }
}

export class GelloLeader implements Leader {
  readonly description: string;
  readonly arms: readonly ArmSide[];
  readonly clock: Clock;
  readonly badLimit: number;
  private readonly links: (GelloArm | undefined)[];
  private readonly binding: BindingInterface;
  private readonly roundTimeoutS: number;
  private readonly position = new Float64Array(STATE_DIM).fill(NaN);
  private readonly sampleS = new Float64Array(2).fill(NaN);
  private readonly samples = new Float64Array(2);
  private readonly problems: (string | undefined)[] = [undefined, undefined];
  private readonly reading: LeaderReading;
  private readonly request = Buffer.from(syncReadPacket(ADDR_PRESENT_VELOCITY, PRESENT_READ_LENGTH, GELLO_SERVO_IDS));
  private events: LeaderEvent[] = [];
  private notesThisSecond = 0;
  private notesWindowS = 0;

  constructor(options: GelloLeaderOptions) {
    this.clock = options.clock;
    this.binding = options.binding ?? (SerialPort.binding as unknown as BindingInterface);
    this.roundTimeoutS = (options.roundTimeoutMs ?? 50) / 1000;
    this.badLimit = options.badBytesPerSecondLimit ?? 200;
    this.links = ARM_SIDES.map((side) => {
      const p = options.ports[side];
      return p ? new GelloArm(side, p, this) : undefined;
    });
    this.arms = ARM_SIDES.filter((_, a) => this.links[a] !== undefined);
    if (this.arms.length === 0) throw new Error('A GELLO leader needs a serial port for at least one arm.');
    this.description = `GELLO leader${this.arms.length > 1 ? 's' : ''} (Dynamixel 2.0) on ${this.links.flatMap((l) => (l ? [l.cfg.path] : [])).join(' and ')}`;
    this.reading = { position: this.position, sampleS: this.sampleS, samples: this.samples, problem: this.problems };
  }

  /** @internal Notes are capped at 20 a second: a flood of CRC errors must not flood the operator. */
  note(arm: ArmSide, message: string, timeS: number): void {
    if (timeS - this.notesWindowS > 1) {
      this.notesWindowS = timeS;
      this.notesThisSecond = 0;
    }
    if (this.notesThisSecond++ < 20) this.events.push({ kind: 'note', arm, message, timeS });
  }

  async configure(): Promise<void> {
    for (const link of this.links) {
      if (!link) continue;
      const port = new SerialPortStream({
        binding: this.binding,
        path: link.cfg.path,
        baudRate: link.cfg.baudRate ?? GELLO_DEFAULT_BAUD,
        autoOpen: false,
      });
      await new Promise<void>((resolve, reject) =>
        port.open((err) =>
          err
            ? reject(
                new Error(
                  `Could not open the ${link.side} GELLO leader on ${link.cfg.path}: ${err.message.replace(/^Error: /, '')}. Check the cable and --leader.`,
                ),
              )
            : resolve(),
        ),
      );
      port.on('data', (chunk: Buffer) => link.decoder.push(chunk));
      port.on('error', () => {});
      port.on('close', () => {
        if (link.port !== port) return;
        link.port = undefined;
        link.problem = `The ${link.side} GELLO leader on ${link.cfg.path} disconnected; plug it back in and start again.`;
        this.note(link.side, link.problem, this.clock.nowS());
      });
      link.port = port;
      // One round must come back complete before we trust the chain; waited on the rig's clock
      // (on virtual time a wall-clock wait lets an unknown amount of the cell's time pass).
      const startS = this.clock.nowS();
      const before = link.rounds;
      while (link.rounds === before && this.clock.nowS() - startS < 1) {
        link.answeredThisRound = 0;
        port.write(this.request);
        await sleepOn(timerOf(this.clock), 60);
      }
      if (link.rounds === before) {
        const silent = link.ticks.reduce<number[]>((acc, t, i) => (Number.isNaN(t) ? [...acc, i + 1] : acc), []);
        throw new Error(
          `The ${link.side} GELLO leader on ${link.cfg.path} did not answer a Sync Read${silent.length ? ` (silent servo${silent.length > 1 ? 's' : ''} ${silent.join(', ')})` : ''}; check its power, the baud rate (${link.cfg.baudRate ?? GELLO_DEFAULT_BAUD}) and that servo IDs are 1–7.`,
        );
      }
    }
    this.refresh();
  }

  async activate(): Promise<void> {
    // GELLO is passive: nothing to power.
  }

  poll(nowS: number): void {
    for (const link of this.links) {
      if (!link?.port) continue;
      const waiting = Number.isFinite(link.inFlightSinceS);
      if (waiting && nowS - link.inFlightSinceS < this.roundTimeoutS) continue;
      link.answeredThisRound = 0;
      link.inFlightSinceS = nowS;
      link.port.write(this.request);
    }
  }

  private refresh(): void {
    for (let a = 0; a < 2; a++) {
      const link = this.links[a];
      if (!link) continue;
      const cal = link.cfg.calibration ?? GELLO_DEFAULT_CALIBRATION;
      const base = a * DOF_PER_ARM;
      for (let j = 0; j < JOINTS_PER_ARM; j++)
        this.position[base + j] = cal.signs[j] * link.ticks[j] * RAD_PER_TICK - cal.offsetsRad[j];
      const g = (link.ticks[6] * RAD_PER_TICK - cal.gripperOpenRad) / (cal.gripperClosedRad - cal.gripperOpenRad);
      const closed = Math.min(1, Math.max(0, g)); // GELLO: 0 open … 1 closed
      this.position[base + JOINTS_PER_ARM] = Number.isNaN(g) ? NaN : 1 - closed;
      let oldest = Infinity;
      for (let i = 0; i < 7; i++) oldest = Math.min(oldest, Number.isNaN(link.replyS[i]) ? -Infinity : link.replyS[i]);
      this.sampleS[a] = Number.isFinite(oldest) ? oldest : NaN;
      this.samples[a] = link.rounds;
      this.problems[a] = link.problem;
    }
  }

  latest(): LeaderReading {
    this.refresh();
    return this.reading;
  }

  setFeedback(): void {
    // Passive leader: no torque to push with.
  }

  takeEvents(): LeaderEvent[] {
    const e = this.events;
    this.events = [];
    return e;
  }

  async deactivate(): Promise<void> {}

  async close(): Promise<void> {
    for (const link of this.links) {
      const port = link?.port;
      if (!link || !port) continue;
      link.port = undefined;
      if (port.isOpen) await new Promise<void>((r) => port.close(() => r()));
    }
  }

  diagnostics(): { arm: ArmSide; rounds: number; crcErrors: number; garbageBytes: number; servoErrors: number }[] {
    return this.links.flatMap((l) =>
      l
        ? [
            {
              arm: l.side,
              rounds: l.rounds,
              crcErrors: l.crcErrors,
              garbageBytes: l.garbageBytes,
              servoErrors: l.servoErrors,
            },
          ]
        : [],
    );
  }
}
