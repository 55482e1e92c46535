/**
 * The safety supervisor every Rig uses, real or sim. A pure state machine: no I/O, no timers, no
 * clock of its own — the rig passes the time and its measurements in. The rig calls
 *
 *   configure()                       after it has talked to the hardware,
 *   activate(measured, faults, nowS)  before powering the motors (throws RigError on a wrong zero),
 *   write(cmd, nowS)                  from Rig.write — returns what was actually applied,
 *   tick(measured, faults, nowS)      once per control cycle from Rig.tick (watchdog, faults, e-stop),
 *   hold / estop / deactivate         from the Rig methods of the same names,
 *
 * With an interlock (SafetyOptions.interlock) every write() and tick() first asks it: open while the
 * arms are powered is an e-stop of its own kind ('interlock-stop') — the command of that very
 * cycle is replaced by a hold at the measured pose, the arms damp on the next tick, and activate()
 * refuses until the interlock closes.
 *
 * and after every call drives each arm as `drive(side)` says with the targets in `output`:
 *   'off'   motors disabled (before activation),
 *   'track' position control (MIT kp/kd) to output.position with the velocity/torque feedforward,
 *   'damp'  kp = 0, damping only (the arm sinks slowly under gravity).
 *
 * Every intervention is a SafetyEvent (drained by takeEvents()). Clamping events are emitted when
 * clamping *starts* on an entry, not every cycle it continues, so a policy pushing against a limit
 * does not flood the episode record.
 *
 * The hot path (write, tick) allocates nothing except when it emits an event.
 */
import {
  ARM_SIDES,
  DOF_PER_ARM,
  JOINTS_PER_ARM,
  RigError,
  STATE_DIM,
  type ArmSide,
  type RigCommand,
  type RigFault,
  type CellInterlock,
  type RigMode,
  type RigModel,
  type SafetyEvent,
  type SafetyEventKind,
} from './contract.js';
import { YAM_LIMIT_BUFFER_RAD, YAM_WRONG_ZERO_RAD } from './yam.js';

export type ArmDrive = 'off' | 'track' | 'damp';

export interface SafetyOptions {
  /** Control period, seconds (the loop's rate). E-stop damps one period after it stops. Default 1/250. */
  readonly controlPeriodS?: number;
  /** No command for this long while active → hold the current pose. Default 100 ms. */
  readonly holdAfterMs?: number;
  /** Still no command this long after the last one → damp. Default 2000 ms. */
  readonly dampAfterMs?: number;
  /** Cap on joint speed on top of each motor's V_MAX, rad/s. Default 3 rad/s. */
  readonly jointVelocityCapRadS?: number;
  /** Gripper speed, normalised stroke per second. Default 3 (full stroke in a third of a second). */
  readonly gripperSpeedPerS?: number;
  /** Margin the vendor adds to each limit; only used to recognise a wrong zero. Default 0.15 rad. */
  readonly limitBufferRad?: number;
  /** Beyond the widened limit by more than this at activation → wrong zero, refuse. Default 0.1 rad. */
  readonly wrongZeroRad?: number;
  /** The cell's interlock, checked on every write() and tick(); absent = none (the sim, a bench). */
  readonly interlock?: CellInterlock;
}

/** The supervisor's own record of an interlock stop: when, why, and in which of its cycles. */
export interface InterlockStop {
  readonly timeS: number;
  readonly reason: string;
  /** Ticks since activation when it was seen (0 = before the first tick). */
  readonly cycle: number;
  /** Seen by write() (that cycle's command was replaced by the hold) or by tick(). */
  readonly seenBy: 'write' | 'tick';
}

export const DEFAULT_CONTROL_PERIOD_S = 1 / 250;
export const DEFAULT_HOLD_AFTER_MS = 100;
export const DEFAULT_DAMP_AFTER_MS = 2000;
export const DEFAULT_JOINT_VELOCITY_CAP_RAD_S = 3;
export const DEFAULT_GRIPPER_SPEED_PER_S = 3;
/**
 * Longest gap between two accepted commands that still earns a full velocity step: a command
 * after a longer pause may move each joint at most vmax × 50 ms, so a stale policy cannot jump.
 */
export const MAX_STEP_DT_S = 0.05;

/** What the supervisor wants the motors to do now. Buffers are reused: copy to keep. */
export interface SafetyOutput {
  /** Targets, policy order, 14 entries. */
  readonly position: Float64Array;
  readonly velocity: Float64Array;
  readonly torqueNm: Float64Array;
}

/** Operator name of a state entry: "left arm joint 3" (1-based) or "left gripper". */
export function entryName(index: number): string {
  const side = index < DOF_PER_ARM ? 'left' : 'right';
  const j = index % DOF_PER_ARM;
  return j === JOINTS_PER_ARM ? `${side} gripper` : `${side} arm joint ${j + 1}`;
}

type HoldKind = 'resumable' | 'latched';

export class SafetySupervisor {
  readonly output: SafetyOutput;
  private readonly applied: RigCommand;
  private currentMode: RigMode = 'unconfigured';
  private readonly drives: ArmDrive[] = ['off', 'off'];
  private holdKind: HoldKind = 'resumable';
  private readonly periodS: number;
  private readonly holdAfterS: number;
  private readonly dampAfterS: number;
  private readonly bufferRad: number;
  private readonly wrongZeroRad: number;
  private readonly lo = new Float64Array(STATE_DIM);
  private readonly hi = new Float64Array(STATE_DIM);
  private readonly vmax = new Float64Array(STATE_DIM);
  private readonly tmax = new Float64Array(STATE_DIM);
  private readonly measured = new Float64Array(STATE_DIM);
  /** Per-entry "already reported" flags so clamping is reported when it starts. */
  private readonly posClamped = new Uint8Array(STATE_DIM);
  private readonly velClamped = new Uint8Array(STATE_DIM);
  private readonly torqueClamped = new Uint8Array(STATE_DIM);
  private lastCommandS = 0;
  private lastAcceptedS = 0;
  private droppedReported = false;
  private estopTicks = 0;
  /** Bad commands since the last good one, and the reason last reported for them. */
  private rejectedInRow = 0;
  private lastRejectedReason: string | undefined;
  private readonly knownFaults = new Set<string>();
  private events: SafetyEvent[] = [];
  private readonly interlock: CellInterlock | undefined;
  /** Ticks since the last activation: the supervisor's own cycle count. */
  private cycles = 0;
  private lastInterlockStop: InterlockStop | undefined;

  constructor(
    readonly model: RigModel,
    options: SafetyOptions = {},
  ) {
    this.periodS = options.controlPeriodS ?? DEFAULT_CONTROL_PERIOD_S;
    this.holdAfterS = (options.holdAfterMs ?? DEFAULT_HOLD_AFTER_MS) / 1000;
    this.dampAfterS = (options.dampAfterMs ?? DEFAULT_DAMP_AFTER_MS) / 1000;
    this.bufferRad = options.limitBufferRad ?? YAM_LIMIT_BUFFER_RAD;
    this.wrongZeroRad = options.wrongZeroRad ?? YAM_WRONG_ZERO_RAD;
    this.interlock = options.interlock;
    if (!(this.periodS > 0) || !(this.holdAfterS > 0) || !(this.dampAfterS >= this.holdAfterS)) {
      throw new Error(
        'SafetySupervisor: controlPeriodS and holdAfterMs must be positive and dampAfterMs ≥ holdAfterMs.',
      );
    }
    if (model.arms.length !== 2)
      throw new Error(`SafetySupervisor: the rig model must have two arms, not ${model.arms.length}.`);
    const cap = options.jointVelocityCapRadS ?? DEFAULT_JOINT_VELOCITY_CAP_RAD_S;
    const gripperSpeed = options.gripperSpeedPerS ?? DEFAULT_GRIPPER_SPEED_PER_S;
    model.arms.forEach((arm, a) => {
      if (arm.side !== ARM_SIDES[a]) throw new Error(`SafetySupervisor: arm ${a} must be the ${ARM_SIDES[a]} arm.`);
      for (let j = 0; j < JOINTS_PER_ARM; j++) {
        const spec = arm.joints[j];
        const k = a * DOF_PER_ARM + j;
        this.lo[k] = spec.minRad;
        this.hi[k] = spec.maxRad;
        this.vmax[k] = Math.min(spec.maxVelocityRadS, cap);
        this.tmax[k] = spec.maxTorqueNm;
      }
      const g = a * DOF_PER_ARM + JOINTS_PER_ARM;
      this.lo[g] = 0;
      this.hi[g] = 1;
      this.vmax[g] = gripperSpeed;
      this.tmax[g] = arm.gripper.maxTorqueNm;
    });
    this.output = {
      position: new Float64Array(STATE_DIM),
      velocity: new Float64Array(STATE_DIM),
      torqueNm: new Float64Array(STATE_DIM),
    };
    this.applied = this.output;
  }

  get mode(): RigMode {
    return this.currentMode;
  }

  /** The latest interlock stop since activation, or undefined. */
  get interlockStop(): InterlockStop | undefined {
    return this.lastInterlockStop;
  }

  drive(side: ArmSide): ArmDrive {
    return this.drives[side === 'left' ? 0 : 1];
  }

  /** Joint limits the supervisor clamps to, per state entry (grippers 0..1). */
  limits(index: number): [number, number] {
    return [this.lo[index], this.hi[index]];
  }

  /** The rig has talked to the hardware and read a state; nothing is powered. */
  configure(): void {
    if (this.currentMode === 'unconfigured') this.currentMode = 'configured';
  }

  /**
   * Power up holding the measured pose. Refuses — RigError, and an 'activate-refused' event — when
   * a measurement is not a number, a joint reads beyond its widened limit by more than the
   * wrong-zero margin, or a fault is present.
   */
  activate(measured: ArrayLike<number>, faults: readonly RigFault[], nowS: number): void {
    if (this.currentMode === 'unconfigured') {
      this.refuse(nowS, {
        kind: 'config-mismatch',
        message: 'The rig cannot be activated before it is configured: run configure() first.',
      });
    }
    if (measured.length !== STATE_DIM) {
      this.refuse(nowS, {
        kind: 'config-mismatch',
        message: `The rig reported ${measured.length} positions, not ${STATE_DIM}; not activating.`,
      });
    }
    for (let k = 0; k < STATE_DIM; k++) {
      const v = measured[k];
      const side = k < DOF_PER_ARM ? 'left' : 'right';
      const joint = k % DOF_PER_ARM;
      if (!Number.isFinite(v)) {
        this.refuse(nowS, {
          kind: 'no-reply',
          arm: side,
          joint,
          message: `The ${entryName(k)} has no valid position reading; check its cable and power, then activate again.`,
        });
      }
      if (joint === JOINTS_PER_ARM) continue; // grippers are calibrated by stall, not by zero offset
      const wideLo = this.lo[k] - this.bufferRad;
      const wideHi = this.hi[k] + this.bufferRad;
      const beyond = v < wideLo ? wideLo - v : v > wideHi ? v - wideHi : 0;
      if (beyond > this.wrongZeroRad) {
        this.refuse(nowS, {
          kind: 'wrong-zero',
          arm: side,
          joint,
          message:
            `Not activating: the ${entryName(k)} reads ${v.toFixed(3)} rad, ${(beyond + this.bufferRad).toFixed(3)} rad outside its limits ` +
            `[${this.lo[k].toFixed(3)}, ${this.hi[k].toFixed(3)}] rad — its zero offset is probably wrong. ` +
            `Move the arm to its home pose and re-zero that joint before activating.`,
        });
      }
    }
    if (faults.length > 0) {
      const f = faults[0];
      this.refuse(nowS, { ...f, message: `Not activating while a fault is present: ${f.message}` });
    }
    const interlock = this.interlock?.current();
    if (interlock?.open) {
      this.refuse(nowS, {
        kind: 'interlock',
        message: `Not activating while the cell's interlock is open: ${interlock.reason ?? 'the cell says it is not safe to move.'}`,
      });
    }
    for (let k = 0; k < STATE_DIM; k++) this.measured[k] = measured[k];
    this.holdAt(this.measured);
    this.drives[0] = this.drives[1] = 'track';
    this.currentMode = 'active';
    this.lastCommandS = this.lastAcceptedS = nowS;
    this.knownFaults.clear();
    this.posClamped.fill(0);
    this.velClamped.fill(0);
    this.torqueClamped.fill(0);
    this.droppedReported = false;
    this.estopTicks = 0;
    this.rejectedInRow = 0;
    this.lastRejectedReason = undefined;
    this.cycles = 0;
    this.lastInterlockStop = undefined;
  }

  /**
   * Filter one command. Accepted only while active (or in a watchdog / bad-command hold, which it
   * resumes); otherwise dropped. Returns what is applied now — the output buffers, valid until the
   * next call (copy to keep).
   */
  write(cmd: RigCommand, nowS: number): RigCommand {
    this.checkInterlock(nowS, 'write');
    const resumable = this.currentMode === 'holding' && this.holdKind === 'resumable';
    if (this.currentMode !== 'active' && !resumable) {
      if (!this.droppedReported) {
        this.droppedReported = true;
        this.emit(
          nowS,
          'command-dropped',
          `Commands are ignored while the rig is ${this.currentMode}; activate it to move.`,
        );
      }
      return this.applied;
    }
    const bad = invalidReason(cmd);
    if (bad !== undefined) {
      // A bad command is no command: it does not feed the watchdog, so a source that sends only
      // garbage damps on the same timer as a silent one, while one bad command among good ones
      // only holds until the next good one. Reported when the stretch starts or its reason
      // changes, not 250 times a second.
      this.rejectedInRow++;
      if (bad !== this.lastRejectedReason) {
        this.lastRejectedReason = bad;
        this.emit(nowS, 'non-finite-command', `Ignored a command with ${bad}; holding the current pose.`);
      }
      // Hold where the arm was when the stretch started; re-anchoring on every bad command would
      // let the hold creep down under gravity by the tracking error each cycle.
      if (this.currentMode !== 'holding') this.enterHold('resumable');
      return this.applied;
    }
    this.rejectedInRow = 0;
    this.lastRejectedReason = undefined;
    // At least one control period: a first write in the activation cycle (or two in one cycle)
    // may still move one period's worth.
    const dt = Math.min(Math.max(nowS - this.lastAcceptedS, this.periodS), MAX_STEP_DT_S);
    this.lastCommandS = this.lastAcceptedS = nowS;
    this.currentMode = 'active';
    this.droppedReported = false;
    const out = this.output;
    for (let k = 0; k < STATE_DIM; k++) {
      // Joint limits.
      let target = cmd.position[k];
      const limited = target < this.lo[k] ? this.lo[k] : target > this.hi[k] ? this.hi[k] : target;
      if (this.starts(this.posClamped, k, limited !== target)) {
        this.emitEntry(
          nowS,
          k,
          'position-clamped',
          `Clamped the ${entryName(k)} target ${target.toFixed(3)} to its limit ${limited.toFixed(3)}${unit(k)}.`,
        );
      }
      target = limited;
      // Velocity: the target may move at most vmax·dt from the previous applied target.
      const prev = out.position[k];
      const maxStep = this.vmax[k] * dt;
      const stepped = target > prev + maxStep ? prev + maxStep : target < prev - maxStep ? prev - maxStep : target;
      let vff = cmd.velocity ? cmd.velocity[k] : 0;
      const vffClamped = vff > this.vmax[k] ? this.vmax[k] : vff < -this.vmax[k] ? -this.vmax[k] : vff;
      const velocityLimited = stepped !== target || vffClamped !== vff;
      if (this.starts(this.velClamped, k, velocityLimited)) {
        this.emitEntry(
          nowS,
          k,
          'velocity-clamped',
          `Slowed the ${entryName(k)} to its speed limit of ${this.vmax[k].toFixed(2)}${k % DOF_PER_ARM === JOINTS_PER_ARM ? ' strokes' : ' rad'}/s.`,
        );
      }
      vff = vffClamped;
      // Torque feedforward.
      const tff = cmd.torqueNm ? cmd.torqueNm[k] : 0;
      const tffClamped = tff > this.tmax[k] ? this.tmax[k] : tff < -this.tmax[k] ? -this.tmax[k] : tff;
      if (this.starts(this.torqueClamped, k, tffClamped !== tff)) {
        this.emitEntry(
          nowS,
          k,
          'torque-clamped',
          `Clamped the ${entryName(k)} torque feedforward ${tff.toFixed(2)} N·m to ±${this.tmax[k].toFixed(1)} N·m.`,
        );
      }
      out.position[k] = stepped;
      out.velocity[k] = vff;
      out.torqueNm[k] = tffClamped;
    }
    return this.applied;
  }

  /**
   * Once per control cycle with the latest measurement: latches new faults (faulted arm damped,
   * healthy arm holding), runs the command watchdog and moves an e-stop from stop to damp.
   */
  tick(measured: ArrayLike<number>, faults: readonly RigFault[], nowS: number): void {
    for (let k = 0; k < STATE_DIM && k < measured.length; k++) this.measured[k] = measured[k];
    this.checkInterlock(nowS, 'tick');
    this.cycles++;
    const mode = this.currentMode;
    if (mode === 'estopped') {
      if (this.estopTicks++ >= 1 && (this.drives[0] !== 'off' || this.drives[1] !== 'off')) {
        this.drives[0] = this.drives[0] === 'off' ? 'off' : 'damp';
        this.drives[1] = this.drives[1] === 'off' ? 'off' : 'damp';
      }
      return;
    }
    if (faults.length > 0 && (mode === 'active' || mode === 'holding' || mode === 'fault'))
      this.latchFaults(faults, nowS);
    if (this.currentMode !== 'active' && !(this.currentMode === 'holding' && this.holdKind === 'resumable')) return;
    const silentS = nowS - this.lastCommandS;
    if (this.currentMode === 'active' && silentS > this.holdAfterS) {
      this.emit(nowS, 'watchdog-hold', `No command for ${(silentS * 1000).toFixed(0)} ms; holding the current pose.`);
      this.enterHold('resumable');
    }
    if (this.currentMode === 'holding' && silentS > this.dampAfterS) {
      const what =
        this.rejectedInRow > 0
          ? `No valid command for ${(silentS * 1000).toFixed(0)} ms (${this.rejectedInRow} rejected)`
          : `No command for ${(silentS * 1000).toFixed(0)} ms`;
      this.emit(nowS, 'watchdog-damp', `${what}; damping both arms. Activate the rig again to continue.`);
      this.drives[0] = this.drives[1] = 'damp';
      this.currentMode = 'damped';
      this.droppedReported = false;
    }
  }

  /** Operator/rollout hold at the current pose; latched until activate(). */
  hold(_nowS: number): void {
    if (this.currentMode === 'active' || this.currentMode === 'holding') this.enterHold('latched');
  }

  /**
   * Stop at the measured pose now (the next cycle sends it), damp on the cycle after. Only an arm
   * that is tracking gets the stop cycle: an arm a fault, the watchdog or deactivate() damped stays
   * damped, and an unpowered arm stays off — an e-stop never adds stiffness. Before configure()
   * nothing is powered and there is nothing to reset, so the mode stays 'unconfigured'.
   */
  estop(reason: string, nowS: number): void {
    this.holdAt(this.measured);
    if (this.currentMode !== 'unconfigured') this.currentMode = 'estopped';
    this.estopTicks = 0;
    this.droppedReported = false;
    const what =
      this.drives[0] === 'off' && this.drives[1] === 'off' ? 'Nothing is powered' : 'Arms stopped and damped';
    this.emit(
      nowS,
      'estop',
      `Emergency stop: ${reason || 'no reason given'}. ${what}; activate the rig again when it is safe.`,
    );
  }

  /**
   * An open interlock while any arm is powered and not already stopped: the e-stop sequence (hold
   * at the measured pose now, damp on the next tick), reported as an 'interlock-stop'. Cheap when
   * closed: one call, no allocation.
   */
  private checkInterlock(nowS: number, seenBy: InterlockStop['seenBy']): void {
    const il = this.interlock;
    if (il === undefined) return;
    const mode = this.currentMode;
    if (mode !== 'active' && mode !== 'holding' && mode !== 'fault') return;
    const reading = il.current();
    if (!reading.open) return;
    const reason = reading.reason ?? "The cell's interlock is open.";
    this.holdAt(this.measured);
    this.currentMode = 'estopped';
    this.estopTicks = 0;
    // The policy's command of this very cycle was replaced: the stop event says so.
    this.droppedReported = seenBy === 'write';
    this.lastInterlockStop = { timeS: nowS, reason, cycle: this.cycles, seenBy };
    this.emit(
      nowS,
      'interlock-stop',
      `${reason} Arms stopped at their pose, then damped; activate the rig again once the interlock is closed.`,
    );
  }

  /** Damp every powered arm (an unpowered one stays off); the rig then disables the motors. */
  deactivate(_nowS: number): void {
    if (this.currentMode === 'unconfigured') return;
    for (let a = 0; a < 2; a++) if (this.drives[a] !== 'off') this.drives[a] = 'damp';
    this.holdAt(this.measured);
    this.currentMode = 'damped';
    this.droppedReported = false;
  }

  takeEvents(): SafetyEvent[] {
    const e = this.events;
    this.events = [];
    return e;
  }

  private latchFaults(faults: readonly RigFault[], nowS: number): void {
    let changed = false;
    for (const f of faults) {
      const key = `${f.kind}/${f.arm ?? '*'}/${f.joint ?? '*'}`;
      if (this.knownFaults.has(key)) continue;
      this.knownFaults.add(key);
      changed = true;
      const arms = f.arm ? [f.arm] : ARM_SIDES;
      for (const side of arms) this.drives[side === 'left' ? 0 : 1] = 'damp';
      const healthy = ARM_SIDES.filter((s) => this.drive(s) === 'track');
      const what = f.arm
        ? `${f.arm} arm${f.joint !== undefined ? ` ${f.joint === JOINTS_PER_ARM ? 'gripper' : `joint ${f.joint + 1}`}` : ''}`
        : 'rig';
      this.events.push({
        timeS: nowS,
        kind: 'fault-hold',
        ...(f.arm ? { arm: f.arm } : {}),
        ...(f.joint !== undefined ? { joint: f.joint } : {}),
        message:
          `Fault on the ${what}: ${f.message} ` +
          `Damped the ${arms.map((s) => `${s} arm`).join(' and ')}${healthy.length ? `; the ${healthy.map((s) => `${s} arm`).join(' and ')} holds its pose` : ''}. ` +
          `Clear the fault, then activate the rig again.`,
      });
    }
    if (changed) {
      // The healthy arm holds where it is now.
      for (let a = 0; a < 2; a++) {
        if (this.drives[a] !== 'track') continue;
        for (let k = a * DOF_PER_ARM; k < (a + 1) * DOF_PER_ARM; k++) {
          this.output.position[k] = this.measured[k];
          this.output.velocity[k] = 0;
          this.output.torqueNm[k] = 0;
        }
      }
      this.currentMode = 'fault';
      this.droppedReported = false;
    }
  }

  private enterHold(kind: HoldKind): void {
    this.holdAt(this.measured);
    this.holdKind = kind;
    this.currentMode = 'holding';
    this.droppedReported = false;
  }

  private holdAt(pose: Float64Array): void {
    this.output.position.set(pose);
    this.output.velocity.fill(0);
    this.output.torqueNm.fill(0);
  }

  /** True when clamping starts on entry k (it was not clamped on the previous command). */
  private starts(flags: Uint8Array, k: number, active: boolean): boolean {
    const was = flags[k];
    flags[k] = active ? 1 : 0;
    return active && !was;
  }

  private emitEntry(nowS: number, k: number, kind: SafetyEventKind, message: string): void {
    const side: ArmSide = k < DOF_PER_ARM ? 'left' : 'right';
    this.events.push({ timeS: nowS, kind, arm: side, joint: k % DOF_PER_ARM, message });
  }

  private emit(nowS: number, kind: SafetyEventKind, message: string): void {
    this.events.push({ timeS: nowS, kind, message });
  }

  private refuse(nowS: number, fault: RigFault): never {
    this.events.push({
      timeS: nowS,
      kind: 'activate-refused',
      ...(fault.arm ? { arm: fault.arm } : {}),
      ...(fault.joint !== undefined ? { joint: fault.joint } : {}),
      message: fault.message,
    });
    throw new RigError(fault.message, fault);
  }
}

/** Why a command cannot be applied, or undefined. */
function invalidReason(cmd: RigCommand): string | undefined {
  if (cmd === null || typeof cmd !== 'object' || cmd.position === undefined || cmd.position === null)
    return 'no position targets';
  return (
    invalidArray('position', cmd.position) ??
    (cmd.velocity ? invalidArray('velocity', cmd.velocity) : undefined) ??
    (cmd.torqueNm ? invalidArray('torque', cmd.torqueNm) : undefined)
  );
}

function invalidArray(name: string, arr: ArrayLike<number>): string | undefined {
  if (arr.length !== STATE_DIM) return `${arr.length} ${name} entries instead of ${STATE_DIM}`;
  for (let k = 0; k < STATE_DIM; k++) {
    if (!Number.isFinite(arr[k])) return `a non-finite ${name} for the ${entryName(k)} (${String(arr[k])})`;
  }
  return undefined;
}

function unit(k: number): string {
  return k % DOF_PER_ARM === JOINTS_PER_ARM ? '' : ' rad';
}
