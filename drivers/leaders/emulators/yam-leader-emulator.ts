/**
 * An emulated YAM leader arm at the CAN-frame level: the six Damiao joint motors of the follower's
 * emulator (registers, status, MIT decoding, the motor watchdog) moved by an operator's hand instead
 * of their own dynamics, and the teaching handle answering 0x50E requests on 0x50F with the trigger
 * and buttons the hand works. The hand is stiff but not rigid: a motor pulling with kp (bilateral
 * feedback) moves the leader a little toward its target, as a real operator's grip gives.
 *
 * Typed faults: the whole leader going silent, garbage bytes on the adapter's line.
 */
import {
  ARM_SIDES,
  DOF_PER_ARM,
  JOINTS_PER_ARM,
  STATE_DIM,
  type ArmSide,
  type Clock,
} from '../../../src/rig/contract.js';
import type { CanTransport } from '../../can/bus.js';
import type { CanFrame } from '../../can/frame.js';
import { SerialCanBus } from '../../can/serial-can-bus.js';
import type { MotorPlant } from '../../emulators/emulated-motor.js';
import { EmulatedAdapterDevice, EmulatorBinding } from '../../emulators/serial-binding.js';
import { YamBusEmulator } from '../../emulators/yam-bus-emulator.js';
import { isHandleRequest, packHandleReply, triggerFromGripper } from '../teaching-handle.js';
import { YamLeader } from '../yam-leader.js';
import { scriptedMotion, type HandMotion } from './operator-hand.js';

/** How stiffly the operator's hand holds the leader, N·m/rad: a motor's kp pulls against it. */
const HAND_STIFFNESS_NM_RAD = 200;

export type LeaderFault =
  /** Nothing on the leader answers any more (cable pulled at the arm, power lost). */
  | { readonly kind: 'silence' }
  /** The leader answers again. */
  | { readonly kind: 'recover' }
  /** Bytes that are not frames, straight into the host's receive stream. */
  | { readonly kind: 'garbage'; readonly bytes?: number };

/** The hand as a plant: every motor's joint is where the hand has it, give or take the motor's pull. */
class HandPlant implements MotorPlant {
  private bus: YamBusEmulator | undefined;
  private lastS = NaN;
  private readonly q = new Float64Array(STATE_DIM);
  private readonly v = new Float64Array(STATE_DIM);

  constructor(
    private readonly hand: HandMotion,
    private readonly side: ArmSide,
    private readonly startS: () => number,
  ) {}

  attach(bus: YamBusEmulator): void {
    this.bus = bus;
  }

  /** The hand's pose now (policy order), for the handle and the tests. */
  poseAt(nowS: number): Float64Array {
    this.hand.pose(nowS - this.startS(), this.q, this.v);
    return this.q;
  }

  advanceTo(nowS: number): void {
    if (nowS === this.lastS || !this.bus) return;
    this.lastS = nowS;
    this.poseAt(nowS);
    const base = this.side === 'left' ? 0 : DOF_PER_ARM;
    for (let j = 0; j < JOINTS_PER_ARM; j++) {
      const m = this.bus.motors.get(j + 1);
      if (!m) continue;
      const d = m.drive();
      const hand = this.q[base + j];
      // Static balance of the hand's spring and the motor's spring; gravity torque is carried by the motor.
      const kp = d.mode === 'mit' ? d.kp : 0;
      const q = (HAND_STIFFNESS_NM_RAD * hand + kp * d.positionRad) / (HAND_STIFFNESS_NM_RAD + kp);
      m.setMeasured(q, this.v[base + j], d.mode === 'mit' ? d.torqueNm + kp * (d.positionRad - q) : 0);
    }
  }
}

/** One leader arm's bus: the motors (moved by the hand) plus the teaching handle. */
export class YamLeaderBusEmulator extends YamBusEmulator {
  silent = false;
  handleRequests = 0;

  constructor(
    readonly plant: HandPlant,
    private readonly hand: HandMotion,
    readonly side: ArmSide,
    private readonly startS: () => number,
    nowS: () => number,
  ) {
    // A leader has no gripper motor: the handle is in its place.
    super({ plant, absentMotors: [7], nowS });
    plant.attach(this);
  }

  override handle(frame: CanFrame): CanFrame[] {
    if (this.silent) {
      this.framesReceived++;
      return [];
    }
    if (isHandleRequest(frame)) {
      this.framesReceived++;
      this.handleRequests++;
      const now = this.now();
      const q = this.plant.poseAt(now);
      const g = q[(this.side === 'left' ? 0 : DOF_PER_ARM) + JOINTS_PER_ARM];
      return [
        packHandleReply({
          device: 1,
          positionRad: triggerFromGripper(g),
          velocityRadS: 0,
          buttons: this.hand.buttons(now - this.startS(), this.side),
        }),
      ];
    }
    return super.handle(frame);
  }
}

export interface EmulatedYamLeaderOptions {
  readonly clock: Clock;
  readonly arms?: readonly ArmSide[];
  readonly transport?: CanTransport;
  readonly hand?: HandMotion;
  readonly replyLatencyMs?: number;
}

export interface EmulatedYamLeader {
  readonly leader: YamLeader;
  readonly binding: EmulatorBinding;
  readonly buses: Partial<Record<ArmSide, YamLeaderBusEmulator>>;
  readonly devices: Partial<Record<ArmSide, EmulatedAdapterDevice>>;
  /**
   * (Re)starts the hand's script now; until the first call it runs from the first use. Teleop calls
   * it once the rig and the leader are active, so a take's hand motion does not depend on how long
   * bringing them up took.
   */
  startHand(): void;
  /** The hand's pose now (policy order). */
  handPose(): Float64Array;
  inject(fault: LeaderFault, arms?: readonly ArmSide[]): void;
}

export function emulatedLeaderPath(side: ArmSide): string {
  return `/emulated/yam-leader-${side}`;
}

/** The leader arms' buses (motors moved by one hand, and each arm's handle), however they are reached. */
export interface YamLeaderArms {
  readonly buses: Partial<Record<ArmSide, YamLeaderBusEmulator>>;
  /**
   * (Re)starts the hand's script now; until the first call it runs from when a host first talks to the leader. Teleop calls
   * it once the rig and the leader are active, so a take's hand motion does not depend on how long
   * bringing them up took.
   */
  startHand(): void;
  /** The hand's pose now (policy order). */
  handPose(): Float64Array;
}

export function createYamLeaderArms(o: {
  readonly nowS: () => number;
  readonly arms?: readonly ArmSide[];
  readonly hand?: HandMotion;
}): YamLeaderArms {
  const hand = o.hand ?? scriptedMotion();
  const buses: Partial<Record<ArmSide, YamLeaderBusEmulator>> = {};
  let startS = NaN;
  const start = (): number => (Number.isNaN(startS) ? (startS = o.nowS()) : startS);
  for (const side of o.arms ?? ARM_SIDES)
    buses[side] = new YamLeaderBusEmulator(new HandPlant(hand, side, start), hand, side, start, o.nowS);
  const anyPlant = Object.values(buses)[0]!.plant;
  return {
    buses,
    startHand: () => {
      startS = o.nowS();
    },
    handPose: () => Float64Array.from(anyPlant.poseAt(o.nowS())),
  };
}

/** Bytes that are no frame in either framing (never SLCAN's 't' or CR, never the Damiao trailer 0x55): every one is dropped as garbage. */
export function leaderGarbage(n = 64): Uint8Array {
  const junk = new Uint8Array(n);
  for (let i = 0; i < n; i++) junk[i] = 0x80 + ((i * 37) & 0x3f);
  return junk;
}

/** Emulated YAM leader arms through the in-process serialport binding: the real SerialCanBus and YamLeader above it. */
export function createEmulatedYamLeader(o: EmulatedYamLeaderOptions): EmulatedYamLeader {
  const transport = o.transport ?? 'slcan';
  const binding = new EmulatorBinding();
  const devices: Partial<Record<ArmSide, EmulatedAdapterDevice>> = {};
  const hostBuses: Partial<Record<ArmSide, SerialCanBus>> = {};
  const arms = createYamLeaderArms({ nowS: () => o.clock.nowS(), arms: o.arms, hand: o.hand });
  const emulators = arms.buses;
  for (const [side, bus] of Object.entries(emulators) as [ArmSide, YamLeaderBusEmulator][]) {
    devices[side] = binding.add(
      new EmulatedAdapterDevice(emulatedLeaderPath(side), transport, bus, { replyLatencyMs: o.replyLatencyMs }),
    );
    hostBuses[side] = new SerialCanBus({ transport, path: emulatedLeaderPath(side), binding, reconnectIntervalMs: 50 });
  }
  const leader = new YamLeader({ buses: hostBuses, clock: o.clock });
  return {
    leader,
    binding,
    buses: emulators,
    devices,
    startHand: arms.startHand,
    handPose: arms.handPose,
    inject(fault, which = o.arms ?? ARM_SIDES) {
      for (const side of which) {
        const bus = emulators[side];
        if (!bus) continue;
        if (fault.kind === 'silence') bus.silent = true;
        else if (fault.kind === 'recover') bus.silent = false;
        else devices[side]!.adapter.injectGarbage(leaderGarbage(fault.bytes));
      }
    },
  };
}
