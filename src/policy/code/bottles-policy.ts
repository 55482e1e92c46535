/**
 * `code:bottles-in-the-bin` — the privileged scripted two-arm policy the lab uses to generate
 * sim demonstrations. Each chunk it reads object poses from the sim, checks the running plan
 * against them (did the bottle move before the grasp? is it in the hand after the lift?), and
 * when the plan is done or broken, plans the next task from the current state: pick a bottle
 * with the arm that reaches it (one arm moves at a time; the other waits parked to its side),
 * or nudge the bin into reach first. Deterministic: no randomness, the same state gives the
 * same plan.
 */
import type { ArmSide, RigModel } from '../../rig/contract.js';
import { DOF_PER_ARM, stateIndex } from '../../rig/contract.js';
import type { ActionChunk, EpisodeContext, Observation, Policy, PolicyInfo, PrivilegedState } from '../contract.js';
import { armReach, type ArmReach } from './arm-reach.js';
import { fromToolBasis } from './bottle-grasps.js';
import {
  planNextTask,
  type BottlesTask,
  type NudgeTask,
  type PickTask,
  type PlannerOptions,
} from './bottles-planner.js';
import { add, norm, scale, sub, type Vec3 } from './frames.js';
import { binShape, bottleInBin, bottleShape, viewBin, viewBottle, type BinView, type BottleView } from './geometry.js';
import { ArmMotion, DEFAULT_MOTION_LIMITS, maxAbsDiff, type MotionLimits } from './motion.js';
import { PrivilegedStateRequiredError, codePolicySha256 } from './privileged.js';
import { AT_POSE_RAD, parkPose, transit } from './arm-moves.js';
import { TrackingCorrection } from './tracking-correction.js';
import { commandInLimits, writeChunk } from './chunk-writer.js';
import { mulberry32 } from './seeded-random.js';

export const BOTTLES_POLICY_NAME = 'code:bottles-in-the-bin';
/** Bumped whenever the policy's behaviour changes: it feeds the policy's checkpoint hash. */
export const BOTTLES_POLICY_VERSION = 3;

export interface BottlesPolicyOptions {
  /** Rows per action chunk (the policy re-reads the world after each chunk). Default 10. */
  readonly actionHorizon?: number;
  readonly motion?: MotionLimits;
  readonly planner?: PlannerOptions;
  /** Grasp attempts per bottle before the policy leaves it. Default 3. */
  readonly maxAttemptsPerBottle?: number;
  /** Bin pushes per episode. Default 4. */
  readonly maxNudges?: number;
  /**
   * 1 (default): the policy as designed. Below 1, a graded variant for rehearsing comparisons of
   * policies of known, different quality: seeded missed grasps (probability 0.6 × (1 − skill),
   * the hand 3 cm off the bottle), sloppier grasps (σ (1 − skill) × 6 mm), slower moves
   * (speeds × (0.6 + 0.4 × skill)). Seeded by the episode's seed: the same seed misses the same way.
   */
  readonly skill?: number;
  /**
   * 0 (default): none. Above 0, a graded variant with one known weakness, for rehearsing failure
   * diagnosis: each grasp of a bottle with another bottle within DENSE_NEIGHBOUR_RADIUS_M misses
   * (the hand 3 cm off) with this probability, seeded by the episode's seed; a bottle standing
   * alone is grasped as designed.
   */
  readonly denseMiss?: number;
}

/** `code:bottles-in-the-bin`, or a graded variant such as `code:bottles-in-the-bin?skill=0.4` or `?dense-miss=0.8`. */
export function bottlesPolicyName(skill: number, denseMiss = 0): string {
  const query = [skill === 1 ? '' : `skill=${skill}`, denseMiss === 0 ? '' : `dense-miss=${denseMiss}`]
    .filter(Boolean)
    .join('&');
  return query === '' ? BOTTLES_POLICY_NAME : `${BOTTLES_POLICY_NAME}?${query}`;
}

/** A bottle with another bottle's centre this close counts as crowded (the dense-miss variant's weakness). */
export const DENSE_NEIGHBOUR_RADIUS_M = 0.15;

const MISS_PROBABILITY_AT_ZERO_SKILL = 0.6;
const MISS_OFFSET_M = 0.03;
const SLOPPINESS_AT_ZERO_SKILL_M = 0.006;

export { parkPose } from './arm-moves.js';

const GRIPPER_OPEN = 1;
const GRIPPER_CLOSED = 0;
/** A full gripper stroke takes this long (minimum-jerk peak 2.7 strokes/s, under the rig's 3). */
const GRIPPER_MOVE_S = 0.7;
/** A measured gripper opening below this after closing means the fingers met nothing. */
const EMPTY_GRIPPER = 0.08;
/** How far the bottle may sit from where the plan expects it in the hand. */
const IN_HAND_TOLERANCE_M = 0.06;
/** How far the bottle may have moved before the grasp for the plan still to hold. */
const MOVED_TOLERANCE_M = 0.03;
const IDLE_REPLAN_S = 1;
/**
 * Tool speeds of the lift and of the nudge's moves to and from the bin wall, m/s. The episode
 * has a fixed length (the same as on the real rig); at the slow default line speed a tier-2/3
 * layout with a nudge ran out of time on its last bottle.
 */
const LIFT_SPEED_MS = 0.15;
const NUDGE_APPROACH_SPEED_MS = 0.2;
/** The push itself (v2: 0.08 m/s; the bin is empty when pushed first, and 0.15 measured no worse on tiers 4–5). */
const NUDGE_PUSH_SPEED_MS = 0.15;
/**
 * Speeds relative to the motion limits (so a graded variant stays proportionally slower): the
 * descent from the hover at 2× the line speed, the approach onto the bottle at 1.5×, the back-off
 * from the drop at 1× (at 2× two bottles on tiers 1–3 landed beside the bin); the joint-space
 * budget of lines near bottles at 1.5× the fine speed (lines there were limited by it, not by
 * their tool speed), and 5/3× for the nudge's lines (the bin is empty, no bottle is near the
 * fingers). Measured together on tiers 1–5 (docs/code-policies.md).
 */
const HOVER_LINE_SPEED = 2;
const APPROACH_LINE_SPEED = 1.5;
const BACK_OFF_LINE_SPEED = 1;
const PICK_FINE_SPEED = 1.5;
const NUDGE_FINE_SPEED = 5 / 3;
/** A bottle whose centre is this far below the table top has fallen off the table. */
const OFF_TABLE_BELOW_Z_M = -0.02;
/**
 * Hold at the pre-grasp for the tracking correction to converge (v2: a 0.7 s gripper "opening"
 * of the already open gripper plus 0.6 s; the correction carries over from earlier holds).
 */
const PRE_GRASP_SETTLE_S = 0.3;
/** Hold after closing, before the lift. */
const CLOSED_HOLD_S = 0.2;
/** Height above the pre-grasp from which the arm descends onto it. */
const HOVER_HEIGHT_M = 0.08;

interface ActivePlan {
  readonly task: PickTask | NudgeTask;
  readonly side: ArmSide;
  readonly motion: ArmMotion;
  /** Time from the plan's start already emitted, in control steps. */
  step: number;
  /** Marks already checked. */
  readonly checked: Set<string>;
  /** The bottle's centre when the plan was made (picks). */
  readonly bottleCentre?: Vec3;
}

export class BottlesPolicy implements Policy {
  readonly info: PolicyInfo;
  private readonly opts: Required<Omit<BottlesPolicyOptions, 'planner'>> & { planner: PlannerOptions };
  /** The graded variant's own randomness (misses, sloppiness), reseeded per episode. */
  private skillRng: () => number = () => 0.5;
  /** The dense-miss variant's own stream, so it never shifts the skill variant's draws. */
  private denseRng: () => number = () => 0.5;
  private arms: ArmReach[] = [];
  private rigModel: RigModel | undefined;
  private controlHz = 50;
  private command: Float64Array | undefined;
  private plan: ActivePlan | undefined;
  private idleUntilS = -Infinity;
  private readonly attempts = new Map<string, number>();
  private nudges = 0;
  /** Per-arm joint offsets added to the plan's targets (src/policy/code/tracking-correction.ts). */
  private readonly tracking = new TrackingCorrection();
  private lastChunkSettled = false;
  /** What the policy did, in words (tests and the docs' examples read it). */
  readonly log: string[] = [];

  constructor(opts: BottlesPolicyOptions = {}) {
    const skill = opts.skill ?? 1;
    if (!(skill >= 0 && skill <= 1))
      throw new RangeError(`${BOTTLES_POLICY_NAME}: skill must be from 0 to 1, not ${skill}.`);
    const denseMiss = opts.denseMiss ?? 0;
    if (!(denseMiss >= 0 && denseMiss <= 1))
      throw new RangeError(`${BOTTLES_POLICY_NAME}: dense-miss must be from 0 to 1, not ${denseMiss}.`);
    const motion = opts.motion ?? DEFAULT_MOTION_LIMITS;
    const pace = 0.6 + 0.4 * skill;
    this.opts = {
      skill,
      denseMiss,
      actionHorizon: opts.actionHorizon ?? 10,
      motion:
        skill === 1
          ? motion
          : {
              ...motion,
              freeSpeedRadS: motion.freeSpeedRadS * pace,
              fineSpeedRadS: motion.fineSpeedRadS * pace,
              carrySpeedRadS: motion.carrySpeedRadS * pace,
              lineSpeedMS: motion.lineSpeedMS * pace,
            },
      planner: opts.planner ?? {},
      maxAttemptsPerBottle: opts.maxAttemptsPerBottle ?? 3,
      maxNudges: opts.maxNudges ?? 4,
    };
    const name = bottlesPolicyName(skill, denseMiss);
    this.info = {
      name,
      checkpointSha256: codePolicySha256(name, BOTTLES_POLICY_VERSION),
      actionHorizon: this.opts.actionHorizon,
      cameras: [],
      needsPrivilegedState: true,
    };
  }

  async reset(ctx: EpisodeContext): Promise<void> {
    if (ctx.rigModel.arms.length !== 2)
      throw new Error(
        `${BOTTLES_POLICY_NAME} drives a two-arm rig; '${ctx.rigModel.name}' has ${ctx.rigModel.arms.length} arms.`,
      );
    this.arms = ctx.rigModel.arms.map((a) => armReach(a));
    this.rigModel = ctx.rigModel;
    this.controlHz = ctx.controlHz;
    this.command = undefined;
    this.plan = undefined;
    this.idleUntilS = -Infinity;
    this.attempts.clear();
    this.nudges = 0;
    this.log.length = 0;
    this.tracking.reset();
    this.lastChunkSettled = false;
    this.skillRng = mulberry32(ctx.seed ^ 0x5eed);
    this.denseRng = mulberry32(ctx.seed ^ 0xde05e);
  }

  async infer(obs: Observation): Promise<ActionChunk> {
    if (!obs.privileged) throw new PrivilegedStateRequiredError(BOTTLES_POLICY_NAME);
    if (this.arms.length === 0) throw new Error(`${BOTTLES_POLICY_NAME}: infer was called before reset.`);
    const scene = readScene(obs.privileged);
    // Start from where the arms are, inside the limits.
    if (!this.command) this.command = commandInLimits(obs.state, this.rigModel as RigModel);

    if (this.plan) this.checkPlan(this.plan, obs, scene);
    if (this.plan && this.plan.step * (1 / this.controlHz) >= this.plan.motion.durationS) this.plan = undefined;
    if (!this.plan && obs.timeS >= this.idleUntilS) this.startNextTask(obs, scene);

    this.tracking.update(this.lastChunkSettled, this.command, obs.state);

    const H = this.opts.actionHorizon;
    const { actions, settled } = writeChunk({
      plan: this.plan,
      command: this.command,
      horizon: H,
      controlHz: this.controlHz,
      tracking: this.tracking,
      rigModel: this.rigModel as RigModel,
    });
    this.lastChunkSettled = settled;
    return { horizon: H, actions };
  }

  private armState(side: ArmSide): { q: Float64Array; gripper: number } {
    const cmd = this.command as Float64Array;
    const base = stateIndex(side, 0);
    return { q: cmd.slice(base, base + 6), gripper: cmd[base + 6] };
  }

  private seeds(): Record<ArmSide, Float64Array> {
    return { left: this.armState('left').q, right: this.armState('right').q };
  }

  private reachOf(side: ArmSide): ArmReach {
    return this.arms.find((a) => a.side === side) as ArmReach;
  }

  private startNextTask(obs: Observation, scene: Scene): void {
    const bin = scene.bin;
    const inBin = new Set(bin ? scene.bottles.filter((b) => bottleInBin(bin, b)) : []);
    // A bottle below the table top has fallen off it: no arm reaches it (3 attempts on one cost ≈ 30 s).
    const offTable = new Set(scene.bottles.filter((b) => b.centre[2] < OFF_TABLE_BELOW_Z_M));
    const remaining = scene.bottles.filter(
      (b) => !inBin.has(b) && !offTable.has(b) && (this.attempts.get(b.id) ?? 0) < this.opts.maxAttemptsPerBottle,
    );
    let task: BottlesTask;
    if (!bin) task = { kind: 'idle', reason: 'the scene has no bin' };
    else if (remaining.length === 0) {
      const left = scene.bottles.filter((b) => !inBin.has(b) && !offTable.has(b)).map((b) => b.id);
      const gone = [...offTable].map((b) => b.id);
      task = {
        kind: 'idle',
        reason:
          left.length === 0
            ? gone.length === 0
              ? 'every bottle is in the bin'
              : `every bottle on the table is in the bin (${gone.join(', ')} off the table)`
            : `gave up on ${left.join(', ')} after ${this.opts.maxAttemptsPerBottle} attempts each`,
      };
    } else
      task = planNextTask(
        { bottles: remaining, bin, inBin: [...inBin].map((b) => b.centre) },
        this.arms,
        this.seeds(),
        { ...this.opts.planner, allowNudge: this.nudges < this.opts.maxNudges },
      );
    if (task.kind === 'idle') {
      const line = `idle: ${task.reason}`;
      if (!this.log[this.log.length - 1]?.endsWith(line)) this.log.push(`${obs.timeS.toFixed(2)}s ${line}`);
      this.idleUntilS = obs.timeS + IDLE_REPLAN_S;
      // Both arms go (or stay) parked while there is nothing to do.
      for (const side of ['left', 'right'] as const) {
        const park = parkPose(side);
        const cur = this.armState(side);
        if (maxAbsDiff(park, cur.q) > AT_POSE_RAD) {
          const motion = transit(new ArmMotion(cur, this.opts.motion), park);
          this.plan = {
            task: { kind: 'nudge-bin', side, directionXY: [0, 0, 0], distanceM: 0, waypoints: [], forSide: side },
            side,
            motion,
            step: 0,
            checked: new Set(),
          };
          return;
        }
      }
      return;
    }
    const side = task.side;
    const other: ArmSide = side === 'left' ? 'right' : 'left';
    // The other arm first goes to its park if it is not there (one arm moves at a time).
    const otherNow = this.armState(other);
    const otherPark = parkPose(other);
    if (maxAbsDiff(otherPark, otherNow.q) > AT_POSE_RAD) {
      const motion = transit(new ArmMotion(otherNow, this.opts.motion), otherPark);
      this.plan = { task, side: other, motion, step: 0, checked: new Set(['park-only']) };
      this.log.push(`${obs.timeS.toFixed(2)}s park ${other} arm`);
      return;
    }
    const reach = this.reachOf(side);
    const start = this.armState(side);
    const limits = this.opts.motion;
    const motion = new ArmMotion(start, {
      ...limits,
      fineSpeedRadS: limits.fineSpeedRadS * (task.kind === 'pick' ? PICK_FINE_SPEED : NUDGE_FINE_SPEED),
    });
    if (task.kind === 'pick') {
      const graded = this.opts.skill < 1 ? this.degradeGrasp(task.grasp, task.bottleId, obs.timeS) : task.grasp;
      const g = this.opts.denseMiss > 0 ? this.crowdedMiss(graded, task.bottleId, scene, obs.timeS) : graded;
      // Come down onto the pre-grasp from above so the swing from the park pose passes over the bottles.
      const hover = { ...g.pre, position: add(g.pre.position, [0, 0, HOVER_HEIGHT_M]) };
      const qHover = reach.solve(hover, g.qPre);
      if (qHover) {
        transit(motion, qHover, GRIPPER_OPEN);
        if (!motion.lineTo(reach, g.pre, { speedMS: limits.lineSpeedMS * HOVER_LINE_SPEED }))
          motion.moveTo(g.qPre, { fine: true });
      } else {
        transit(motion, g.qPre, GRIPPER_OPEN);
      }
      // The gripper is open already (the transit opened it): hold still for the settle only.
      motion.gripperTo(GRIPPER_OPEN, PRE_GRASP_SETTLE_S).mark('pre');
      if (!motion.lineTo(reach, g.grasp, { speedMS: limits.lineSpeedMS * APPROACH_LINE_SPEED }))
        motion.moveTo(g.qGrasp, { fine: true });
      motion.gripperTo(GRIPPER_CLOSED, GRIPPER_MOVE_S, CLOSED_HOLD_S).mark('closed');
      // Straight up to the carry's height: the hanging bottle's base then clears the bin's rim and
      // the bottles around it while the arm swings across (a joint-space swing from the lift rose
      // gradually and dragged the bottle through the rim or a neighbour). One line from the grasp
      // (v2 stopped at the 12 cm lift first); the in-hand check is made at its top.
      const high = {
        ...g.lift,
        position: [
          g.lift.position[0],
          g.lift.position[1],
          Math.max(g.lift.position[2], task.carry.target.position[2]),
        ] as Vec3,
      };
      if (high.position[2] > g.lift.position[2] + 0.01 && motion.lineTo(reach, high, { speedMS: LIFT_SPEED_MS })) {
        motion.mark('lifted');
      } else {
        if (!motion.lineTo(reach, g.lift, { speedMS: LIFT_SPEED_MS })) motion.moveTo(g.qLift, { fine: true });
        motion.mark('lifted');
        if (high.position[2] > g.lift.position[2] + 0.01) motion.lineTo(reach, high, { speedMS: LIFT_SPEED_MS });
      }
      motion.moveTo(task.carry.q, { carry: true });
      motion.gripperTo(GRIPPER_OPEN, GRIPPER_MOVE_S, 0.2).mark('released');
      const back = {
        ...task.carry.target,
        position: sub(task.carry.target.position, scale(task.carry.target.approach, 0.06)),
      };
      motion.lineTo(reach, back, { speedMS: limits.lineSpeedMS * BACK_OFF_LINE_SPEED });
      // The arm stays above the bin: its next pick starts from there (over the top when far), and
      // if the other arm is next, it is parked first. A return to park after every pick cost
      // ≈ 4 s of the episode per bottle.
      const bottle = scene.bottles.find((b) => b.id === task.bottleId) as BottleView;
      this.plan = { task, side, motion, step: 0, checked: new Set(), bottleCentre: bottle.centre };
      this.log.push(
        `${obs.timeS.toFixed(2)}s pick ${task.bottleId} with the ${side} arm (${g.style} grasp, tilt ${g.tiltRad.toFixed(2)} rad)`,
      );
    } else {
      const [above, contact, end, up] = task.waypoints;
      transit(motion, above.q, GRIPPER_CLOSED);
      if (!motion.lineTo(reach, contact.target, { speedMS: NUDGE_APPROACH_SPEED_MS }))
        motion.moveTo(contact.q, { fine: true });
      if (!motion.lineTo(reach, end.target, { speedMS: NUDGE_PUSH_SPEED_MS })) motion.moveTo(end.q, { fine: true });
      if (!motion.lineTo(reach, up.target, { speedMS: NUDGE_APPROACH_SPEED_MS })) motion.moveTo(up.q, { fine: true });
      // The pusher stays above the bin (v2 went to its park: ≈ 2.4 s); it is parked before the
      // other arm starts a task, like after a drop.
      motion.gripperTo(GRIPPER_OPEN, GRIPPER_MOVE_S);
      this.nudges += 1;
      this.plan = { task, side, motion, step: 0, checked: new Set() };
      this.log.push(
        `${obs.timeS.toFixed(2)}s nudge the bin ${(task.distanceM * 100).toFixed(0)} cm with the ${side} arm, for the ${task.forSide} arm`,
      );
    }
  }

  /** The graded variant's hand: a seeded miss or a sloppy offset of the whole approach, as a worse operator of the arm would. */
  private degradeGrasp(g: PickTask['grasp'], bottleId: string, timeS: number): PickTask['grasp'] {
    const r = this.skillRng;
    const angle = 2 * Math.PI * r();
    let offsetM: number;
    if (r() < MISS_PROBABILITY_AT_ZERO_SKILL * (1 - this.opts.skill)) {
      offsetM = MISS_OFFSET_M;
      this.log.push(
        `${timeS.toFixed(2)}s (skill ${this.opts.skill}) misses ${bottleId} by ${(offsetM * 100).toFixed(0)} cm`,
      );
    } else {
      // Box–Muller from the same stream: |N(0, σ)| along a random direction.
      offsetM =
        SLOPPINESS_AT_ZERO_SKILL_M *
        (1 - this.opts.skill) *
        Math.abs(Math.sqrt(-2 * Math.log(1 - r())) * Math.cos(2 * Math.PI * r()));
    }
    const d: Vec3 = [offsetM * Math.cos(angle), offsetM * Math.sin(angle), 0];
    const shift = <T extends { position: Vec3 }>(p: T): T => ({ ...p, position: add(p.position, d) });
    return { ...g, pre: shift(g.pre), grasp: shift(g.grasp), lift: shift(g.lift) };
  }

  /** The dense-miss variant's hand: a seeded 3 cm miss of a bottle that has a neighbour within DENSE_NEIGHBOUR_RADIUS_M. */
  private crowdedMiss(g: PickTask['grasp'], bottleId: string, scene: Scene, timeS: number): PickTask['grasp'] {
    const me = scene.bottles.find((b) => b.id === bottleId);
    if (!me) return g;
    const crowded = scene.bottles.some(
      (b) => b !== me && Math.hypot(b.centre[0] - me.centre[0], b.centre[1] - me.centre[1]) < DENSE_NEIGHBOUR_RADIUS_M,
    );
    if (!crowded) return g;
    const r = this.denseRng;
    const angle = 2 * Math.PI * r();
    if (r() >= this.opts.denseMiss) return g;
    this.log.push(
      `${timeS.toFixed(2)}s (dense-miss ${this.opts.denseMiss}) misses crowded ${bottleId} by ${(MISS_OFFSET_M * 100).toFixed(0)} cm`,
    );
    const d: Vec3 = [MISS_OFFSET_M * Math.cos(angle), MISS_OFFSET_M * Math.sin(angle), 0];
    const shift = <T extends { position: Vec3 }>(p: T): T => ({ ...p, position: add(p.position, d) });
    return { ...g, pre: shift(g.pre), grasp: shift(g.grasp), lift: shift(g.lift) };
  }

  /** Checks the marks the plan has passed; on a broken plan, recovers and lets the next chunk replan. */
  private checkPlan(plan: ActivePlan, obs: Observation, scene: Scene): void {
    if (plan.task.kind !== 'pick' || plan.checked.has('park-only')) return;
    const task = plan.task;
    const tS = plan.step / this.controlHz;
    const bottle = scene.bottles.find((b) => b.id === task.bottleId);
    const passed = (name: string) => !plan.checked.has(name) && tS >= (plan.motion.marks.get(name) ?? Infinity);
    let failure: string | undefined;
    let countsAsAttempt = false;
    if (!bottle) failure = `${task.bottleId} is gone from the scene`;
    else if (
      !plan.checked.has('closed') &&
      plan.bottleCentre &&
      norm(sub(bottle.centre, plan.bottleCentre)) > MOVED_TOLERANCE_M
    ) {
      failure = `${task.bottleId} moved before the grasp`;
    } else if (passed('closed')) {
      plan.checked.add('closed');
      const opening = obs.state[stateIndex(plan.side, DOF_PER_ARM - 1)];
      if (opening < EMPTY_GRIPPER) {
        failure = `the ${plan.side} gripper closed on nothing`;
        countsAsAttempt = true;
      }
    } else if (passed('lifted')) {
      plan.checked.add('lifted');
      const reach = this.reachOf(plan.side);
      const tool = reach.toolAt(obs.state.subarray(stateIndex(plan.side, 0), stateIndex(plan.side, 0) + 6));
      const expected = add(tool.position, fromToolBasis(tool.approach, tool.closing, task.grasp.centreInTool));
      if (norm(sub(bottle.centre, expected)) > IN_HAND_TOLERANCE_M) {
        failure = `${task.bottleId} is not in the ${plan.side} hand after the lift`;
        countsAsAttempt = true;
      }
    }
    if (!failure) return;
    if (countsAsAttempt) this.attempts.set(task.bottleId, (this.attempts.get(task.bottleId) ?? 0) + 1);
    this.log.push(`${obs.timeS.toFixed(2)}s replan: ${failure}`);
    // Recover: open, back off upward, park. The next chunk after that plans afresh.
    const reach = this.reachOf(plan.side);
    const cur = this.armState(plan.side);
    const motion = new ArmMotion(cur, this.opts.motion).gripperTo(GRIPPER_OPEN, GRIPPER_MOVE_S);
    const tool = reach.toolAt(cur.q);
    motion.lineTo(reach, {
      position: add(tool.position, [0, 0, 0.06]),
      approach: tool.approach,
      closing: tool.closing,
    });
    transit(motion, parkPose(plan.side));
    this.plan = { task, side: plan.side, motion, step: 0, checked: new Set(['park-only']) };
  }
}

interface Scene {
  readonly bottles: BottleView[];
  readonly bin: BinView | undefined;
}

/** The privileged state as the planner sees it; refuses objects it does not know how to handle. */
export function readScene(state: PrivilegedState): Scene {
  const bottles: BottleView[] = [];
  for (const o of state.objects) {
    const shape = bottleShape(o.kind);
    if (!shape) throw new Error(`${BOTTLES_POLICY_NAME} handles bottles only; object '${o.id}' is a '${o.kind}'.`);
    bottles.push(viewBottle(o, shape));
  }
  let bin: BinView | undefined;
  for (const f of state.fixtures) {
    const shape = binShape(f.kind);
    if (shape && !bin) bin = viewBin(f, shape);
  }
  return { bottles, bin };
}
