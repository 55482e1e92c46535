/**
 * The emulated cell's world: a Rapier scene of its own (the sim twin's scene builder, run on the
 * cell truth's physics), stepped on the wall clock, whose arms are moved by the YAM bus
 * emulators' fourteen motors. Each physics step reads every motor's power stage (the MIT law's
 * terms, watchdog damping, or nothing), applies it to the scene's joint — scaled by the truth's
 * motor torque constants — and writes back the joint's position, velocity and the torque the motor
 * believes it delivers, which is what the feedback frames then carry.
 *
 * Time: the world is advanced to "now" whenever a motor is spoken to and by a background timer,
 * in whole physics steps. It never slows time: when stepping falls behind the wall clock by more
 * than BEHIND_FAULT_S it says so as a fault (and keeps catching up), so an overloaded machine
 * shows up as an invalid rollout instead of physics that quietly ran slow.
 */
import { performance } from 'node:perf_hooks';
import { ARM_SIDES, type ArmSide, type RigFault, type RigModel } from '../rig/contract.js';
import type { PrivilegedState } from '../policy/contract.js';
import type { Layout, ObjectEndState, TaskDefinition } from '../tasks/types.js';
import type { ObjectSighting } from '../tasks/task-events.js';
import { createScene, HOME_START_POSITION, type SimScene } from '../sim/scene.js';
import { newMotorCommand, type MotorCommand } from '../sim/arm/motor-command.js';
import type { SceneSnapshot } from '../sim/render/scene-snapshot.js';
import { PLACEMENT_SIGMA_M, PLACEMENT_SIGMA_YAW_RAD } from '../sim/sim-rollout.js';
import type { MotorPlant } from '../../drivers/emulators/emulated-motor.js';
import {
  EMULATED_REST_POSE_RAD,
  GRIPPER_MOTOR_ID,
  type YamBusEmulator,
} from '../../drivers/emulators/yam-bus-emulator.js';
import { YAM_LIMIT_BUFFER_RAD } from '../rig/yam.js';
import type { HashedCellTruth } from './cell-truth.js';
import { emulationBehindFault } from './cell-thread-memory.js';

/** Stepping this far behind the wall clock is a fault: more than a GC pause, less than the motors' own 400 ms watchdog. */
export const BEHIND_FAULT_S = 0.25;
/**
 * A fall-behind stays a fault this long after the world caught up, so the rig's next tick sees it
 * (catching up takes one burst of motor frames) and the operator re-activates on a world that is
 * keeping up again.
 */
const BEHIND_FAULT_HOLD_S = 1;
/** At most this many physics steps per call, so one late call cannot stall the event loop for long. */
const MAX_STEPS_PER_CALL = 50;
/**
 * While catching up after a stall, the world runs at most this much faster than the wall clock.
 * A real motor's reports never move faster than the motor can: caught up 50 steps (200 ms) at a
 * time, a gripper opening at the episode's start moved 1.3 rad between two replies 12 ms apart and
 * the driver rightly faulted it as a broken encoder ("sent 3 reports in a row with impossible
 * values", seen on a busy machine). At 1.5× a joint moving under two thirds of its motor's top
 * speed still reads as possible, and a lag still shrinks (a 100 ms one within 200 ms).
 */
const CATCH_UP_RATE = 1.5;
/** World time run before the wall clock starts: the arms come to rest on their stops, objects settle. */
const SETTLE_BEFORE_START_S = 1;
/** Longest start-up before the world is held to real time even if it never caught up. */
const WARM_UP_S = 30;
/** How often the background timer advances the world when nobody talks to the motors. */
const TIMER_PERIOD_MS = 4;

/**
 * How an operator places a layout from the projected outlines (per axis, per object): the sim
 * twin's own placement noise, so the same seed places a layout the same way in sim and on the cell.
 */
export { PLACEMENT_SIGMA_M, PLACEMENT_SIGMA_YAW_RAD };

export interface CellWorldOptions {
  readonly rigModel: RigModel;
  readonly task: TaskDefinition;
  readonly layout: Layout;
  readonly truth: HashedCellTruth;
  /** Seeds the operator's placement noise. */
  readonly placementSeed: number;
  /** Wall time, seconds (default performance.now()). The bus emulators must read the same clock. */
  readonly nowS?: () => number;
  /**
   * False on virtual time (nowS stands still unless the host waits on it): then nothing steps the
   * world in the background and a call catches up in full — there is no event loop to keep
   * responsive, since time cannot move meanwhile. Default true (wall time).
   */
  readonly timePassesByItself?: boolean;
  /** Arm pose the cell starts in (policy order, 14). Default: home, grippers open, before it settles. */
  readonly startPosition?: ArrayLike<number>;
}

/** How the world kept up with real time. */
export interface CellWorldTiming {
  /** World time stepped since start(), seconds. */
  readonly worldS: number;
  /** Wall time since start(), seconds. */
  readonly wallS: number;
  /** CPU time spent stepping, as a fraction of wall time (this thread). */
  readonly busyFraction: number;
  /** Real-time margin: wall time over stepping time (1 = just keeps up). */
  readonly marginX: number;
  /** Worst lag behind the wall clock after a catch-up, ms. */
  readonly maxLagMs: number;
  /** Times the lag crossed BEHIND_FAULT_S. */
  readonly behindEvents: number;
}

/**
 * What the station may see of the cell's world besides its motors — the table as a tracker and the
 * cameras see it, and how the world keeps up — whichever thread the world runs in (CellWorld in
 * this one; SharedCellWorld reading what the cell's own thread publishes).
 */
export interface CellWorldView {
  readonly truth: HashedCellTruth;
  timing(): CellWorldTiming;
  takeLagPeakMs(): number;
  endStates(): ObjectEndState[];
  sightings(): ObjectSighting[];
  privilegedState(): PrivilegedState;
  snapshot(): SceneSnapshot;
}

export class CellWorld implements MotorPlant, CellWorldView {
  private sceneNow: SimScene;
  private readonly buses: Partial<Record<ArmSide, YamBusEmulator>> = {};
  private readonly commands: MotorCommand[] = [newMotorCommand(), newMotorCommand()];
  private readonly nowS: () => number;
  private readonly dtS: number;
  private readonly torqueScale: readonly number[];
  private readonly gripperTravelRad: number[];
  private t0S = NaN;
  /** Wall time of the last advance, and the steps the wall time since has earned (CATCH_UP_RATE). */
  private lastAdvanceS = NaN;
  private stepBudget = 0;
  private stepsAtStart = 0;
  private busyMs = 0;
  private maxLagS = 0;
  /** Worst lag since takeLagPeakMs() last read it. */
  private lagPeakS = 0;
  private behindEvents = 0;
  /** The worst lag of the current fall-behind, s (0: keeping up). */
  private behindNowS = 0;
  /** Wall time (since start) until which the fault stays raised after the world caught up. */
  private behindUntilS = 0;
  private stepping = false;
  private freed = false;
  private warm = false;
  private timer: ReturnType<typeof setInterval> | undefined;

  private constructor(
    scene: SimScene,
    readonly opts: CellWorldOptions,
  ) {
    this.sceneNow = scene;
    this.nowS = opts.nowS ?? (() => performance.now() / 1000);
    this.dtS = opts.truth.truth.physics.physicsStepS;
    this.torqueScale = opts.truth.truth.motorTorqueScale;
    this.gripperTravelRad = opts.rigModel.arms.map((a) => a.gripper.motorTravelRad);
  }

  /** Builds the world with the layout placed as an operator would, and lets it settle (motors off). */
  static async create(opts: CellWorldOptions): Promise<CellWorld> {
    const scene = await buildScene(opts, opts.layout, opts.placementSeed, opts.startPosition ?? HOME_START_POSITION);
    const world = new CellWorld(scene, opts);
    world.settle();
    return world;
  }

  get scene(): SimScene {
    return this.sceneNow;
  }

  get truth(): HashedCellTruth {
    return this.opts.truth;
  }

  /** The bus whose motors move this arm (created with `plant: world`). */
  attach(side: ArmSide, bus: YamBusEmulator): void {
    this.buses[side] = bus;
    this.writeMeasured();
  }

  /** Starts the wall clock (on the host's first contact): from then on the world keeps up with real time. */
  private startClock(): void {
    this.t0S = this.nowS();
    this.lastAdvanceS = this.t0S;
    this.stepsAtStart = this.sceneNow.steps;
    this.busyMs = 0;
    if (this.opts.timePassesByItself === false) return;
    this.timer = setInterval(() => this.advanceTo(this.nowS()), TIMER_PERIOD_MS);
    this.timer.unref();
  }

  /** MotorPlant: steps the world up to nowS (whole steps), driving the joints from the motors. */
  advanceTo(nowS: number): void {
    if (this.stepping || this.freed) return; // freed, or re-entered from a motor
    // The wall clock starts when the host first speaks to a motor: until then nothing can observe
    // the world, and the host's own start-up (loading code, opening ports) costs it nothing.
    if (!(this.t0S === this.t0S)) this.startClock();
    const target = this.stepsAtStart + Math.floor((nowS - this.t0S) / this.dtS + 1e-9);
    let n =
      this.opts.timePassesByItself === false
        ? target - this.sceneNow.steps
        : Math.min(target - this.sceneNow.steps, this.earnSteps(nowS));
    if (n <= 0) return;
    this.stepBudget -= n;
    this.stepping = true;
    const t = performance.now();
    try {
      while (n-- > 0) this.stepOnce();
    } finally {
      this.stepping = false;
      this.busyMs += performance.now() - t;
    }
    const wallS = this.nowS() - this.t0S;
    const lagS = wallS - (this.sceneNow.steps - this.stepsAtStart) * this.dtS;
    // The host's first moments (code still loading) may stall the event loop; the world catches
    // up and only then is held to real time — or after WARM_UP_S if it never catches up at all.
    if (!this.warm) {
      if (lagS < BEHIND_FAULT_S / 2 || wallS > WARM_UP_S) this.warm = true;
      else return;
    }
    if (lagS > this.maxLagS) this.maxLagS = lagS;
    if (lagS > this.lagPeakS) this.lagPeakS = lagS;
    if (lagS > BEHIND_FAULT_S) {
      if (this.behindNowS === 0) this.behindEvents += 1;
      this.behindNowS = Math.max(this.behindNowS, lagS);
      this.behindUntilS = wallS + BEHIND_FAULT_HOLD_S;
    } else if (wallS > this.behindUntilS) this.behindNowS = 0;
  }

  /**
   * Steps the wall time since the last call allows: CATCH_UP_RATE × its length, saved up to
   * MAX_STEPS_PER_CALL. A stall of this thread earns its own length back in one go (the host also
   * waited that long for the replies); a world that fell behind while running catches up no faster.
   */
  private earnSteps(nowS: number): number {
    this.stepBudget = Math.min(
      MAX_STEPS_PER_CALL,
      this.stepBudget + (CATCH_UP_RATE * Math.max(0, nowS - this.lastAdvanceS)) / this.dtS,
    );
    this.lastAdvanceS = nowS;
    return Math.floor(this.stepBudget);
  }

  /** Faults the cell raises itself (beyond its motors'): the world falling behind real time. */
  faults(): readonly RigFault[] {
    if (this.behindNowS === 0) return NO_FAULTS;
    return [emulationBehindFault(this.behindNowS * 1000)];
  }

  /** The current fall-behind's worst lag, ms (0 while the world keeps up): what faults() reports. */
  behindNowMs(): number {
    return this.behindNowS * 1000;
  }

  /** The worst lag since takeLagPeakMs() last read it, ms, without starting a new peak. */
  lagPeakMs(): number {
    return this.lagPeakS * 1000;
  }

  /** Whether the world's clock runs (a host has spoken to a motor). */
  get running(): boolean {
    return this.t0S === this.t0S;
  }

  /** The worst lag behind the wall clock since the last call, ms (a take's own peak: call at its start and its end). */
  takeLagPeakMs(): number {
    const peak = this.lagPeakS * 1000;
    this.lagPeakS = 0;
    return peak;
  }

  timing(): CellWorldTiming {
    const wallS = this.t0S === this.t0S ? this.nowS() - this.t0S : 0;
    const worldS = (this.sceneNow.steps - this.stepsAtStart) * this.dtS;
    const busy = wallS > 0 ? this.busyMs / 1000 / wallS : 0;
    return {
      worldS,
      wallS,
      busyFraction: busy,
      marginX: busy > 0 ? 1 / busy : Infinity,
      maxLagMs: this.maxLagS * 1000,
      behindEvents: this.behindEvents,
    };
  }

  /** Where each object ended, in the task's scoring terms (what an operator would enter). */
  endStates(): ObjectEndState[] {
    this.advanceTo(this.nowS());
    return this.sceneNow.endStates();
  }

  /**
   * Each object as it stands now, for task events: what an overhead tracker would report. It does
   * not advance the world (the motors' traffic does), so sampling never moves physics forward.
   */
  sightings(): ObjectSighting[] {
    return this.sceneNow.sightings();
  }

  /** Object poses: what rehearsal code policies may read on the emulated cell. */
  privilegedState(): PrivilegedState {
    return this.sceneNow.privilegedState();
  }

  snapshot(): SceneSnapshot {
    return this.sceneNow.snapshot();
  }

  fingerprint(): Float64Array {
    return this.sceneNow.fingerprint();
  }

  /** Stops the world and frees its physics memory (idempotent; nothing may step it afterwards). */
  free(): void {
    if (this.timer) clearInterval(this.timer);
    this.timer = undefined;
    if (this.freed) return;
    this.freed = true;
    this.sceneNow.free();
  }

  private settle(): void {
    const steps = Math.round(SETTLE_BEFORE_START_S / this.dtS);
    for (let i = 0; i < steps; i++) this.stepOnce();
  }

  private stepOnce(): void {
    for (let a = 0; a < 2; a++) this.readMotors(a);
    this.sceneNow.step(this.commands);
    this.writeMeasured();
  }

  /** Motor power stages → the arm's joint drive for this step. An arm without a bus is unpowered. */
  private readMotors(a: number): void {
    const bus = this.buses[ARM_SIDES[a]];
    const c = this.commands[a];
    for (let j = 0; j < 6; j++) {
      const m = bus?.motors.get(j + 1);
      if (!m) {
        c.kp[j] = c.kd[j] = c.tauFf[j] = c.dq[j] = 0;
        c.q[j] = this.sceneNow.arms[a].q[j];
        continue;
      }
      const d = m.drive();
      const s = this.torqueScale[j];
      c.q[j] = d.positionRad;
      c.dq[j] = d.velocityRadS;
      c.kp[j] = d.kp * s;
      c.kd[j] = d.kd * s;
      c.tauFf[j] = d.torqueNm * s;
    }
    const g = bus?.motors.get(GRIPPER_MOTOR_ID);
    if (!g) {
      c.gripperKp = c.gripperKd = 0;
      return;
    }
    const d = g.drive();
    c.gripper = d.positionRad / this.gripperTravelRad[a];
    c.gripperKp = d.kp;
    c.gripperKd = d.kd;
  }

  /** The scene's joints → each motor's encoder, velocity and (believed) torque. */
  private writeMeasured(): void {
    for (let a = 0; a < 2; a++) {
      const bus = this.buses[ARM_SIDES[a]];
      if (!bus) continue;
      const arm = this.sceneNow.arms[a];
      for (let j = 0; j < 6; j++) {
        // The motor estimates torque from current with its nominal torque constant: it reports
        // what it was asked for, not the scaled torque its joint really got.
        bus.motors.get(j + 1)?.setMeasured(arm.q[j], arm.dq[j], arm.effort[j] / this.torqueScale[j]);
      }
      const travel = this.gripperTravelRad[a];
      bus.motors
        .get(GRIPPER_MOTOR_ID)
        ?.setMeasured(arm.gripperPosition() * travel, arm.gripperVelocity() * travel, arm.gripperEffortNm);
    }
  }
}

const NO_FAULTS: readonly RigFault[] = [];

/**
 * The cell's arms rest, unpowered, folded on joints 2–3's mechanical stops a hair inside their lower
 * limits (yam-rig.md: home has joints 2 and 3 at their lower limit), as the motor emulator's rest
 * pose has them; the other joints keep the sim's stops beyond the vendor's buffer.
 */
function lowerStops(model: RigModel): number[] {
  return model.arms[0].joints.map((j, i) =>
    i === 1 || i === 2 ? j.minRad + EMULATED_REST_POSE_RAD[i] : j.minRad - YAM_LIMIT_BUFFER_RAD,
  );
}

/**
 * The cell's table as the operator left it, before anything moves: the scene the world is built
 * from (same placement noise, same arms at rest), as a snapshot its overhead camera can be drawn
 * from at the placement check. `layout` is what the operator really put down.
 */
export async function cellTableSnapshot(
  opts: Pick<CellWorldOptions, 'rigModel' | 'task' | 'layout' | 'truth' | 'placementSeed' | 'startPosition'>,
): Promise<SceneSnapshot> {
  const scene = await buildScene(opts, opts.layout, opts.placementSeed, opts.startPosition ?? HOME_START_POSITION);
  try {
    return scene.snapshot();
  } finally {
    scene.free();
  }
}

function buildScene(
  opts: Pick<CellWorldOptions, 'rigModel' | 'task' | 'truth'>,
  layout: Layout,
  placementSeed: number,
  start: ArrayLike<number>,
): Promise<SimScene> {
  return createScene({
    rigModel: opts.rigModel,
    task: opts.task,
    layout,
    calibration: opts.truth.truth.physics,
    startPosition: start,
    placementNoise: { seed: placementSeed, sigmaM: PLACEMENT_SIGMA_M, sigmaYawRad: PLACEMENT_SIGMA_YAW_RAD },
    lowerStopsRad: lowerStops(opts.rigModel),
  });
}
