/**
 * SimRig: the Rig contract on the sim scene, exactly as a real rig: the same model, the same
 * SafetySupervisor, read/write/tick at the control rate. Physics runs only when the SimClock is
 * asked to wait: `waitUntil(t)` sub-steps the world to t with the motor commands the supervisor
 * last set, so a control loop on a SimClock runs as fast as the CPU allows and bit-identically.
 *
 * Like the YAM vendor driver, the rig adds gravity compensation to each joint's torque
 * feedforward while it tracks; damped arms get kp = 0 and the joint's kd, unpowered arms nothing.
 * A blow-up (NaN, an object through the table, a joint far outside its limits, an object flung
 * at absurd speed above the table) becomes a
 * 'sim-unstable' fault: the supervisor damps, and the rollout marks the episode invalid.
 */
import {
  ARM_SIDES,
  DOF_PER_ARM,
  JOINTS_PER_ARM,
  STATE_DIM,
  type Clock,
  type Rig,
  type RigCommand,
  type RigFault,
  type RigMode,
  type RigModel,
  type RigState,
  type SafetyEvent,
} from '../rig/contract.js';
import { SafetySupervisor, type SafetyOptions } from '../rig/safety.js';
import {
  ArmFeedForward,
  MODEL_EXACT_FEED_FORWARD,
  feedForwardFault,
  type FeedForwardSettings,
} from '../rig/gravity.js';
import { newMotorCommand, type MotorCommand } from './arm/motor-command.js';
import type { PhysicsScene } from './physics-scene.js';

export interface SimRigOptions {
  readonly scene: PhysicsScene;
  readonly safety?: SafetyOptions;
  /** Add the torque feed-forward (gravity compensation) to τff while tracking, as the YAM driver does. Default true. */
  readonly gravityCompensation?: boolean;
  /** Its terms; default plain gravity (the sim's arms weigh exactly what the model says). */
  readonly feedForward?: FeedForwardSettings;
}

export class SimRig implements Rig {
  readonly model: RigModel;
  readonly scene: PhysicsScene;
  readonly clock: SimClock;
  private readonly supervisor: SafetySupervisor;
  private readonly gravityCompensation: boolean;
  private readonly motors: MotorCommand[] = [newMotorCommand(), newMotorCommand()];
  private readonly feedForward: ArmFeedForward[];
  /** Per arm: the feed-forward for the last measured state, and why it may not be sent (or undefined). */
  private readonly ffTorque = [new Float64Array(JOINTS_PER_ARM), new Float64Array(JOINTS_PER_ARM)];
  private readonly ffProblem: (string | undefined)[] = [undefined, undefined];
  private readonly position = new Float64Array(STATE_DIM);
  private readonly velocity = new Float64Array(STATE_DIM);
  private readonly effort = new Float64Array(STATE_DIM);
  private faults: RigFault[] = [];
  private configured = false;
  /** Command latency (calibration), s; 0 drives the motors with the last write directly. */
  private readonly latencyS: number;
  private readonly delayed?: DelayedCommands;
  private readonly state: {
    timeS: number;
    mode: RigMode;
    position: Float64Array;
    velocity: Float64Array;
    effort: Float64Array;
    faults: readonly RigFault[];
  };

  constructor(options: SimRigOptions) {
    this.scene = options.scene;
    this.model = options.scene.opts.rigModel;
    this.supervisor = new SafetySupervisor(this.model, options.safety);
    this.gravityCompensation = options.gravityCompensation ?? true;
    this.feedForward = this.model.arms.map(
      (arm) => new ArmFeedForward(arm, options.feedForward ?? MODEL_EXACT_FEED_FORWARD),
    );
    this.clock = new SimClock(this);
    this.latencyS = options.scene.opts.calibration.commandLatencyS ?? 0;
    if (this.latencyS > 0)
      this.delayed = new DelayedCommands(this.latencyS, options.scene.opts.calibration.physicsStepS);
    this.measure();
    this.state = {
      timeS: 0,
      mode: 'unconfigured',
      position: this.position,
      velocity: this.velocity,
      effort: this.effort,
      faults: this.faults,
    };
    this.updateMotors();
  }

  async configure(): Promise<void> {
    this.configured = true;
    this.supervisor.configure();
    this.supervisor.tick(this.position, this.faults, this.clock.nowS());
    this.updateMotors();
  }

  async activate(): Promise<void> {
    this.measure();
    this.supervisor.activate(this.position, this.faults, this.clock.nowS());
    this.updateMotors();
  }

  /** The latest state. Buffers are reused between calls: copy what you keep. */
  read(): RigState {
    this.state.timeS = this.clock.nowS();
    this.state.mode = this.configured ? this.supervisor.mode : 'unconfigured';
    this.state.faults = this.faults;
    return this.state;
  }

  write(cmd: RigCommand): RigCommand {
    const applied = this.supervisor.write(cmd, this.clock.nowS());
    this.updateMotors();
    return applied;
  }

  tick(): void {
    this.measure();
    const unstable = this.faults.length === 0 ? this.scene.instability() : undefined;
    if (unstable !== undefined) {
      this.faults = [
        { kind: 'sim-unstable', message: `The simulation became unstable: ${unstable}. This rollout is invalid.` },
      ];
    }
    this.supervisor.tick(this.position, this.faults, this.clock.nowS());
    this.updateMotors();
  }

  hold(): void {
    this.supervisor.hold(this.clock.nowS());
    this.updateMotors();
  }

  estop(reason: string): void {
    this.supervisor.estop(reason, this.clock.nowS());
    this.updateMotors();
  }

  async deactivate(): Promise<void> {
    this.supervisor.deactivate(this.clock.nowS());
    this.updateMotors();
  }

  takeSafetyEvents(): SafetyEvent[] {
    return this.supervisor.takeEvents();
  }

  /** Steps physics up to tS (the SimClock calls this); the motors keep their last command. */
  advanceTo(tS: number): void {
    const dt = this.scene.opts.calibration.physicsStepS;
    // Whole physics steps whose end is not after tS (a hair of slack absorbs float error).
    const target = Math.floor(tS / dt + 1e-6);
    while (this.scene.steps < target) {
      if (this.faults.length > 0 && this.faults[0].kind === 'sim-unstable') {
        // A blown-up world stays where it is; the rollout is already invalid.
        this.scene.steps = target;
        break;
      }
      this.scene.step(this.delayed ? this.delayed.at(this.scene.steps) : this.motors);
    }
  }

  /** Copies the arms' measured joints into the state vectors. */
  private measure(): void {
    for (let a = 0; a < 2; a++) {
      const arm = this.scene.arms[a];
      const o = a * DOF_PER_ARM;
      for (let j = 0; j < JOINTS_PER_ARM; j++) {
        this.position[o + j] = arm.q[j];
        this.velocity[o + j] = arm.dq[j];
        this.effort[o + j] = arm.effort[j];
      }
      this.position[o + JOINTS_PER_ARM] = arm.gripperPosition();
      this.velocity[o + JOINTS_PER_ARM] = arm.gripperVelocity();
      this.effort[o + JOINTS_PER_ARM] = arm.gripperEffortNm;
      // The same feed-forward as the YAM driver's, from the same measured state (src/rig/gravity.ts),
      // once per measurement: commands written between two measurements reuse it.
      if (this.gravityCompensation)
        this.ffProblem[a] = this.feedForward[a].compute(this.position, this.velocity, o, this.ffTorque[a]);
    }
  }

  /** Turns the supervisor's output and per-arm drive into motor commands, as the CAN driver would. */
  private updateMotors(): void {
    const out = this.supervisor.output;
    for (let a = 0; a < 2; a++) {
      const side = ARM_SIDES[a];
      const arm = this.model.arms[a];
      const m = this.motors[a];
      const drive = this.configured ? this.supervisor.drive(side) : 'off';
      const o = a * DOF_PER_ARM;
      const why = this.ffProblem[a];
      if (drive === 'track' && why !== undefined && this.faults.length === 0)
        this.faults = [feedForwardFault(side, why)];
      for (let j = 0; j < JOINTS_PER_ARM; j++) {
        const spec = arm.joints[j];
        if (drive === 'track') {
          m.q[j] = out.position[o + j];
          m.dq[j] = out.velocity[o + j];
          m.kp[j] = spec.kp;
          m.kd[j] = spec.kd;
          m.tauFf[j] = out.torqueNm[o + j] + (this.gravityCompensation ? this.ffTorque[a][j] : 0);
        } else {
          m.q[j] = this.position[o + j];
          m.dq[j] = 0;
          m.kp[j] = 0;
          m.kd[j] = drive === 'damp' ? spec.kd : 0;
          m.tauFf[j] = 0;
        }
      }
      m.gripper = drive === 'track' ? out.position[o + JOINTS_PER_ARM] : this.position[o + JOINTS_PER_ARM];
      m.gripperKp = drive === 'track' ? arm.gripper.kp : 0;
      m.gripperKd = drive === 'off' ? 0 : arm.gripper.kd;
    }
    this.delayed?.written(this.clock.nowS(), this.motors);
  }
}

/**
 * The motors acting on commands `latencyS` after they were written: each physics step runs the
 * time average, over that step, of the command stream shifted by the latency — so a latency
 * shorter than a step weighs the old and the new command by how long each held, and the effect
 * of the latency on the motion is smooth in its value (what a fit needs), not a whole step or none.
 * The MIT law is linear in every command term, so averaging the terms averages the torque, except
 * across a change of gains (activation), which lasts one step.
 */
class DelayedCommands {
  /** Written commands, oldest first: from `t` on, `cmd` (per arm) was the latest write. */
  private readonly history: { t: number; cmd: MotorCommand[] }[] = [];
  private readonly out: MotorCommand[] = [newMotorCommand(), newMotorCommand()];

  constructor(
    private readonly latencyS: number,
    private readonly dtS: number,
  ) {}

  written(tS: number, motors: readonly MotorCommand[]): void {
    const last = this.history[this.history.length - 1];
    const entry = last !== undefined && last.t === tS ? last : { t: tS, cmd: [newMotorCommand(), newMotorCommand()] };
    for (let a = 0; a < 2; a++) copyMotorCommand(motors[a], entry.cmd[a]);
    if (entry !== last) this.history.push(entry);
  }

  /** The commands the motors act on during physics step `step` (from step·dt to (step+1)·dt). */
  at(step: number): MotorCommand[] {
    const from = step * this.dtS - this.latencyS;
    const to = from + this.dtS;
    // Drop what ended before this window (keep the entry in force at its start).
    while (this.history.length > 1 && this.history[1].t <= from) this.history.shift();
    const h = this.history;
    for (let a = 0; a < 2; a++) {
      const o = this.out[a];
      // Before the first write the motors ran the first command (the constructor's "off").
      let weightSum = 0;
      zeroMotorCommand(o);
      for (let k = 0; k < h.length && h[k].t < to; k++) {
        const start = k === 0 ? from : Math.max(from, h[k].t);
        const end = k + 1 < h.length ? Math.min(to, h[k + 1].t) : to;
        const w = end - start;
        if (w <= 0) continue;
        addMotorCommand(o, h[k].cmd[a], w);
        weightSum += w;
      }
      if (weightSum > 0) scaleMotorCommand(o, 1 / weightSum);
    }
    return this.out;
  }
}

function copyMotorCommand(from: MotorCommand, to: MotorCommand): void {
  to.q.set(from.q);
  to.dq.set(from.dq);
  to.kp.set(from.kp);
  to.kd.set(from.kd);
  to.tauFf.set(from.tauFf);
  to.gripper = from.gripper;
  to.gripperKp = from.gripperKp;
  to.gripperKd = from.gripperKd;
}

function zeroMotorCommand(m: MotorCommand): void {
  for (const v of [m.q, m.dq, m.kp, m.kd, m.tauFf]) v.fill(0);
  m.gripper = m.gripperKp = m.gripperKd = 0;
}

function addMotorCommand(to: MotorCommand, from: MotorCommand, w: number): void {
  for (let j = 0; j < 6; j++) {
    to.q[j] += w * from.q[j];
    to.dq[j] += w * from.dq[j];
    to.kp[j] += w * from.kp[j];
    to.kd[j] += w * from.kd[j];
    to.tauFf[j] += w * from.tauFf[j];
  }
  to.gripper += w * from.gripper;
  to.gripperKp += w * from.gripperKp;
  to.gripperKd += w * from.gripperKd;
}

function scaleMotorCommand(m: MotorCommand, s: number): void {
  for (let j = 0; j < 6; j++) {
    m.q[j] *= s;
    m.dq[j] *= s;
    m.kp[j] *= s;
    m.kd[j] *= s;
    m.tauFf[j] *= s;
  }
  m.gripper *= s;
  m.gripperKp *= s;
  m.gripperKd *= s;
}

/**
 * Sim time: nowS() is the last time waited for; waitUntil(t) steps the rig's physics to t first.
 * Never sleeps, so episodes run as fast as the CPU allows.
 */
export class SimClock implements Clock {
  private t = 0;

  constructor(private readonly rig: SimRig) {}

  nowS(): number {
    return this.t;
  }

  waitUntil(tS: number): Promise<void> {
    if (tS > this.t) {
      this.rig.advanceTo(tS);
      this.t = tS;
    }
    return RESOLVED;
  }
}
const RESOLVED = Promise.resolve();
