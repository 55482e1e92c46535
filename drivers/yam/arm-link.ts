/**
 * One YAM arm on one CAN bus: 6 joint motors (IDs 1–6) and the gripper (ID 7), replies on ID + 0x10.
 * Keeps the latest feedback per motor (continuous positions), answers register requests, notices
 * replies from unexpected IDs, and sends one batch of commands per cycle. No timers: the rig's tick
 * and its async lifecycle steps drive it.
 */
import type { ArmModel, ArmSide, ClockTimer, MotorModelId, RigFault } from '../../src/rig/contract.js';
import { sleepOn, wallTimer } from '../../src/rig/clocks.js';
import { MOTOR_RANGES, type MotorRanges } from '../../src/rig/motors.js';
import { YAM_LIMIT_BUFFER_RAD } from '../../src/rig/yam.js';
import type { CanBus, CanBusEvent } from '../can/bus.js';
import { formatCanId, type CanFrame } from '../can/frame.js';
import {
  FEEDBACK_ID_OFFSET,
  PositionUnwrapper,
  REG_READ,
  REG_SAVE,
  REG_WRITE,
  RID,
  STATUS_ENABLED,
  describeStatus,
  isFaultStatus,
  limitAwareStartRule,
  maxPositionStepRad,
  packMitInto,
  parseRegisterReply,
  rawStepRad,
  registerReadFrame,
  registerWriteFrame,
  specialFrame,
  statusName,
  unpackFeedbackInto,
  type MotorFeedback,
  type SpecialCommand,
} from '../damiao/protocol.js';

export const GRIPPER_INDEX = 6;
/** Longest wait for late replies to earlier commands after a special command's first reply: well above any adapter's latency. */
const STRAGGLER_GRACE_MS = 20;
export const MOTORS_PER_ARM = 7;

export interface MotorChannel {
  readonly id: number;
  readonly model: MotorModelId;
  readonly ranges: MotorRanges;
  readonly name: string;
  readonly unwrapper: PositionUnwrapper;
  readonly feedback: MotorFeedback;
  /** Continuous motor position, rad. */
  positionRad: number;
  /** Time of the last feedback, seconds (NaN: never). */
  lastReplyS: number;
  /** When the latest command this motor answers with feedback (MIT or special) was sent, rig clock seconds (NaN: never). */
  commandSentS: number;
  /**
   * The last trusted feedback was sampled no earlier than this: when the command it answered went
   * out (its read time if none had). Plausibility is measured from here, not from the read.
   */
  lastReplySampledFromS: number;
  /** Feedback count; a cycle's reply has arrived when it moved past the count at send time. */
  replies: number;
  /** MIT and special commands sent (each answered by one feedback frame), for pairing replies with requests. */
  requests: number;
  repliesAtSend: number;
  /** Consecutive sends that got no reply before the next send. */
  missedInRow: number;
  /** Consecutive reports dropped as implausible (position steps the motor cannot make). */
  implausibleInRow: number;
  readonly command: CanFrame;
}

export interface ArmLinkStats {
  cycles: number;
  missedReplies: number;
  unexpectedFrames: number;
  /** Motor reports dropped because their values were impossible (wrong length, a position step no motor makes in the time). */
  implausibleReports: number;
}

/** This many implausible reports in a row from one motor are a fault, not noise: its readings cannot be trusted. */
const IMPLAUSIBLE_IN_ROW_FAULT = 3;

/** "left arm joint 3" / "left gripper" for motor index 0..6. */
export function motorName(side: ArmSide, index: number): string {
  return index === GRIPPER_INDEX ? `${side} gripper` : `${side} arm joint ${index + 1}`;
}

interface PendingRegister {
  readonly motorId: number;
  readonly rid: number;
  readonly resolve: (value: number) => void;
}

export class ArmLink {
  readonly motors: MotorChannel[];
  readonly stats: ArmLinkStats = { cycles: 0, missedReplies: 0, unexpectedFrames: 0, implausibleReports: 0 };
  private pendingRegisters: PendingRegister[] = [];
  private replyWaiters = new Set<() => void>();
  /** Latched link-level problems (unexpected IDs, disconnects), cleared on re-activation. */
  private linkFaults: RigFault[] = [];
  private readonly frames: CanFrame[];
  private unsubscribe: (() => void)[] = [];
  /** Bus events for the operator (garbage, reconnects), newest last, bounded. */
  readonly notes: string[] = [];
  private garbageWindowStartS = 0;
  private garbageInWindow = 0;

  constructor(
    readonly side: ArmSide,
    readonly arm: ArmModel,
    readonly bus: CanBus,
    private readonly nowS: () => number,
    private readonly options: { garbageBytesPerSecondLimit: number; timer?: ClockTimer },
  ) {
    const models: MotorModelId[] = [...arm.joints.map((j) => j.motor), arm.gripper.motor];
    this.motors = models.map((model, i) => {
      const spec = arm.joints[i];
      const start = spec
        ? limitAwareStartRule(spec.minRad - YAM_LIMIT_BUFFER_RAD, spec.maxRad + YAM_LIMIT_BUFFER_RAD)
        : (raw: number) => raw;
      return {
        id: i + 1,
        model,
        ranges: MOTOR_RANGES[model],
        name: motorName(side, i),
        unwrapper: new PositionUnwrapper(MOTOR_RANGES[model].pMaxRad, start),
        feedback: {
          status: 0,
          idNibble: 0,
          positionRad: 0,
          velocityRadS: 0,
          torqueNm: 0,
          mosfetTempC: 0,
          rotorTempC: 0,
        },
        positionRad: NaN,
        lastReplyS: NaN,
        commandSentS: NaN,
        lastReplySampledFromS: NaN,
        replies: 0,
        requests: 0,
        repliesAtSend: 0,
        missedInRow: 0,
        implausibleInRow: 0,
        command: { id: i + 1, extended: false, data: new Uint8Array(8) },
      };
    });
    this.frames = this.motors.map((m) => m.command);
    this.unsubscribe.push(bus.onFrame((f) => this.onFrame(f)));
    this.unsubscribe.push(bus.onEvent((e) => this.onBusEvent(e)));
  }

  dispose(): void {
    for (const u of this.unsubscribe) u();
    this.unsubscribe = [];
  }

  private note(text: string): void {
    this.notes.push(text);
    if (this.notes.length > 50) this.notes.shift();
  }

  private onBusEvent(e: CanBusEvent): void {
    if (e.kind === 'garbage') {
      const now = this.nowS();
      if (now - this.garbageWindowStartS > 1) {
        this.garbageWindowStartS = now;
        this.garbageInWindow = 0;
      }
      this.garbageInWindow += e.bytes ?? 1;
      if (this.garbageInWindow > this.options.garbageBytesPerSecondLimit) {
        this.latch({
          kind: 'bus-error',
          arm: this.side,
          message: `The ${this.side} arm's ${this.bus.description} keeps sending bytes that are not CAN frames (over ${this.options.garbageBytesPerSecondLimit} bytes in a second); check --transport, the baud rate and the cable.`,
        });
      } else this.note(e.message);
    } else if (e.kind === 'disconnected') {
      this.latch({
        kind: 'bus-error',
        arm: this.side,
        message:
          `${e.message.replace('Reconnecting…', '')}Plug it back in; the station reconnects by itself, then activate the rig again.`
            .replace(/\s+/g, ' ')
            .trim(),
      });
    } else this.note(e.message);
  }

  private latch(f: RigFault): void {
    if (!this.linkFaults.some((x) => x.message === f.message)) this.linkFaults.push(f);
    this.note(f.message);
  }

  private onFrame(f: CanFrame): void {
    const index = f.id - FEEDBACK_ID_OFFSET - 1;
    const m = !f.extended && index >= 0 && index < MOTORS_PER_ARM ? this.motors[index] : undefined;
    if (m && f.data.length !== 8) {
      // A motor's ID with a DLC other than 8: no Damiao motor sends that; a broken frame, dropped and counted.
      this.implausible(m, `a ${f.data.length}-byte frame (motors send 8)`);
      return;
    }
    if (!m) {
      this.stats.unexpectedFrames++;
      this.latch({
        kind: 'bus-error',
        arm: this.side,
        message: `A frame from unexpected CAN ID ${formatCanId(f.id, f.extended)} arrived on the ${this.side} arm's bus; another device or a motor with a wrong ID is on it. Check the wiring and motor IDs.`,
      });
      return;
    }
    // A register answer is [id_lo, id_hi, 0x33|0x55|0xAA, RID, …]; never read one as feedback, even a late
    // one whose request timed out (its bytes would decode as a position near −P_MAX and fake a wrap).
    // A disabled motor's feedback matches the pattern only at a raw position within 0.1 rad of −P_MAX
    // with a low byte equal to the op code: a risk we take.
    if (
      f.data[0] === m.id &&
      f.data[1] === 0 &&
      (f.data[2] === REG_READ || f.data[2] === REG_WRITE || f.data[2] === REG_SAVE)
    ) {
      const at = this.pendingRegisters.findIndex((p) => p.motorId === m.id && p.rid === f.data[3]);
      if (at >= 0) {
        const p = this.pendingRegisters[at];
        this.pendingRegisters.splice(at, 1);
        p.resolve(parseRegisterReply(f.data)?.value ?? NaN);
        for (const w of this.replyWaiters) w();
      }
      return;
    }
    // Into a scratch first: a report is obeyed only once its values are plausible.
    unpackFeedbackInto(f.data, m.ranges, scratchFeedback);
    if (scratchFeedback.idNibble !== (m.id & 0xf)) {
      this.stats.unexpectedFrames++;
      this.latch({
        kind: 'bus-error',
        arm: this.side,
        joint: index,
        message: `The reply on CAN ID ${formatCanId(f.id)} says it comes from motor ${scratchFeedback.idNibble}, not ${m.id}; two motors may share an ID on the ${this.side} arm. Check the motor IDs.`,
      });
      return;
    }
    const now = this.nowS();
    if (m.unwrapper.started && !Number.isNaN(m.lastReplyS)) {
      const step = rawStepRad(m.feedback.positionRad, scratchFeedback.positionRad, m.ranges.pMaxRad);
      // Over the time this rig measured between the two samples at the latest: from when it sent the
      // command the last trusted reply answered. Read times alone shrink it whenever this thread was
      // descheduled before reading that reply and then read the next one on time.
      const elapsedS = now - m.lastReplySampledFromS;
      if (Math.abs(step) > maxPositionStepRad(m.ranges, elapsedS)) {
        this.implausible(
          m,
          `a position step of ${step.toFixed(3)} rad in ${Math.round(elapsedS * 1000)} ms, more than it can move`,
        );
        return;
      }
    }
    m.implausibleInRow = 0;
    Object.assign(m.feedback, scratchFeedback);
    m.positionRad = m.unwrapper.update(m.feedback.positionRad);
    m.lastReplyS = now;
    m.lastReplySampledFromS = m.commandSentS < now ? m.commandSentS : now;
    m.replies++;
    for (const w of this.replyWaiters) w();
  }

  /**
   * A report from motor `m` whose values no motor produces: dropped (never obeyed) and counted; the
   * operator sees it in the notes, and a run of them is a latched fault (the arm holds).
   * Why here and not in the codec: only the arm layer knows which motor an ID is, its V_MAX and when
   * it last reported, and the same check then covers every adapter framing (SLCAN and Damiao).
   */
  private implausible(m: MotorChannel, what: string): void {
    this.stats.implausibleReports++;
    m.implausibleInRow++;
    const text = `Dropped a report from the ${m.name} motor with ${what}; ${this.stats.implausibleReports} dropped so far.`;
    if (m.implausibleInRow >= IMPLAUSIBLE_IN_ROW_FAULT) {
      this.latch({
        kind: 'bus-error',
        arm: this.side,
        joint: m.id - 1,
        message: `The ${m.name} motor sent ${m.implausibleInRow} reports in a row with impossible values (last: ${what}); its position cannot be trusted. Check its encoder and the CAN cable, then activate the rig again.`,
      });
    } else this.note(text);
  }

  /** Sends one special command to each motor and waits for every reply (feedback). */
  async special(
    command: SpecialCommand,
    timeoutMs: number,
    indices: readonly number[] = [0, 1, 2, 3, 4, 5, 6],
  ): Promise<number[]> {
    const before = indices.map((i) => this.motors[i].replies);
    // Replies carry no request id: through an adapter with any latency, late replies to earlier
    // MIT commands (with the status from before — say the fault this clear-error removes) would
    // pass for this command's answer. So wait until every request sent to the motor so far is
    // answered — at most STRAGGLER_GRACE_MS past the first reply, since a reply lost earlier (a
    // dropped frame, an unplugged adapter) never comes; then the count starts over.
    const sentS = this.nowS();
    for (const i of indices) {
      this.motors[i].requests++;
      this.motors[i].commandSentS = sentS;
    }
    this.send(indices.map((i) => specialFrame(this.motors[i].id, command)));
    await this.waitFor(() => indices.every((i, k) => this.motors[i].replies > before[k]), timeoutMs);
    await this.waitFor(
      () => indices.every((i) => this.motors[i].replies >= this.motors[i].requests),
      STRAGGLER_GRACE_MS,
    );
    for (const i of indices) this.motors[i].requests = this.motors[i].replies;
    return indices.filter((i, k) => this.motors[i].replies === before[k]);
  }

  /**
   * Who answers: one disable to every motor, then a short grace for late answers. Returns the
   * motors that stayed silent and those that answered more than once — two motors share that ID.
   */
  async identify(timeoutMs: number, graceMs = 10): Promise<{ silent: number[]; duplicated: number[] }> {
    const before = this.motors.map((m) => m.replies);
    const silent = await this.special('disable', timeoutMs);
    await sleepOn(this.options.timer ?? wallTimer, graceMs);
    const duplicated = this.motors.flatMap((m, i) => (m.replies - before[i] > 1 ? [i] : []));
    return { silent, duplicated };
  }

  /** Reads one register from each motor; NaN where a motor did not answer in time. */
  async readRegister(
    rid: number,
    timeoutMs: number,
    indices: readonly number[] = [0, 1, 2, 3, 4, 5, 6],
  ): Promise<number[]> {
    const values = indices.map(() => NaN);
    const pending = indices.map((i, k) => {
      const entry: PendingRegister = { motorId: this.motors[i].id, rid, resolve: (v) => (values[k] = v) };
      this.pendingRegisters.push(entry);
      return entry;
    });
    this.send(indices.map((i) => registerReadFrame(this.motors[i].id, rid)));
    await this.waitFor(() => values.every((v) => !Number.isNaN(v)), timeoutMs);
    this.pendingRegisters = this.pendingRegisters.filter((p) => !pending.includes(p));
    return values;
  }

  async writeRegister(index: number, rid: number, value: number, timeoutMs: number): Promise<boolean> {
    let answered = false;
    const entry: PendingRegister = { motorId: this.motors[index].id, rid, resolve: () => (answered = true) };
    this.pendingRegisters.push(entry);
    this.send([registerWriteFrame(this.motors[index].id, rid, value)]);
    await this.waitFor(() => answered, timeoutMs);
    this.pendingRegisters = this.pendingRegisters.filter((p) => p !== entry);
    return answered;
  }

  /** Resolves when `done()` or after timeoutMs. Lifecycle steps only; the hot path never waits. */
  private waitFor(done: () => boolean, timeoutMs: number): Promise<void> {
    if (done()) return Promise.resolve();
    return new Promise((resolve) => {
      const check = () => {
        if (!done()) return;
        finish();
      };
      const finish = () => {
        cancel();
        this.replyWaiters.delete(check);
        resolve();
      };
      // Feedback and register answers both call the waiters.
      this.replyWaiters.add(check);
      const cancel = (this.options.timer ?? wallTimer)(timeoutMs, finish);
    });
  }

  send(frames: readonly CanFrame[]): boolean {
    return this.bus.send(frames);
  }

  /**
   * Hot path: packs an MIT command per motor into the preallocated frames and sends them in one
   * write. Positions are continuous joint/motor radians; `kp`/`kd` per motor.
   */
  sendMit(
    positionRad: ArrayLike<number>,
    velocityRadS: ArrayLike<number>,
    kp: ArrayLike<number>,
    kd: ArrayLike<number>,
    torqueNm: ArrayLike<number>,
  ): boolean {
    this.stats.cycles++;
    const sentS = this.nowS();
    for (let i = 0; i < MOTORS_PER_ARM; i++) {
      const m = this.motors[i];
      m.commandSentS = sentS;
      if (m.replies === m.repliesAtSend && this.stats.cycles > 1) {
        this.stats.missedReplies++;
        m.missedInRow++;
      } else m.missedInRow = 0;
      m.repliesAtSend = m.replies;
      m.requests++;
      scratch.positionRad = m.unwrapper.started ? m.unwrapper.toRaw(positionRad[i]) : positionRad[i];
      scratch.velocityRadS = velocityRadS[i];
      scratch.kp = kp[i];
      scratch.kd = kd[i];
      scratch.torqueNm = torqueNm[i];
      packMitInto(scratch, m.ranges, m.command.data);
    }
    return this.bus.send(this.frames);
  }

  /** Faults now: latched link problems, motors in a fault status, motors silent for longer than noReplyS. */
  faults(nowS: number, noReplyS: number, expectEnabled: boolean): RigFault[] {
    // Allocates only when something is wrong: this runs every cycle.
    let out: RigFault[] | undefined = this.linkFaults.length > 0 ? [...this.linkFaults] : undefined;
    for (let i = 0; i < MOTORS_PER_ARM; i++) {
      const m = this.motors[i];
      const silentS = nowS - m.lastReplyS;
      // Silent means both: no reply for longer than the deadline, and several sends in a row unanswered.
      // Time alone would fault after any stall of this process (the replies wait unread in the OS).
      if (Number.isNaN(m.lastReplyS) || (silentS > noReplyS && m.missedInRow >= MIN_MISSED_IN_ROW)) {
        (out ??= []).push({
          kind: 'no-reply',
          arm: this.side,
          joint: i,
          message: `The ${m.name} motor (CAN ID ${formatCanId(m.id)}) has not answered for ${Number.isNaN(silentS) ? 'the whole session' : `${Math.round(silentS * 1000)} ms`}; check its power and CAN cable.`,
        });
      } else if (isFaultStatus(m.feedback.status)) {
        (out ??= []).push({
          kind: 'motor-fault',
          arm: this.side,
          joint: i,
          message: `The ${m.name} motor reports ${describeStatus(m.feedback.status)}.`,
        });
      } else if (expectEnabled && m.feedback.status !== STATUS_ENABLED) {
        (out ??= []).push({
          kind: 'motor-fault',
          arm: this.side,
          joint: i,
          message: `The ${m.name} motor is ${statusName(m.feedback.status)} although the rig is active; it may have been power-cycled. Check its power connector, then activate the rig again.`,
        });
      }
    }
    return out ?? NO_FAULTS;
  }

  /** Forget position history so the next reading goes through the start-up rule again. */
  resetPositions(): void {
    for (const m of this.motors) {
      m.unwrapper.reset();
      m.positionRad = NaN;
      m.implausibleInRow = 0;
    }
  }

  clearLinkFaults(): void {
    this.linkFaults = [];
    this.garbageInWindow = 0;
  }

  get hasLinkFaults(): boolean {
    return this.linkFaults.length > 0;
  }
}

const NO_FAULTS: RigFault[] = [];
const MIN_MISSED_IN_ROW = 3;
const scratch = { positionRad: 0, velocityRadS: 0, kp: 0, kd: 0, torqueNm: 0 };
const scratchFeedback: MotorFeedback = {
  status: 0,
  idNibble: 0,
  positionRad: 0,
  velocityRadS: 0,
  torqueNm: 0,
  mosfetTempC: 0,
  rotorTempC: 0,
};

export { RID };
