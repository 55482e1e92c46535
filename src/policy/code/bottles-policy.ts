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
import { DOF_PER_ARM, STATE_DIM, stateIndex } from '../../rig/contract.js';
import type { ActionChunk, EpisodeContext, Observation, Policy, PolicyInfo, PrivilegedState } from '../contract.js';
import { armReach, type ArmReach } from './arm-reach.js';
import { fromToolBasis, type CarryPlan } from './bottle-grasps.js';
import { planDrop, planNextTask, type BottlesTask, type NudgeTask, type PickTask, type PlannerOptions } from './bottles-planner.js';
import { sweptAtPose, sweptByMotion, sweptDistance } from './arm-separation.js';
import { add, norm, scale, sub, type Vec3 } from './frames.js';
import { binShape, bottleInBin, bottleShape, viewBin, viewBottle, type BinView, type BottleView } from './geometry.js';
import { ArmMotion, DEFAULT_MOTION_LIMITS, maxAbsDiff, type MotionLimits } from './motion.js';
import { PrivilegedStateRequiredError, codePolicySha256 } from './privileged.js';
import { AT_POSE_RAD, clearPose, parkPose, transit } from './arm-moves.js';
import { SETTLED_STEP_RAD, TrackingCorrection } from './tracking-correction.js';
import { commandInLimits } from './chunk-writer.js';
import { mulberry32 } from './seeded-random.js';

export const BOTTLES_POLICY_NAME = 'code:bottles-in-the-bin';
/** Bumped whenever the policy's behaviour changes: it feeds the policy's checkpoint hash. */
export const BOTTLES_POLICY_VERSION = 4;

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
  const query = [skill === 1 ? '' : `skill=${skill}`, denseMiss === 0 ? '' : `dense-miss=${denseMiss}`].filter(Boolean).join('&');
  return query === '' ? BOTTLES_POLICY_NAME : `${BOTTLES_POLICY_NAME}?${query}`;
}

/** A bottle with another bottle's centre this close counts as crowded (the dense-miss variant's weakness). */
export const DENSE_NEIGHBOUR_RADIUS_M = 0.15;

const MISS_PROBABILITY_AT_ZERO_SKILL = 0.6;
const MISS_OFFSET_M = 0.03;
const SLOPPINESS_AT_ZERO_SKILL_M = 0.006;

export { clearPose, parkPose } from './arm-moves.js';

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

/** Two arms closer than this anywhere along their plans (link centre lines, tool points) may touch. */
const ARM_SEPARATION_M = 0.14;
/** An arm that found nothing it may do beside the other's work asks again after this long. */
const BUSY_REPLAN_S = 0.4;

/**
 * What an arm is doing. A pick is made of a fetch (to the bottle, grasp, straight up to the carry's
 * height) and a deliver (carry, release, back off, clear the bin) planned when the arm holds the
 * bin: the arms share the bin by turns, and each drop is aimed at the bin as it is then.
 */
interface ActivePlan {
  readonly kind: 'pick' | 'nudge' | 'move';
  readonly task?: PickTask | NudgeTask;
  readonly side: ArmSide;
  motion: ArmMotion;
  /** Time from the motion's start already emitted, in control steps. */
  step: number;
  /** Marks already checked. */
  readonly checked: Set<string>;
  /** The bottle's centre when the plan was made (picks). */
  readonly bottleCentre?: Vec3;
  /** Picks: 'fetch' until the deliver starts. */
  phase: 'fetch' | 'deliver';
  /** The deliver as first planned: what the other arm's plans are kept clear of until it is made. */
  readonly deliverPreview?: ArmMotion;
  /** The deliver, made once this arm holds the bin; it starts when the fetch ends. */
  next?: ArmMotion;
}

const SIDES = ['left', 'right'] as const;
const otherSide = (side: ArmSide): ArmSide => (side === 'left' ? 'right' : 'left');

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
  /** Each arm's running plan: both arms work at once, each on its own side of the table. */
  private readonly plans: Record<ArmSide, ActivePlan | undefined> = { left: undefined, right: undefined };
  private readonly idleUntilS: Record<ArmSide, number> = { left: -Infinity, right: -Infinity };
  /** The arm whose hand may be over the bin (carrying, releasing, pushing); the other waits its turn. */
  private binHolder: ArmSide | undefined;
  private readonly attempts = new Map<string, number>();
  private nudges = 0;
  /** Per-arm joint offsets added to the plan's targets (src/policy/code/tracking-correction.ts). */
  private readonly tracking = new TrackingCorrection();
  private lastChunkSettled: Record<ArmSide, boolean> = { left: false, right: false };
  /** What the policy did, in words (tests and the docs' examples read it). */
  readonly log: string[] = [];

  constructor(opts: BottlesPolicyOptions = {}) {
    const skill = opts.skill ?? 1;
    if (!(skill >= 0 && skill <= 1)) throw new RangeError(`${BOTTLES_POLICY_NAME}: skill must be from 0 to 1, not ${skill}.`);
    const denseMiss = opts.denseMiss ?? 0;
    if (!(denseMiss >= 0 && denseMiss <= 1)) throw new RangeError(`${BOTTLES_POLICY_NAME}: dense-miss must be from 0 to 1, not ${denseMiss}.`);
    const motion = opts.motion ?? DEFAULT_MOTION_LIMITS;
    const pace = 0.6 + 0.4 * skill;
    this.opts = {
      skill,
      denseMiss,
      actionHorizon: opts.actionHorizon ?? 10,
      motion: skill === 1 ? motion : { ...motion, freeSpeedRadS: motion.freeSpeedRadS * pace, fineSpeedRadS: motion.fineSpeedRadS * pace, carrySpeedRadS: motion.carrySpeedRadS * pace, lineSpeedMS: motion.lineSpeedMS * pace },
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
    if (ctx.rigModel.arms.length !== 2) throw new Error(`${BOTTLES_POLICY_NAME} drives a two-arm rig; '${ctx.rigModel.name}' has ${ctx.rigModel.arms.length} arms.`);
    this.arms = ctx.rigModel.arms.map((a) => armReach(a));
    this.rigModel = ctx.rigModel;
    this.controlHz = ctx.controlHz;
    this.command = undefined;
    for (const side of SIDES) {
      this.plans[side] = undefined;
      this.idleUntilS[side] = -Infinity;
    }
    this.binHolder = undefined;
    this.attempts.clear();
    this.nudges = 0;
    this.log.length = 0;
    this.tracking.reset();
    this.lastChunkSettled = { left: false, right: false };
    this.skillRng = mulberry32(ctx.seed ^ 0x5eed);
    this.denseRng = mulberry32(ctx.seed ^ 0xde05e);
  }

  async infer(obs: Observation): Promise<ActionChunk> {
    if (!obs.privileged) throw new PrivilegedStateRequiredError(BOTTLES_POLICY_NAME);
    if (this.arms.length === 0) throw new Error(`${BOTTLES_POLICY_NAME}: infer was called before reset.`);
    const scene = readScene(obs.privileged);
    // Start from where the arms are, inside the limits.
    if (!this.command) this.command = commandInLimits(obs.state, this.rigModel as RigModel);
    const H = this.opts.actionHorizon;
    const chunkS = H / this.controlHz;

    for (const side of SIDES) {
      const plan = this.plans[side];
      if (plan) this.checkPlan(plan, obs, scene);
    }
    for (const side of SIDES) {
      const plan = this.plans[side];
      if (!plan) continue;
      const tS = plan.step / this.controlHz;
      if (this.binHolder === side && (plan.phase === 'deliver' || plan.kind === 'nudge') && tS >= (plan.motion.marks.get('bin-clear') ?? Infinity)) this.binHolder = undefined;
      if (plan.kind === 'pick' && plan.phase === 'fetch') {
        // The fetch ends within this chunk: take the bin if it is free and plan the deliver, which
        // follows without a pause; otherwise the arm holds the bottle up where it is.
        if (!plan.next && tS + chunkS >= plan.motion.durationS && (this.binHolder === undefined || this.binHolder === side)) {
          this.binHolder = side;
          plan.next = this.planDeliver(plan, scene);
          if (tS > plan.motion.durationS + 0.05) this.log.push(`${obs.timeS.toFixed(2)}s the ${side} arm has the bin after waiting ${(tS - plan.motion.durationS).toFixed(1)} s`);
        }
        continue;
      }
      if (tS >= plan.motion.durationS) {
        this.plans[side] = undefined;
        if (this.binHolder === side) this.binHolder = undefined;
      }
    }
    this.planFreeArms(obs, scene);

    this.tracking.update(this.lastChunkSettled, this.command, obs.state);
    const { actions, settled } = this.writeChunk(H);
    this.lastChunkSettled = settled;
    return { horizon: H, actions };
  }

  /** H rows of 14 targets: each arm follows its own plan (or keeps its command), the tracking correction on top. */
  private writeChunk(H: number): { actions: Float32Array; settled: Record<ArmSide, boolean> } {
    const command = this.command as Float64Array;
    const actions = new Float32Array(H * STATE_DIM);
    const q = new Float64Array(6);
    const maxStep: Record<ArmSide, number> = { left: 0, right: 0 };
    for (let r = 0; r < H; r++) {
      for (const side of SIDES) {
        const p = this.plans[side];
        if (!p) continue;
        if (p.next && p.step / this.controlHz >= p.motion.durationS) {
          p.motion = p.next;
          p.next = undefined;
          p.step = 0;
          p.phase = 'deliver';
        }
        p.step += 1;
        const g = p.motion.sample(p.step / this.controlHz, q);
        const base = stateIndex(side, 0);
        for (let i = 0; i < 6; i++) maxStep[side] = Math.max(maxStep[side], Math.abs(q[i] - command[base + i]));
        command.set(q, base);
        command[base + 6] = g;
      }
      actions.set(command, r * STATE_DIM);
      this.tracking.apply(actions, r, H, this.rigModel as RigModel);
    }
    return { actions, settled: { left: maxStep.left < SETTLED_STEP_RAD, right: maxStep.right < SETTLED_STEP_RAD } };
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

  /** What an arm will sweep from now on: `all` of it, and the part outside its turn at the bin (`own`). */
  private sweptOf(side: ArmSide): { all: Vec3[][]; own: Vec3[][] } {
    const reach = this.reachOf(side);
    const p = this.plans[side];
    if (!p) {
      const still = sweptAtPose(reach, this.armState(side).q);
      return { all: still, own: still };
    }
    const rest = sweptByMotion(reach, p.motion, p.step / this.controlHz);
    if (p.kind === 'nudge' || p.phase === 'deliver') return { all: rest, own: [] };
    if (p.kind === 'move') return { all: rest, own: rest };
    const deliver = p.next ?? p.deliverPreview;
    const bin = deliver ? sweptByMotion(reach, deliver) : [];
    return { all: [...rest, ...bin], own: rest };
  }

  /**
   * Whether a new plan for `side` keeps clear of everything the other arm does from now on. The
   * two arms' turns at the bin are not compared: the bin is theirs one at a time.
   */
  private clearOfOther(side: ArmSide, own: Vec3[][], atBin: Vec3[][]): boolean {
    const other = this.sweptOf(otherSide(side));
    if (own.length > 0 && sweptDistance(own, other.all) < ARM_SEPARATION_M) return false;
    if (atBin.length > 0 && other.own.length > 0 && sweptDistance(atBin, other.own) < ARM_SEPARATION_M) return false;
    return true;
  }

  private remainingBottles(scene: Scene): { remaining: BottleView[]; inBin: Set<BottleView>; offTable: Set<BottleView> } {
    const bin = scene.bin;
    const inBin = new Set(bin ? scene.bottles.filter((b) => bottleInBin(bin, b)) : []);
    // A bottle below the table top has fallen off it: no arm reaches it (3 attempts on one cost ≈ 30 s).
    const offTable = new Set(scene.bottles.filter((b) => b.centre[2] < OFF_TABLE_BELOW_Z_M));
    const remaining = scene.bottles.filter((b) => !inBin.has(b) && !offTable.has(b) && (this.attempts.get(b.id) ?? 0) < this.opts.maxAttemptsPerBottle);
    return { remaining, inBin, offTable };
  }

  /** Plans for every arm without a plan: both free → the two-arm planner; one free → a pick beside the other's work. */
  private planFreeArms(obs: Observation, scene: Scene): void {
    const free = SIDES.filter((s) => !this.plans[s] && obs.timeS >= this.idleUntilS[s]);
    if (free.length === 0) return;
    if (free.length === 2) this.planBothFree(obs, scene);
    else if (this.plans[otherSide(free[0])]) this.planBeside(free[0], obs, scene);
  }

  private planBothFree(obs: Observation, scene: Scene): void {
    const bin = scene.bin;
    const { remaining, inBin, offTable } = this.remainingBottles(scene);
    let task: BottlesTask;
    if (!bin) task = { kind: 'idle', reason: 'the scene has no bin' };
    else if (remaining.length === 0) {
      const left = scene.bottles.filter((b) => !inBin.has(b) && !offTable.has(b)).map((b) => b.id);
      const gone = [...offTable].map((b) => b.id);
      task = { kind: 'idle', reason: left.length === 0 ? (gone.length === 0 ? 'every bottle is in the bin' : `every bottle on the table is in the bin (${gone.join(', ')} off the table)`) : `gave up on ${left.join(', ')} after ${this.opts.maxAttemptsPerBottle} attempts each` };
    } else task = planNextTask({ bottles: remaining, bin, inBin: [...inBin].map((b) => b.centre) }, this.arms, this.seeds(), { binForBoth: true, ...this.opts.planner, allowNudge: this.nudges < this.opts.maxNudges });
    if (task.kind === 'idle') {
      const line = `idle: ${task.reason}`;
      if (!this.log[this.log.length - 1]?.endsWith(line)) this.log.push(`${obs.timeS.toFixed(2)}s ${line}`);
      // Both arms go (or stay) parked while there is nothing to do.
      for (const side of SIDES) {
        this.idleUntilS[side] = obs.timeS + IDLE_REPLAN_S;
        const park = parkPose(side);
        const cur = this.armState(side);
        if (maxAbsDiff(park, cur.q) > AT_POSE_RAD) this.plans[side] = this.movePlan(side, transit(new ArmMotion(cur, this.opts.motion), park));
      }
      return;
    }
    const plan = task.kind === 'pick' ? this.pickPlan(task, scene, obs.timeS) : this.nudgePlan(task);
    const side = task.side;
    const other = otherSide(side);
    const still = sweptAtPose(this.reachOf(other), this.armState(other).q);
    const mine = [...sweptByMotion(this.reachOf(side), plan.motion), ...(plan.deliverPreview ? sweptByMotion(this.reachOf(side), plan.deliverPreview) : [])];
    if (sweptDistance(mine, still) < ARM_SEPARATION_M) {
      // The other arm is in the way where it waits: out of the way first (to its clear pose, or to
      // its park from there); this arm plans again once it is.
      const cur = this.armState(other);
      const toClear = maxAbsDiff(cur.q, clearPose(other)) > AT_POSE_RAD;
      const target = toClear ? clearPose(other) : parkPose(other);
      if (maxAbsDiff(cur.q, target) > AT_POSE_RAD) {
        this.plans[other] = this.movePlan(other, transit(new ArmMotion(cur, this.opts.motion), target));
        this.log.push(`${obs.timeS.toFixed(2)}s ${toClear ? 'clear' : 'park'} ${other} arm`);
        return;
      }
    }
    this.startPlan(plan, obs);
  }

  /** A pick for `side` while the other arm works: on its own, no push, kept clear of the other arm. */
  private planBeside(side: ArmSide, obs: Observation, scene: Scene): void {
    const bin = scene.bin;
    if (!bin) return;
    const other = this.plans[otherSide(side)];
    const { remaining, inBin } = this.remainingBottles(scene);
    const taken = other?.kind === 'pick' && other.task?.kind === 'pick' ? other.task.bottleId : undefined;
    const skip = new Set<string>(taken ? [taken] : []);
    for (let tries = 0; tries < 3; tries++) {
      const bottles = remaining.filter((b) => !skip.has(b.id));
      if (bottles.length === 0) break;
      const task = planNextTask({ bottles, bin, inBin: [...inBin].map((b) => b.centre) }, [this.reachOf(side)], this.seeds(), { ...this.opts.planner, allowNudge: false, comfortableOnly: this.nudges < this.opts.maxNudges });
      if (task.kind !== 'pick') break;
      const plan = this.pickPlan(task, scene, obs.timeS);
      const reach = this.reachOf(side);
      if (this.clearOfOther(side, sweptByMotion(reach, plan.motion), plan.deliverPreview ? sweptByMotion(reach, plan.deliverPreview) : [])) {
        this.startPlan(plan, obs);
        return;
      }
      skip.add(task.bottleId);
    }
    this.idleUntilS[side] = obs.timeS + BUSY_REPLAN_S;
  }

  private startPlan(plan: ActivePlan, obs: Observation): void {
    const task = plan.task as PickTask | NudgeTask;
    this.plans[plan.side] = plan;
    if (task.kind === 'pick') {
      this.log.push(`${obs.timeS.toFixed(2)}s pick ${task.bottleId} with the ${plan.side} arm (${task.grasp.style} grasp, tilt ${task.grasp.tiltRad.toFixed(2)} rad)`);
    } else {
      this.binHolder = plan.side;
      this.nudges += 1;
      this.log.push(`${obs.timeS.toFixed(2)}s nudge the bin ${(task.distanceM * 100).toFixed(0)} cm with the ${plan.side} arm, for the ${task.forSide} arm`);
    }
  }

  private movePlan(side: ArmSide, motion: ArmMotion): ActivePlan {
    return { kind: 'move', side, motion, step: 0, checked: new Set(), phase: 'fetch' };
  }

  /** The fetch (to the bottle, grasp, up to the carry's height), and the deliver as planned now. */
  private pickPlan(task: PickTask, scene: Scene, timeS: number): ActivePlan {
    const side = task.side;
    const reach = this.reachOf(side);
    const limits = this.opts.motion;
    const motion = new ArmMotion(this.armState(side), { ...limits, fineSpeedRadS: limits.fineSpeedRadS * PICK_FINE_SPEED });
    const graded = this.opts.skill < 1 ? this.degradeGrasp(task.grasp, task.bottleId, timeS) : task.grasp;
    const g = this.opts.denseMiss > 0 ? this.crowdedMiss(graded, task.bottleId, scene, timeS) : graded;
    // Come down onto the pre-grasp from above so the swing from the park pose passes over the bottles.
    const hover = { ...g.pre, position: add(g.pre.position, [0, 0, HOVER_HEIGHT_M]) };
    const qHover = reach.solve(hover, g.qPre);
    if (qHover) {
      transit(motion, qHover, GRIPPER_OPEN);
      if (!motion.lineTo(reach, g.pre, { speedMS: limits.lineSpeedMS * HOVER_LINE_SPEED })) motion.moveTo(g.qPre, { fine: true });
    } else {
      transit(motion, g.qPre, GRIPPER_OPEN);
    }
    // The gripper is open already (the transit opened it): hold still for the settle only.
    motion.gripperTo(GRIPPER_OPEN, PRE_GRASP_SETTLE_S).mark('pre');
    if (!motion.lineTo(reach, g.grasp, { speedMS: limits.lineSpeedMS * APPROACH_LINE_SPEED })) motion.moveTo(g.qGrasp, { fine: true });
    motion.gripperTo(GRIPPER_CLOSED, GRIPPER_MOVE_S, CLOSED_HOLD_S).mark('closed');
    // Straight up to the carry's height: the hanging bottle's base then clears the bin's rim and
    // the bottles around it while the arm swings across (a joint-space swing from the lift rose
    // gradually and dragged the bottle through the rim or a neighbour). One line from the grasp;
    // the in-hand check is made at its top.
    const high = { ...g.lift, position: [g.lift.position[0], g.lift.position[1], Math.max(g.lift.position[2], task.carry.target.position[2])] as Vec3 };
    if (high.position[2] > g.lift.position[2] + 0.01 && motion.lineTo(reach, high, { speedMS: LIFT_SPEED_MS })) {
      motion.mark('lifted');
    } else {
      if (!motion.lineTo(reach, g.lift, { speedMS: LIFT_SPEED_MS })) motion.moveTo(g.qLift, { fine: true });
      motion.mark('lifted');
      if (high.position[2] > g.lift.position[2] + 0.01) motion.lineTo(reach, high, { speedMS: LIFT_SPEED_MS });
    }
    const bottle = scene.bottles.find((b) => b.id === task.bottleId) as BottleView;
    const deliverPreview = this.deliverMotion(side, motion.endQ, task.carry);
    return { kind: 'pick', task: { ...task, grasp: g }, side, motion, step: 0, checked: new Set(), bottleCentre: bottle.centre, phase: 'fetch', deliverPreview };
  }

  /** Carry, release, back off, and clear the bin (to the arm's clear pose: the other arm's turn may come next). */
  private deliverMotion(side: ArmSide, from: Float64Array, carry: CarryPlan): ArmMotion {
    const reach = this.reachOf(side);
    const motion = new ArmMotion({ q: from, gripper: GRIPPER_CLOSED }, this.opts.motion);
    motion.moveTo(carry.q, { carry: true });
    motion.gripperTo(GRIPPER_OPEN, GRIPPER_MOVE_S, 0.2).mark('released');
    const back = { ...carry.target, position: sub(carry.target.position, scale(carry.target.approach, 0.06)) };
    motion.lineTo(reach, back, { speedMS: this.opts.motion.lineSpeedMS * BACK_OFF_LINE_SPEED });
    transit(motion, clearPose(side));
    return motion.mark('bin-clear');
  }

  /** The deliver for a fetched bottle, aimed at the bin as it is now (the other arm may have dropped meanwhile). */
  private planDeliver(plan: ActivePlan, scene: Scene): ArmMotion {
    const task = plan.task as PickTask;
    const bottle = scene.bottles.find((b) => b.id === task.bottleId);
    const bin = scene.bin;
    let carry = task.carry;
    if (bottle && bin) {
      const inBin = scene.bottles.filter((b) => b !== bottle && bottleInBin(bin, b)).map((b) => b.centre);
      carry = planDrop(task.grasp, bottle, bin, this.reachOf(plan.side), inBin) ?? carry;
    }
    return this.deliverMotion(plan.side, plan.motion.endQ, carry);
  }

  private nudgePlan(task: NudgeTask): ActivePlan {
    const side = task.side;
    const reach = this.reachOf(side);
    const limits = this.opts.motion;
    const motion = new ArmMotion(this.armState(side), { ...limits, fineSpeedRadS: limits.fineSpeedRadS * NUDGE_FINE_SPEED });
    const [above, contact, end, up] = task.waypoints;
    transit(motion, above.q, GRIPPER_CLOSED);
    if (!motion.lineTo(reach, contact.target, { speedMS: NUDGE_APPROACH_SPEED_MS })) motion.moveTo(contact.q, { fine: true });
    if (!motion.lineTo(reach, end.target, { speedMS: NUDGE_PUSH_SPEED_MS })) motion.moveTo(end.q, { fine: true });
    if (!motion.lineTo(reach, up.target, { speedMS: NUDGE_APPROACH_SPEED_MS })) motion.moveTo(up.q, { fine: true });
    motion.gripperTo(GRIPPER_OPEN, GRIPPER_MOVE_S);
    transit(motion, clearPose(side));
    motion.mark('bin-clear');
    return { kind: 'nudge', task, side, motion, step: 0, checked: new Set(), phase: 'fetch' };
  }

  /** The graded variant's hand: a seeded miss or a sloppy offset of the whole approach, as a worse operator of the arm would. */
  private degradeGrasp(g: PickTask['grasp'], bottleId: string, timeS: number): PickTask['grasp'] {
    const r = this.skillRng;
    const angle = 2 * Math.PI * r();
    let offsetM: number;
    if (r() < MISS_PROBABILITY_AT_ZERO_SKILL * (1 - this.opts.skill)) {
      offsetM = MISS_OFFSET_M;
      this.log.push(`${timeS.toFixed(2)}s (skill ${this.opts.skill}) misses ${bottleId} by ${(offsetM * 100).toFixed(0)} cm`);
    } else {
      // Box–Muller from the same stream: |N(0, σ)| along a random direction.
      offsetM = SLOPPINESS_AT_ZERO_SKILL_M * (1 - this.opts.skill) * Math.abs(Math.sqrt(-2 * Math.log(1 - r())) * Math.cos(2 * Math.PI * r()));
    }
    const d: Vec3 = [offsetM * Math.cos(angle), offsetM * Math.sin(angle), 0];
    const shift = <T extends { position: Vec3 }>(p: T): T => ({ ...p, position: add(p.position, d) });
    return { ...g, pre: shift(g.pre), grasp: shift(g.grasp), lift: shift(g.lift) };
  }

  /** The dense-miss variant's hand: a seeded 3 cm miss of a bottle that has a neighbour within DENSE_NEIGHBOUR_RADIUS_M. */
  private crowdedMiss(g: PickTask['grasp'], bottleId: string, scene: Scene, timeS: number): PickTask['grasp'] {
    const me = scene.bottles.find((b) => b.id === bottleId);
    if (!me) return g;
    const crowded = scene.bottles.some((b) => b !== me && Math.hypot(b.centre[0] - me.centre[0], b.centre[1] - me.centre[1]) < DENSE_NEIGHBOUR_RADIUS_M);
    if (!crowded) return g;
    const r = this.denseRng;
    const angle = 2 * Math.PI * r();
    if (r() >= this.opts.denseMiss) return g;
    this.log.push(`${timeS.toFixed(2)}s (dense-miss ${this.opts.denseMiss}) misses crowded ${bottleId} by ${(MISS_OFFSET_M * 100).toFixed(0)} cm`);
    const d: Vec3 = [MISS_OFFSET_M * Math.cos(angle), MISS_OFFSET_M * Math.sin(angle), 0];
    const shift = <T extends { position: Vec3 }>(p: T): T => ({ ...p, position: add(p.position, d) });
    return { ...g, pre: shift(g.pre), grasp: shift(g.grasp), lift: shift(g.lift) };
  }

  /** Checks the marks the plan has passed; on a broken plan, recovers and lets a later chunk replan. */
  private checkPlan(plan: ActivePlan, obs: Observation, scene: Scene): void {
    if (plan.kind !== 'pick') return;
    const task = plan.task as PickTask;
    const tS = plan.step / this.controlHz;
    const bottle = scene.bottles.find((b) => b.id === task.bottleId);
    const passed = (name: string) => plan.phase === 'fetch' && !plan.checked.has(name) && tS >= (plan.motion.marks.get(name) ?? Infinity);
    let failure: string | undefined;
    let countsAsAttempt = false;
    if (!bottle) failure = `${task.bottleId} is gone from the scene`;
    else if (!plan.checked.has('closed') && plan.bottleCentre && norm(sub(bottle.centre, plan.bottleCentre)) > MOVED_TOLERANCE_M) {
      failure = `${task.bottleId} moved before the grasp`;
    } else if (passed('closed')) {
      plan.checked.add('closed');
      const opening = obs.state[stateIndex(plan.side, DOF_PER_ARM - 1)];
      if (opening < EMPTY_GRIPPER) {
        failure = `the ${plan.side} gripper closed on nothing`;
        countsAsAttempt = true;
      }
    } else if (passed('lifted') || (plan.phase === 'deliver' && !plan.checked.has('lifted'))) {
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
    if (this.binHolder === plan.side) this.binHolder = undefined;
    // Recover: open, back off upward, go to the clear pose. A later chunk plans afresh.
    const reach = this.reachOf(plan.side);
    const cur = this.armState(plan.side);
    const motion = new ArmMotion(cur, this.opts.motion).gripperTo(GRIPPER_OPEN, GRIPPER_MOVE_S);
    const tool = reach.toolAt(cur.q);
    motion.lineTo(reach, { position: add(tool.position, [0, 0, 0.06]), approach: tool.approach, closing: tool.closing });
    transit(motion, clearPose(plan.side));
    this.plans[plan.side] = this.movePlan(plan.side, motion);
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
