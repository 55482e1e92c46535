/**
 * YamCanRig: the two-arm YAM on Damiao motors, one CAN bus per arm, through the Rig contract.
 *
 * Per cycle the control loop calls write() (maybe) and tick(); tick() sends all seven commands of
 * each arm in one write and returns at once. Replies arrive on the bus between cycles and update the
 * state; a motor whose replies stop for longer than the reply deadline is a fault. This replaces the
 * vendor's poll-one-motor-and-wait-10-ms loop, which cannot keep 250 Hz once replies take 1 ms.
 *
 * Safety is C's SafetySupervisor (src/rig/safety.ts): every command passes it, and the motors are
 * driven as it says ('off' / 'track' / 'damp'). Any fault → the faulted arm damps, the healthy arm
 * holds, and the fault message says what to do. The motors' own watchdog (register 9) stays on:
 * configure() turns it on if it finds it off, so a dead station still ends in motor-side damping.
 */
import {
  ARM_SIDES,
  DOF_PER_ARM,
  RigError,
  STATE_DIM,
  type ArmSide,
  type Clock,
  type Rig,
  type RigCommand,
  type RigFault,
  type RigModel,
  type RigState,
  type SafetyEvent,
} from '../../src/rig/contract.js';
import { RealtimeClock, timerOf } from '../../src/rig/clocks.js';
import { SafetySupervisor, type InterlockStop, type SafetyOptions } from '../../src/rig/safety.js';
import { yamRigModel } from '../../src/rig/yam.js';
import {
  ArmFeedForward,
  VENDOR_FEED_FORWARD,
  feedForwardFault,
  type FeedForwardSettings,
} from '../../src/rig/gravity.js';
import type { CanBus } from '../can/bus.js';
import { formatCanId } from '../can/frame.js';
import { RID, TIMEOUT_TICK_MS, describeStatus, isFaultStatus } from '../damiao/protocol.js';
import {
  calibrateGripperByStall,
  type GripperCalibrationRecord,
  type GripperLimits,
  type GripperStallOptions,
} from './gripper-calibration.js';
import { ArmLink, GRIPPER_INDEX, MOTORS_PER_ARM, motorName, type ArmLinkStats } from './arm-link.js';

export interface YamCanRigOptions {
  /** One bus per arm; an arm without a bus is absent (reads the home pose, is never driven). */
  readonly buses: Partial<Record<ArmSide, CanBus>>;
  readonly model?: RigModel;
  readonly clock?: Clock;
  readonly safety?: SafetyOptions;
  /** A motor silent for longer than this while the rig runs is a fault. Default 100 ms: well inside the motors' own 400 ms watchdog, and above the event-loop stalls a loaded 2-core host shows (a 20 ms deadline tripped on GC pauses). Replies missing a single cycle are counted, not faulted. */
  readonly replyDeadlineMs?: number;
  /** Stall-calibrated gripper limits per arm; default: closed at 0, open at the model's motor travel. */
  readonly gripperLimits?: Partial<Record<ArmSide, GripperLimits>>;
  /** Timeout for one request/answer round during configure/activate/deactivate (each retried up to 3 times). Default 250 ms. */
  readonly requestTimeoutMs?: number;
  /** More garbage than this per second on a bus is a fault. Default 2000 bytes. */
  readonly garbageBytesPerSecondLimit?: number;
  /** Value written to register 9 when a motor's watchdog is found off (8000 = 400 ms). */
  readonly motorWatchdogTicks?: number;
  /**
   * Faults from outside the motors, read every tick and at activation: the cell's interlock
   * inputs (a door, a light curtain) or, on the emulated cell, its world falling behind real
   * time. Any fault here damps and refuses activation exactly like a motor fault.
   */
  readonly externalFaults?: () => readonly RigFault[];
  /**
   * Torque feed-forward sent with every tracking command: gravity × factor + Coulomb by velocity
   * sign (src/rig/gravity.ts, the same code as the sim twin's). Default the vendor's settings for
   * real arms; `false` sends none.
   */
  readonly feedForward?: FeedForwardSettings | false;
  /** Called by close() after the buses are closed: releases what the transport stands on (the emulated cell's world). */
  readonly onClose?: () => void | Promise<void>;
}

const RANGE_TOLERANCE = 1e-3;

export class YamCanRig implements Rig {
  readonly model: RigModel;
  readonly clock: Clock;
  private readonly supervisor: SafetySupervisor;
  private readonly links: (ArmLink | undefined)[];
  private readonly gripperLimits: GripperLimits[];
  private readonly position = new Float64Array(STATE_DIM);
  private readonly velocity = new Float64Array(STATE_DIM);
  private readonly effort = new Float64Array(STATE_DIM);
  private readonly replyDeadlineS: number;
  private readonly requestTimeoutMs: number;
  /** Motors have been enabled by activate() and not yet disabled. */
  private motorsEnabled = false;
  private faults: readonly RigFault[] = [];
  /** The external faults last read (the part of `faults` that came from `options.externalFaults`). */
  private externalNow: readonly RigFault[] = [];
  private lastTickS = NaN;
  // Per-arm command scratch (7 motors), reused every cycle.
  private readonly cmdPos = new Float64Array(MOTORS_PER_ARM);
  private readonly cmdVel = new Float64Array(MOTORS_PER_ARM);
  private readonly cmdKp = new Float64Array(MOTORS_PER_ARM);
  private readonly cmdKd = new Float64Array(MOTORS_PER_ARM);
  private readonly cmdTau = new Float64Array(MOTORS_PER_ARM);
  private readonly extraEvents: SafetyEvent[] = [];
  private readonly feedForward: (ArmFeedForward | undefined)[];
  /** Per arm (6 joints): the feed-forward of the latest state. */
  private readonly ffTorque = [new Float64Array(6), new Float64Array(6)];
  private ffFaults: readonly RigFault[] = NONE;
  private refreshedS = 0;
  private readonly state: {
    timeS: number;
    mode: RigState['mode'];
    position: Float64Array;
    velocity: Float64Array;
    effort: Float64Array;
    faults: readonly RigFault[];
  } = {
    timeS: 0,
    mode: 'unconfigured',
    position: this.position,
    velocity: this.velocity,
    effort: this.effort,
    faults: NONE,
  };

  constructor(private readonly options: YamCanRigOptions) {
    this.model = options.model ?? yamRigModel();
    this.clock = options.clock ?? new RealtimeClock();
    this.supervisor = new SafetySupervisor(this.model, options.safety);
    const periodS = options.safety?.controlPeriodS ?? 1 / 250;
    this.replyDeadlineS = (options.replyDeadlineMs ?? Math.max(100, 10 * periodS * 1000)) / 1000;
    this.requestTimeoutMs = options.requestTimeoutMs ?? 250;
    if (!options.buses.left && !options.buses.right) throw new Error('YamCanRig needs a CAN bus for at least one arm.');
    const now = () => this.clock.nowS();
    this.links = ARM_SIDES.map((side, a) => {
      const bus = options.buses[side];
      return bus
        ? new ArmLink(side, this.model.arms[a], bus, now, {
            garbageBytesPerSecondLimit: options.garbageBytesPerSecondLimit ?? 2000,
            timer: timerOf(this.clock),
          })
        : undefined;
    });
    this.gripperLimits = ARM_SIDES.map(
      (side, a) =>
        options.gripperLimits?.[side] ?? { closedRad: 0, openRad: this.model.arms[a].gripper.motorTravelRad },
    );
    const ff = options.feedForward === undefined ? VENDOR_FEED_FORWARD : options.feedForward;
    this.feedForward = this.model.arms.map((arm, a) => (ff && this.links[a] ? new ArmFeedForward(arm, ff) : undefined));
  }

  /** The safety supervisor's record of the latest interlock stop since activation (which cycle saw it, write or tick). */
  get interlockStop(): InterlockStop | undefined {
    return this.supervisor.interlockStop;
  }

  /** Arms with a bus. */
  get arms(): ArmSide[] {
    return ARM_SIDES.filter((_, a) => this.links[a] !== undefined);
  }

  link(side: ArmSide): ArmLink | undefined {
    return this.links[side === 'left' ? 0 : 1];
  }

  // ---- lifecycle --------------------------------------------------------------------------

  async configure(): Promise<void> {
    for (const link of this.links) {
      if (!link) continue;
      if (!link.bus.connected) {
        try {
          await link.bus.open();
        } catch (e) {
          throw this.refuse({
            kind: 'bus-error',
            arm: link.side,
            message: `The ${link.side} arm's bus cannot be opened: ${(e as Error).message}`,
          });
        }
      }
      link.resetPositions();
      // Before anything else: two motors on one ID would make every later answer ambiguous.
      const who = await link.identify(this.requestTimeoutMs);
      if (who.duplicated.length > 0) throw this.refuse(this.duplicateIdFault(link, who.duplicated[0], who.silent));
      await this.checkMotorRanges(link);
      await this.ensureMotorWatchdog(link);
      const silent = await this.retry(() => link.special('disable', this.requestTimeoutMs));
      if (silent.length > 0) throw this.refuse(this.silentFault(link, silent));
      link.clearLinkFaults();
    }
    this.refreshState();
    this.supervisor.configure();
  }

  /** Registers 21–23 must match the configured motor model: the ranges decide what every byte means. */
  private async checkMotorRanges(link: ArmLink): Promise<void> {
    const names = ['PMAX', 'VMAX', 'TMAX'] as const;
    const rids = [RID.PMAX, RID.VMAX, RID.TMAX];
    const units = ['rad', 'rad/s', 'N·m'];
    for (let r = 0; r < 3; r++) {
      let values = await link.readRegister(rids[r], this.requestTimeoutMs);
      for (let attempt = 0; attempt < 2 && values.some(Number.isNaN); attempt++) {
        const again = await link.readRegister(
          rids[r],
          this.requestTimeoutMs,
          values.flatMap((v, i) => (Number.isNaN(v) ? [i] : [])),
        );
        let k = 0;
        values = values.map((v) => (Number.isNaN(v) ? again[k++] : v));
      }
      const silent = values.flatMap((v, i) => (Number.isNaN(v) ? [i] : []));
      if (silent.length > 0) throw this.refuse(this.silentFault(link, silent));
      for (let i = 0; i < MOTORS_PER_ARM; i++) {
        const m = link.motors[i];
        const expected = [m.ranges.pMaxRad, m.ranges.vMaxRadS, m.ranges.tMaxNm][r];
        if (Math.abs(values[i] - expected) > RANGE_TOLERANCE * Math.max(1, expected)) {
          throw this.refuse({
            kind: 'config-mismatch',
            arm: link.side,
            joint: i,
            message:
              `Refusing to run: the ${m.name} motor (CAN ID ${formatCanId(m.id)}) reports ${names[r]} ${fmt(values[i])} ${units[r]}, ` +
              `but the configuration says ${m.model} (${names[r]} ${fmt(expected)} ${units[r]}). Fix the motor model in the station configuration or the motor's registers 21–23.`,
          });
        }
      }
    }
  }

  private async ensureMotorWatchdog(link: ArmLink): Promise<void> {
    const ticks = await link.readRegister(RID.TIMEOUT, this.requestTimeoutMs);
    for (let i = 0; i < MOTORS_PER_ARM; i++) {
      if (ticks[i] !== 0) continue;
      const want = this.options.motorWatchdogTicks ?? 8000;
      const ok = await link.writeRegister(i, RID.TIMEOUT, want, this.requestTimeoutMs);
      const msg = `The ${link.motors[i].name} motor had its watchdog (register 9) off; set it to ${want * TIMEOUT_TICK_MS} ms so the motor damps itself if the station stops.`;
      if (!ok) {
        throw this.refuse({
          kind: 'config-mismatch',
          arm: link.side,
          joint: i,
          message: `${msg.replace('; set it', '; could not set it')} Refusing to run without it: set register 9 with the Damiao tool or check that motor's CAN connection, then configure again.`,
        });
      }
      link.notes.push(msg);
    }
  }

  async activate(): Promise<void> {
    if (this.supervisor.mode === 'unconfigured') await this.configure();
    for (const link of this.links) {
      if (!link) continue;
      if (!link.bus.connected) {
        throw this.refuse({
          kind: 'bus-error',
          arm: link.side,
          message: `Not activating: the ${link.side} arm's ${link.bus.description} is disconnected. Plug it in and try again.`,
        });
      }
      const nowS = this.clock.nowS();
      const faulted = link.motors.flatMap((m, i) => (isFaultStatus(m.feedback.status) ? [i] : []));
      if (!this.motorsEnabled) {
        if (faulted.length > 0) await link.special('clear-error', this.requestTimeoutMs, faulted);
        // Disabled motors only speak when spoken to: a disable round gives fresh feedback.
        const silent = await this.retry(() => link.special('disable', this.requestTimeoutMs));
        if (silent.length > 0) throw this.refuse(this.silentFault(link, silent));
      } else {
        // Powered motors stay powered (dropping them would let the arm sag); only faulted or stale
        // ones get a clear-error round, whose replies are fresh feedback.
        const stale = link.motors.flatMap((m, i) =>
          isFaultStatus(m.feedback.status) || !(nowS - m.lastReplyS <= this.replyDeadlineS) ? [i] : [],
        );
        if (stale.length > 0) {
          const silent = await this.retry(() => link.special('clear-error', this.requestTimeoutMs, stale));
          if (silent.length > 0) throw this.refuse(this.silentFault(link, silent));
        }
      }
      // Re-activating from a hold keeps the motors powered: dropping them would let the arm sag.
      link.clearLinkFaults();
    }
    this.refreshState();
    const now = this.clock.nowS();
    // Faults that survive clear-error (a motor still over-temperature…) refuse activation.
    this.faults = this.collectFaults(now, false);
    this.supervisor.activate(this.position, this.faults, now); // throws RigError on a wrong zero
    for (const link of this.links) {
      if (!link) continue;
      const toEnable = link.motors.flatMap((m, i) => (m.feedback.status !== 1 ? [i] : []));
      const silent =
        toEnable.length > 0 ? await this.retry(() => link.special('enable', this.requestTimeoutMs, toEnable)) : [];
      const notEnabled = link.motors.flatMap((m, i) => (m.feedback.status !== 1 ? [i] : []));
      if (silent.length > 0 || notEnabled.length > 0) {
        await this.disableAll();
        this.supervisor.deactivate(this.clock.nowS());
        const i = silent[0] ?? notEnabled[0];
        const m = link.motors[i];
        throw this.refuse(
          silent.length > 0
            ? this.silentFault(link, silent)
            : {
                kind: 'motor-fault',
                arm: link.side,
                joint: i,
                message: `Not activating: the ${m.name} motor did not enable (it reports ${describeStatus(m.feedback.status)}). Check its power and error light, then activate again.`,
              },
        );
      }
    }
    this.motorsEnabled = true;
    this.lastTickS = this.clock.nowS();
    this.drive();
  }

  /** The latest state: one object whose buffers are refreshed every tick (copy to keep). No allocation. */
  read(): RigState {
    if (!this.motorsEnabled) this.refreshDampedFaults();
    const st = this.state;
    st.timeS = this.refreshedS;
    st.mode = this.supervisor.mode;
    st.faults = this.faults;
    return st;
  }

  write(cmd: RigCommand): RigCommand {
    return this.supervisor.write(cmd, this.clock.nowS());
  }

  tick(): void {
    const now = this.clock.nowS();
    this.lastTickS = now;
    this.refreshState();
    if (this.motorsEnabled) this.faults = this.collectFaults(now, true);
    this.supervisor.tick(this.position, this.faults, now);
    this.drive();
  }

  hold(): void {
    this.supervisor.hold(this.clock.nowS());
    this.drive();
  }

  estop(reason: string): void {
    this.refreshState();
    this.supervisor.estop(reason, this.clock.nowS());
    // Stop now, not at the next tick: the stop command goes out in this call.
    this.drive();
  }

  async deactivate(): Promise<void> {
    this.refreshState();
    this.supervisor.deactivate(this.clock.nowS());
    this.drive();
    await this.disableAll();
  }

  takeSafetyEvents(): SafetyEvent[] {
    const events = this.supervisor.takeEvents();
    if (this.extraEvents.length === 0) return events;
    const all = [...this.extraEvents, ...events];
    this.extraEvents.length = 0;
    return all;
  }

  /** Closes the buses (the rig cannot be used afterwards). */
  async close(): Promise<void> {
    for (const link of this.links) {
      if (!link) continue;
      link.dispose();
      await link.bus.close();
    }
    await this.options.onClose?.();
  }

  /** Bus notes (garbage dropped, reconnects, watchdog set) and per-arm counters, for bring-up. */
  diagnostics(): ({ arm: ArmSide; notes: string[]; bus: CanBus['stats'] } & ArmLinkStats)[] {
    return this.links.flatMap((l) =>
      l ? [{ arm: l.side, notes: [...l.notes], ...l.stats, bus: { ...l.bus.stats } }] : [],
    );
  }

  // ---- gripper --------------------------------------------------------------------------------

  /** Stall-based gripper limit calibration (gripper-calibration.ts), with the arm configured but not active; the rig uses the limits at once. */
  async calibrateGripper(side: ArmSide, opts: GripperStallOptions = {}): Promise<GripperCalibrationRecord> {
    const link = this.link(side);
    if (!link)
      throw new RigError(`There is no ${side} arm on this rig.`, {
        kind: 'config-mismatch',
        arm: side,
        message: `There is no ${side} arm on this rig.`,
      });
    if (this.motorsEnabled) {
      const msg = 'Deactivate the rig before calibrating a gripper.';
      throw new RigError(msg, { kind: 'config-mismatch', arm: side, message: msg });
    }
    const record = await calibrateGripperByStall(
      {
        link,
        side,
        clock: this.clock,
        requestTimeoutMs: this.requestTimeoutMs,
        refuse: (fault) => this.refuse(fault),
        silentFault: (l, silent) => this.silentFault(l, silent),
      },
      opts,
    );
    // The rig uses the new limits at once.
    this.gripperLimits[side === 'left' ? 0 : 1] = record.limits;
    return record;
  }

  // ---- internals ------------------------------------------------------------------------------

  private refreshState(): void {
    this.refreshedS = this.clock.nowS();
    for (let a = 0; a < 2; a++) {
      const link = this.links[a];
      const base = a * DOF_PER_ARM;
      if (!link) continue; // an absent arm reads home (zeros)
      for (let i = 0; i < MOTORS_PER_ARM; i++) {
        const m = link.motors[i];
        if (i === GRIPPER_INDEX) {
          const g = this.gripperLimits[a];
          const span = g.openRad - g.closedRad;
          this.position[base + i] = (m.positionRad - g.closedRad) / span;
          this.velocity[base + i] = m.feedback.velocityRadS / span;
        } else {
          this.position[base + i] = m.positionRad;
          this.velocity[base + i] = m.feedback.velocityRadS;
        }
        this.effort[base + i] = m.feedback.torqueNm;
      }
    }
    this.refreshFeedForward();
  }

  /** The feed-forward for the state just read; a model torque the motors must not be sent is a fault. */
  private refreshFeedForward(): void {
    let faults: RigFault[] | undefined;
    for (let a = 0; a < 2; a++) {
      const ff = this.feedForward[a];
      if (!ff) continue;
      const why = ff.compute(this.position, this.velocity, a * DOF_PER_ARM, this.ffTorque[a]);
      if (why !== undefined) (faults ??= []).push(feedForwardFault(ARM_SIDES[a], why));
    }
    this.ffFaults = faults ?? NONE;
  }

  /**
   * Damped, nothing ticks the rig and its motors speak only when spoken to, so a refused
   * activation's faults would stand until the next one — the status kept saying "the cell fell
   * behind real time" long after it had caught up. External faults cost no bus traffic: re-read
   * them here, so one that has cleared leaves the status by itself. Motor faults stay until an
   * activation asks the motors again (only they can say they cleared).
   */
  private refreshDampedFaults(): void {
    const read = this.options.externalFaults;
    if (!read) return;
    const x = read();
    const prev = this.externalNow;
    if (x.length === prev.length && x.every((f, i) => f.message === prev[i].message)) return;
    const own = this.faults.filter((f) => !prev.includes(f));
    this.externalNow = x;
    this.faults = own.length === 0 && x.length === 0 ? NONE : [...own, ...x];
  }

  private collectFaults(now: number, expectEnabled: boolean): readonly RigFault[] {
    const l = this.links[0]?.faults(now, this.replyDeadlineS, expectEnabled) ?? NONE;
    const r = this.links[1]?.faults(now, this.replyDeadlineS, expectEnabled) ?? NONE;
    const x = this.options.externalFaults?.() ?? NONE;
    this.externalNow = x;
    const f = this.ffFaults;
    if (l.length === 0 && r.length === 0 && x.length === 0 && f.length === 0) return NONE;
    return [...l, ...r, ...x, ...f];
  }

  /** Sends each arm what the supervisor wants now. The hot path: no allocation. */
  private drive(): void {
    const out = this.supervisor.output;
    for (let a = 0; a < 2; a++) {
      const link = this.links[a];
      if (!link || !this.motorsEnabled) continue;
      const mode = this.supervisor.drive(ARM_SIDES[a]);
      if (mode === 'off') continue;
      const arm = this.model.arms[a];
      const base = a * DOF_PER_ARM;
      const g = this.gripperLimits[a];
      const span = g.openRad - g.closedRad;
      for (let i = 0; i < MOTORS_PER_ARM; i++) {
        const gripper = i === GRIPPER_INDEX;
        const kp = gripper ? arm.gripper.kp : arm.joints[i].kp;
        const kd = gripper ? arm.gripper.kd : arm.joints[i].kd;
        if (mode === 'track') {
          this.cmdPos[i] = gripper ? g.closedRad + out.position[base + i] * span : out.position[base + i];
          this.cmdVel[i] = gripper ? out.velocity[base + i] * span : out.velocity[base + i];
          this.cmdKp[i] = kp;
          // The policy's feed-forward (clamped by the supervisor) plus the arm's own, within the motor's torque.
          const tau = out.torqueNm[base + i] + (gripper ? 0 : this.ffTorque[a][i]);
          const tMax = gripper ? arm.gripper.maxTorqueNm : arm.joints[i].maxTorqueNm;
          this.cmdTau[i] = tau > tMax ? tMax : tau < -tMax ? -tMax : tau;
        } else {
          // Damping: no stiffness, the motor only resists motion.
          this.cmdPos[i] = link.motors[i].positionRad;
          this.cmdVel[i] = 0;
          this.cmdKp[i] = 0;
          this.cmdTau[i] = 0;
        }
        this.cmdKd[i] = kd;
        if (!Number.isFinite(this.cmdPos[i])) {
          // Never send a position we do not have: damp that motor instead.
          this.cmdPos[i] = 0;
          this.cmdKp[i] = 0;
        }
      }
      link.sendMit(this.cmdPos, this.cmdVel, this.cmdKp, this.cmdKd, this.cmdTau);
    }
  }

  private async disableAll(): Promise<void> {
    this.motorsEnabled = false;
    for (const link of this.links) if (link?.bus.connected) await link.special('disable', this.requestTimeoutMs);
  }

  private async retry(step: () => Promise<number[]>, attempts = 3): Promise<number[]> {
    let silent: number[] = [];
    for (let k = 0; k < attempts; k++) {
      silent = await step();
      if (silent.length === 0) break;
    }
    return silent;
  }

  private silentFault(link: ArmLink, silent: readonly number[]): RigFault {
    const names = silent.map((i) => `${motorName(link.side, i)} (CAN ID ${formatCanId(link.motors[i].id)})`);
    return {
      kind: 'no-reply',
      arm: link.side,
      joint: silent[0],
      message: `No answer from the ${names.join(', ')} motor${silent.length > 1 ? 's' : ''} on the ${link.bus.description}; check motor power, the CAN cable and termination, and --transport.`,
    };
  }

  private duplicateIdFault(link: ArmLink, index: number, silent: readonly number[]): RigFault {
    const id = link.motors[index].id;
    const bus = `on CAN ID ${formatCanId(id)} on the ${link.side} arm's bus`;
    const message =
      silent.length > 0
        ? `Two motors answer ${bus} and none on ${formatCanId(link.motors[silent[0]].id)}: the ${motorName(link.side, silent[0])} motor probably has ID ${id} too. Give it its own ID with the Damiao tool, then configure again.`
        : `Two motors answer ${bus}: another device has the ${motorName(link.side, index)} motor's ID. Give each motor its own ID with the Damiao tool, then configure again.`;
    return { kind: 'config-mismatch', arm: link.side, joint: silent[0] ?? index, message };
  }

  private refuse(fault: RigFault): RigError {
    this.extraEvents.push({
      timeS: this.clock.nowS(),
      kind: 'activate-refused',
      ...(fault.arm ? { arm: fault.arm } : {}),
      ...(fault.joint !== undefined ? { joint: fault.joint } : {}),
      message: fault.message,
    });
    return new RigError(fault.message, fault);
  }
}

const NONE: readonly RigFault[] = [];

function fmt(x: number): string {
  return Number.isInteger(x) ? String(x) : x.toFixed(3).replace(/0+$/, '');
}
