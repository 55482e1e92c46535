/**
 * The YAM leader: one or two YAM arms (Damiao motors 0x01–0x06, replies on ID + 0x10) in
 * gravity-compensation mode, each with a teaching handle on the same CAN bus (0x50E/0x50F) in
 * place of the gripper. The operator moves the arm; the motors only carry its weight (kp = 0,
 * a little damping, τ = the arm model's gravity with the handle's 0.258 kg at the wrist), or, with
 * bilateral feedback on, pull gently toward the follower (kp × gain).
 *
 * Every poll sends one MIT command per motor and one handle request, in one write; replies update
 * the newest sample in place as they arrive (latest value wins). No timers of its own.
 */
import { sleepOn, timerOf } from '../../src/rig/clocks.js';
import {
  ARM_SIDES,
  DOF_PER_ARM,
  JOINTS_PER_ARM,
  STATE_DIM,
  type ArmModel,
  type ArmSide,
  type Clock,
} from '../../src/rig/contract.js';
import type { Leader, LeaderEvent, LeaderReading } from '../../src/rig/leader.js';
import { MOTOR_RANGES, type MotorRanges } from '../../src/rig/motors.js';
import { ArmGravityModel, VENDOR_FEED_FORWARD, type FeedForwardSettings } from '../../src/rig/gravity.js';
import { YAM_IDLE_DAMPING, YAM_LIMIT_BUFFER_RAD, yamArm } from '../../src/rig/yam.js';
import type { CanBus, CanBusEvent } from '../can/bus.js';
import { formatCanId, type CanFrame } from '../can/frame.js';
import {
  FEEDBACK_ID_OFFSET,
  PositionUnwrapper,
  STATUS_ENABLED,
  STATUS_LOST_COMMUNICATION,
  describeStatus,
  isFaultStatus,
  limitAwareStartRule,
  maxPositionStepRad,
  packMitInto,
  rawStepRad,
  specialFrame,
  unpackFeedbackInto,
  type MotorFeedback,
  type SpecialCommand,
} from '../damiao/protocol.js';
import {
  HANDLE_MASS_KG,
  gripperFromTrigger,
  handleRequestFrame,
  unpackHandleReplyInto,
  HANDLE_REPLY_ID,
  type HandleReading,
} from './teaching-handle.js';

export interface YamLeaderOptions {
  /** One bus per leader arm. */
  readonly buses: Partial<Record<ArmSide, CanBus>>;
  readonly clock: Clock;
  /** Gravity factors for the leader's own weight; default the vendor's (real arms under-weigh their URDF). */
  readonly feedForward?: FeedForwardSettings;
  /** Timeout of one request round during configure/activate. Default 250 ms. */
  readonly requestTimeoutMs?: number;
  /** More garbage than this per second on a bus makes the arm's samples untrusted. Default 2000 bytes. */
  readonly garbageBytesPerSecondLimit?: number;
}

interface LeaderMotor {
  readonly id: number;
  readonly ranges: MotorRanges;
  readonly unwrapper: PositionUnwrapper;
  readonly feedback: MotorFeedback;
  positionRad: number;
  lastReplyS: number;
  replies: number;
  readonly command: CanFrame;
}

const HANDLE_SILENT = 'handle' as const;

class LeaderArm {
  readonly motors: LeaderMotor[];
  readonly handle: HandleReading = { device: 0, positionRad: 0, velocityRadS: 0, buttons: 0 };
  handleReplies = 0;
  handleReplyS = NaN;
  readonly gravity: ArmGravityModel;
  readonly tau = new Float64Array(6);
  readonly q = new Float64Array(6);
  readonly frames: CanFrame[];
  problem: string | undefined;
  garbageWindowS = 0;
  garbageBytes = 0;
  implausible = 0;
  revivedS = -Infinity;
  private unsubscribe: (() => void)[] = [];

  constructor(
    readonly side: ArmSide,
    readonly model: ArmModel,
    readonly bus: CanBus,
    private readonly owner: YamLeader,
  ) {
    this.motors = model.joints.map((spec, i) => ({
      id: i + 1,
      ranges: MOTOR_RANGES[spec.motor],
      unwrapper: new PositionUnwrapper(
        MOTOR_RANGES[spec.motor].pMaxRad,
        limitAwareStartRule(spec.minRad - YAM_LIMIT_BUFFER_RAD, spec.maxRad + YAM_LIMIT_BUFFER_RAD),
      ),
      feedback: { status: 0, idNibble: 0, positionRad: 0, velocityRadS: 0, torqueNm: 0, mosfetTempC: 0, rotorTempC: 0 },
      positionRad: NaN,
      lastReplyS: NaN,
      replies: 0,
      command: { id: i + 1, extended: false, data: new Uint8Array(8) },
    }));
    this.gravity = new ArmGravityModel(model, 0, HANDLE_MASS_KG);
    this.frames = [...this.motors.map((m) => m.command), handleRequestFrame()];
    this.unsubscribe.push(bus.onFrame((f) => this.onFrame(f)));
    this.unsubscribe.push(bus.onEvent((e) => this.onBusEvent(e)));
  }

  dispose(): void {
    for (const u of this.unsubscribe) u();
    this.unsubscribe = [];
  }

  private onBusEvent(e: CanBusEvent): void {
    const now = this.owner.clock.nowS();
    if (e.kind === 'garbage') {
      if (now - this.garbageWindowS > 1) {
        this.garbageWindowS = now;
        this.garbageBytes = 0;
      }
      this.garbageBytes += e.bytes ?? 1;
      if (this.garbageBytes > this.owner.garbageLimit && !this.problem) {
        this.problem = `The ${this.side} leader's ${this.bus.description} keeps sending bytes that are not CAN frames (over ${this.owner.garbageLimit} bytes in a second); check the cable and the --leader port.`;
        this.owner.note(this.side, this.problem, now);
      }
    } else if (e.kind === 'disconnected') {
      this.problem = `The ${this.side} leader's ${this.bus.description} disconnected; plug it back in (the station reconnects by itself).`;
      this.owner.note(this.side, this.problem, now);
    } else if (e.kind === 'reconnected') {
      this.problem = undefined;
      this.owner.note(this.side, e.message, now);
    } else this.owner.note(this.side, e.message, now);
  }

  private onFrame(f: CanFrame): void {
    const now = this.owner.clock.nowS();
    if (f.id === HANDLE_REPLY_ID) {
      const before = this.handle.buttons;
      if (!unpackHandleReplyInto(f, this.handle)) return;
      this.handleReplies++;
      this.handleReplyS = now;
      const changed = before ^ this.handle.buttons;
      for (let b = 0; b < 2; b++) {
        if (changed & (1 << b)) this.owner.button(this.side, b, (this.handle.buttons & (1 << b)) !== 0, now);
      }
      return;
    }
    const index = f.id - FEEDBACK_ID_OFFSET - 1;
    const m =
      !f.extended && f.data.length === 8 && index >= 0 && index < JOINTS_PER_ARM ? this.motors[index] : undefined;
    if (!m) return; // register answers and other devices' frames are not samples
    unpackFeedbackInto(f.data, m.ranges, scratch);
    if (scratch.idNibble !== (m.id & 0xf)) return;
    if (m.unwrapper.started && !Number.isNaN(m.lastReplyS)) {
      const step = rawStepRad(m.feedback.positionRad, scratch.positionRad, m.ranges.pMaxRad);
      if (Math.abs(step) > maxPositionStepRad(m.ranges, now - m.lastReplyS)) {
        this.implausible++;
        return; // a position no hand can move the arm to in the time: never followed
      }
    }
    Object.assign(m.feedback, scratch);
    m.positionRad = m.unwrapper.update(m.feedback.positionRad);
    m.lastReplyS = now;
    m.replies++;
  }

  /** Motors whose reply count is still `before`. */
  silentSince(before: readonly number[], handleBefore: number): (number | typeof HANDLE_SILENT)[] {
    const out: (number | typeof HANDLE_SILENT)[] = this.motors.flatMap((m, i) => (m.replies === before[i] ? [i] : []));
    if (this.handleReplies === handleBefore) out.push(HANDLE_SILENT);
    return out;
  }
}

const scratch: MotorFeedback = {
  status: 0,
  idNibble: 0,
  positionRad: 0,
  velocityRadS: 0,
  torqueNm: 0,
  mosfetTempC: 0,
  rotorTempC: 0,
};

export class YamLeader implements Leader {
  readonly description: string;
  readonly arms: readonly ArmSide[];
  readonly clock: Clock;
  readonly garbageLimit: number;
  private readonly links: (LeaderArm | undefined)[];
  private readonly position = new Float64Array(STATE_DIM).fill(NaN);
  private readonly sampleS = new Float64Array(2).fill(NaN);
  private readonly samples = new Float64Array(2);
  private readonly problems: (string | undefined)[] = [undefined, undefined];
  private readonly reading: LeaderReading;
  private readonly factor: readonly number[];
  private events: LeaderEvent[] = [];
  private active = false;
  private feedback: Float64Array | undefined;
  private feedbackGain = 0;
  private readonly requestTimeoutMs: number;

  constructor(options: YamLeaderOptions) {
    this.clock = options.clock;
    this.garbageLimit = options.garbageBytesPerSecondLimit ?? 2000;
    this.requestTimeoutMs = options.requestTimeoutMs ?? 250;
    this.factor = (options.feedForward ?? VENDOR_FEED_FORWARD).gravityFactor;
    this.links = ARM_SIDES.map((side) => {
      const bus = options.buses[side];
      return bus ? new LeaderArm(side, yamArm(side), bus, this) : undefined;
    });
    this.arms = ARM_SIDES.filter((_, a) => this.links[a] !== undefined);
    if (this.arms.length === 0) throw new Error('A YAM leader needs a CAN bus for at least one arm.');
    this.description = `YAM leader arm${this.arms.length > 1 ? 's' : ''} with teaching handle on ${this.links.flatMap((l) => (l ? [l.bus.description] : [])).join(' and ')}`;
    this.reading = { position: this.position, sampleS: this.sampleS, samples: this.samples, problem: this.problems };
  }

  /** @internal */
  note(arm: ArmSide, message: string, timeS: number): void {
    this.events.push({ kind: 'note', arm, message, timeS });
  }

  /** @internal */
  button(arm: ArmSide, button: number, pressed: boolean, timeS: number): void {
    this.events.push({ kind: 'button', arm, button, pressed, timeS });
  }

  async configure(): Promise<void> {
    for (const link of this.links) {
      if (!link) continue;
      if (!link.bus.connected) {
        try {
          await link.bus.open();
        } catch (e) {
          throw new Error(`The ${link.side} leader arm's bus cannot be opened: ${(e as Error).message}`);
        }
      }
      for (const m of link.motors) {
        m.unwrapper.reset();
        m.positionRad = NaN;
      }
      await this.round(link, 'disable');
    }
    this.refresh();
  }

  async activate(): Promise<void> {
    for (const link of this.links) {
      if (!link) continue;
      await this.round(link, 'enable');
      const off = link.motors.findIndex((m) => m.feedback.status !== STATUS_ENABLED);
      if (off >= 0) {
        const m = link.motors[off];
        await this.round(link, 'disable').catch(() => undefined);
        throw new Error(
          `The ${link.side} leader arm's joint ${off + 1} motor did not enable (it reports ${describeStatus(m.feedback.status)}); check its power and error light, then start again.`,
        );
      }
    }
    this.active = true;
    this.poll(this.clock.nowS());
  }

  /** One special command to every motor plus a handle request; retried; rejects naming what stayed silent. */
  private async round(link: LeaderArm, command: SpecialCommand): Promise<void> {
    let silent: (number | typeof HANDLE_SILENT)[] = [];
    for (let attempt = 0; attempt < 3; attempt++) {
      const before = link.motors.map((m) => m.replies);
      const handleBefore = link.handleReplies;
      const pending = silent.length === 0 ? [0, 1, 2, 3, 4, 5, HANDLE_SILENT] : silent;
      link.bus.send(
        pending.map((i) => (typeof i === 'number' ? specialFrame(link.motors[i].id, command) : handleRequestFrame())),
      );
      // On the rig's clock, not the wall's: on virtual time a wall-clock wait lets an unknown amount
      // of the cell's time pass (its hold loop runs on), so two takes would start differently.
      const startS = this.clock.nowS();
      while ((this.clock.nowS() - startS) * 1000 < this.requestTimeoutMs) {
        await sleepOn(timerOf(this.clock), 2);
        silent = link.silentSince(before, handleBefore).filter((i) => pending.includes(i));
        if (silent.length === 0) return;
      }
    }
    const names = silent.map((i) =>
      typeof i === 'number'
        ? `joint ${i + 1} (CAN ID ${formatCanId(link.motors[i].id)})`
        : `the teaching handle (CAN ID ${formatCanId(0x50e)})`,
    );
    throw new Error(
      `No answer from ${names.join(', ')} of the ${link.side} leader arm on the ${link.bus.description}; check its power, the CAN cable and --leader.`,
    );
  }

  poll(nowS: number): void {
    this.refresh();
    if (!this.active) return;
    for (let a = 0; a < 2; a++) {
      const link = this.links[a];
      if (!link || !link.bus.connected) continue;
      const base = a * DOF_PER_ARM;
      let finite = true;
      for (let j = 0; j < JOINTS_PER_ARM; j++) {
        link.q[j] = link.motors[j].positionRad;
        if (!Number.isFinite(link.q[j])) finite = false;
      }
      if (finite) link.gravity.torques(link.q, 0, link.tau);
      else link.tau.fill(0);
      for (let j = 0; j < JOINTS_PER_ARM; j++) {
        const m = link.motors[j];
        const spec = link.model.joints[j];
        const fb = this.feedback;
        const pull = fb !== undefined && Number.isFinite(fb[base + j]) && Number.isFinite(m.positionRad);
        const target = pull ? fb[base + j] : Number.isFinite(m.positionRad) ? m.positionRad : 0;
        const t = link.tau[j] * this.factor[j];
        cmd.positionRad = m.unwrapper.started ? m.unwrapper.toRaw(target) : target;
        cmd.velocityRadS = 0;
        cmd.kp = pull ? spec.kp * this.feedbackGain : 0;
        cmd.kd = YAM_IDLE_DAMPING[j];
        cmd.torqueNm = t > spec.maxTorqueNm ? spec.maxTorqueNm : t < -spec.maxTorqueNm ? -spec.maxTorqueNm : t;
        packMitInto(cmd, m.ranges, m.command.data);
      }
      link.bus.send(link.frames);
      // A motor whose own watchdog expired while the link was down (0xD) is brought back: clear the
      // error and enable it, at most every 100 ms. It is the leader: the torque it then applies is its
      // own weight's compensation, what the operator's hand expects.
      if (nowS - link.revivedS >= 0.1) {
        const lost = link.motors.filter((m) => m.feedback.status === STATUS_LOST_COMMUNICATION);
        if (lost.length > 0) {
          link.revivedS = nowS;
          link.bus.send(lost.flatMap((m) => [specialFrame(m.id, 'clear-error'), specialFrame(m.id, 'enable')]));
          this.note(
            link.side,
            `Re-enabling the ${link.side} leader arm's joint${lost.length > 1 ? 's' : ''} ${lost.map((m) => m.id).join(', ')} after their watchdog expired (the link was down).`,
            nowS,
          );
        }
      }
    }
  }

  private refresh(): void {
    for (let a = 0; a < 2; a++) {
      const link = this.links[a];
      if (!link) continue;
      const base = a * DOF_PER_ARM;
      let oldest = link.handleReplyS;
      let fault: string | undefined;
      for (let j = 0; j < JOINTS_PER_ARM; j++) {
        const m = link.motors[j];
        this.position[base + j] = m.positionRad;
        if (!(m.lastReplyS >= oldest)) oldest = m.lastReplyS;
        // Lost communication (0xD) is the motor's own watchdog after a stall of this host: its position
        // reports are still true and poll() re-enables it, so it does not stop the follower.
        if (this.active && isFaultStatus(m.feedback.status) && m.feedback.status !== STATUS_LOST_COMMUNICATION)
          fault ??= `The ${link.side} leader arm's joint ${j + 1} motor reports ${describeStatus(m.feedback.status)}.`;
      }
      this.position[base + JOINTS_PER_ARM] = link.handleReplies > 0 ? gripperFromTrigger(link.handle.positionRad) : NaN;
      if (oldest !== this.sampleS[a] && Number.isFinite(oldest)) this.samples[a]++;
      this.sampleS[a] = oldest;
      this.problems[a] = link.problem ?? fault;
    }
  }

  latest(): LeaderReading {
    this.refresh();
    return this.reading;
  }

  setFeedback(position: ArrayLike<number> | undefined, gain: number): void {
    if (position === undefined) {
      this.feedback = undefined;
      return;
    }
    if (!(gain >= 0 && gain <= 0.3))
      throw new RangeError(`Bilateral feedback gain must be from 0 to 0.3 of the joints' kp, not ${gain}.`);
    this.feedback ??= new Float64Array(STATE_DIM);
    for (let k = 0; k < STATE_DIM; k++) this.feedback[k] = position[k];
    this.feedbackGain = gain;
  }

  takeEvents(): LeaderEvent[] {
    const e = this.events;
    this.events = [];
    return e;
  }

  async deactivate(): Promise<void> {
    this.active = false;
    for (const link of this.links)
      if (link?.bus.connected) link.bus.send(link.motors.map((m) => specialFrame(m.id, 'disable')));
  }

  async close(): Promise<void> {
    for (const link of this.links) {
      if (!link) continue;
      link.dispose();
      await link.bus.close();
    }
  }

  /** Counters for bring-up and tests. */
  diagnostics(): { arm: ArmSide; implausibleReports: number; handleReplies: number; bus: CanBus['stats'] }[] {
    return this.links.flatMap((l) =>
      l
        ? [{ arm: l.side, implausibleReports: l.implausible, handleReplies: l.handleReplies, bus: { ...l.bus.stats } }]
        : [],
    );
  }
}

const cmd = { positionRad: 0, velocityRadS: 0, kp: 0, kd: 0, torqueNm: 0 };
