/**
 * `code:sort-from-tote` — the privileged scripted policy for sort-from-tote. Each chunk it reads
 * part poses from the sim, checks the running plan against them (did the part move before the
 * grasp? did it rise with the hand in the lift?), and when the
 * plan is done or broken plans the next pick from the current state:
 *
 * - the left arm (the tote is its) picks parts from the tote, the topmost first, larger before
 *   smaller, each top-down across its shank (screws, bolts lying) or across its outer diameter
 *   (nuts, rings) with the closing direction and lean where the open hand clears the tote's walls
 *   and the other parts (hand-clearance.ts), and drops it into its slot from just above the rim;
 * - bearing rings — and nuts, where the left arm cannot reach above the nut slot — are handed to
 *   the right arm through the sorter's bolt slot, which both arms reach: the left arm sets the part
 *   down there (still inside the target region: no knock-out), the right arm picks it up from
 *   there and drops it into the far slot. A set-down handover, not an in-air one.
 *
 * One arm moves at a time; the other waits parked. Deterministic: the same state gives the same
 * plan. Graded variants (`?skill=S`) miss and move slower, seeded by the episode's seed.
 */
import type { ArmSide, RigModel } from '../../rig/contract.js';
import { stateIndex } from '../../rig/contract.js';
import type { ActionChunk, EpisodeContext, Observation, Policy, PolicyInfo, PrivilegedState } from '../contract.js';
import { armReach, type ArmReach, type ToolTarget } from './arm-reach.js';
import { add, norm, sub, type Vec3 } from './frames.js';
import { quatRotate } from '../../pose/quaternion.js';
import { handClearance } from './hand-clearance.js';
import { ArmMotion, DEFAULT_MOTION_LIMITS, maxAbsDiff, type MotionLimits } from './motion.js';
import { PrivilegedStateRequiredError, codePolicySha256 } from './privileged.js';
import { AT_POSE_RAD, parkPose, transit } from './arm-moves.js';
import { TrackingCorrection } from './tracking-correction.js';
import { commandInLimits, writeChunk } from './chunk-writer.js';
import { mulberry32 } from './seeded-random.js';
import { inSlot, inTote, partShape, slotCentre, viewPart, type PartCategory, type PartView } from './part-geometry.js';

export const SORT_POLICY_NAME = 'code:sort-from-tote';
/** Bumped whenever the policy's behaviour changes: it feeds the policy's checkpoint hash. */
export const SORT_POLICY_VERSION = 2;

export interface SortPolicyOptions {
  /** Rows per action chunk. Default 10. */
  readonly actionHorizon?: number;
  readonly motion?: MotionLimits;
  /** Grasp attempts per part before the policy leaves it. Default 2. */
  readonly maxAttemptsPerPart?: number;
  /**
   * 1 (default): as designed. Below 1: seeded missed grasps (probability 0.6 × (1 − skill), the
   * hand 8 mm off the part) and slower moves (speeds × (0.6 + 0.4 × skill)).
   */
  readonly skill?: number;
}

export function sortPolicyName(skill: number): string {
  return skill === 1 ? SORT_POLICY_NAME : `${SORT_POLICY_NAME}?skill=${skill}`;
}

const GRIPPER_CLOSED = 0;
const GRIPPER_MOVE_S = 0.5;
/** The fingertips sit this far below the tool point (where the pads meet). */
const TIPS_BELOW_TOOL_M = 0.02;
/** The fingertips' height above the part's bottom at the grasp (at most 0.4 of the part's height), m. */
const TIPS_ABOVE_FLOOR_M = 0.001;
/** Above the part before the descent, m. */
const HOVER_M = 0.1;
/** Carry height of the tool point: the hanging part clears the tote's rim (0.12) and the sorter's (0.06). */
const CARRY_Z_M = 0.17;
/** The tool point when letting go above a slot (the rim is at 0.06). */
const RELEASE_Z_M = 0.1;
/** Approach tilts tried in turn, from straight down. */
const APPROACH_TILTS_RAD = [0, 0.35, 0.7];
/** Extra finger opening beyond the part's width before the grasp. */
const OPEN_MARGIN_M = 0.024;
/** Closing directions tried for a round or standing part (over half a turn). */
const CLOSING_YAWS = 12;
/** Least room between the open hand and the tote's walls or another part, m. */
const MIN_HAND_CLEARANCE_M = 0.003;
/** IK is asked for at most this many of the roomiest grasps at each tilt. */
const MAX_GRASP_TRIES_PER_TILT = 6;
const MOVED_TOLERANCE_M = 0.02;
const IN_HAND_TOLERANCE_M = 0.04;
/** After the lift a held part has risen at least this much. */
const LIFTED_BY_M = 0.05;
const IDLE_REPLAN_S = 1;
/** Holds before the descent and before closing, for the tracking correction to converge. */
const SETTLE_S = 0.3;
const MISS_PROBABILITY_AT_ZERO_SKILL = 0.6;
const MISS_OFFSET_M = 0.008;
/** The slot both arms reach: the left arm sets parts down there for the right arm. */
const HANDOVER_SLOT: PartCategory = 'bolt';

interface ActivePlan {
  readonly side: ArmSide;
  readonly motion: ArmMotion;
  step: number;
  readonly partId?: string;
  readonly partAt?: Vec3;
  readonly partWidthM?: number;
  readonly checked: Set<string>;
}

interface Scene {
  readonly parts: PartView[];
  readonly tote?: { position: Vec3; quaternion: readonly [number, number, number, number] };
  readonly sorter?: { position: Vec3; quaternion: readonly [number, number, number, number] };
}

export class SortPolicy implements Policy {
  readonly info: PolicyInfo;
  private readonly opts: Required<SortPolicyOptions>;
  private arms: ArmReach[] = [];
  private rigModel: RigModel | undefined;
  private strokeM = 0.1;
  private controlHz = 50;
  private command: Float64Array | undefined;
  private plan: ActivePlan | undefined;
  private idleUntilS = -Infinity;
  private readonly attempts = new Map<string, number>();
  private readonly tracking = new TrackingCorrection();
  private lastChunkSettled = false;
  private skillRng: () => number = () => 0.5;
  private handoverY = Number.NaN;
  /** What the policy did, in words. */
  readonly log: string[] = [];

  constructor(opts: SortPolicyOptions = {}) {
    const skill = opts.skill ?? 1;
    if (!(skill >= 0 && skill <= 1))
      throw new RangeError(`${SORT_POLICY_NAME}: skill must be from 0 to 1, not ${skill}.`);
    const motion = opts.motion ?? DEFAULT_MOTION_LIMITS;
    const pace = 0.6 + 0.4 * skill;
    this.opts = {
      skill,
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
      maxAttemptsPerPart: opts.maxAttemptsPerPart ?? 2,
    };
    const name = sortPolicyName(skill);
    this.info = {
      name,
      checkpointSha256: codePolicySha256(name, SORT_POLICY_VERSION),
      actionHorizon: this.opts.actionHorizon,
      cameras: [],
      needsPrivilegedState: true,
    };
  }

  async reset(ctx: EpisodeContext): Promise<void> {
    if (ctx.rigModel.arms.length !== 2)
      throw new Error(
        `${SORT_POLICY_NAME} drives a two-arm rig; '${ctx.rigModel.name}' has ${ctx.rigModel.arms.length} arms.`,
      );
    this.arms = ctx.rigModel.arms.map((a) => armReach(a));
    this.rigModel = ctx.rigModel;
    this.strokeM = ctx.rigModel.arms[0].gripper.strokeM;
    this.controlHz = ctx.controlHz;
    this.command = undefined;
    this.plan = undefined;
    this.idleUntilS = -Infinity;
    this.attempts.clear();
    this.log.length = 0;
    this.tracking.reset();
    this.lastChunkSettled = false;
    this.skillRng = mulberry32(ctx.seed ^ 0x50f7);
  }

  async infer(obs: Observation): Promise<ActionChunk> {
    if (!obs.privileged) throw new PrivilegedStateRequiredError(SORT_POLICY_NAME);
    if (this.arms.length === 0) throw new Error(`${SORT_POLICY_NAME}: infer was called before reset.`);
    const scene = readSortScene(obs.privileged);
    if (!this.command) this.command = commandInLimits(obs.state, this.rigModel!);
    if (this.plan) this.checkPlan(this.plan, obs, scene);
    if (this.plan && this.plan.step / this.controlHz >= this.plan.motion.durationS) this.plan = undefined;
    if (!this.plan && obs.timeS >= this.idleUntilS) this.startNext(obs, scene);
    this.tracking.update(this.lastChunkSettled, this.command, obs.state);
    const H = this.opts.actionHorizon;
    const { actions, settled } = writeChunk({
      plan: this.plan,
      command: this.command,
      horizon: H,
      controlHz: this.controlHz,
      tracking: this.tracking,
      rigModel: this.rigModel!,
    });
    this.lastChunkSettled = settled;
    return { horizon: H, actions };
  }

  private armState(side: ArmSide): { q: Float64Array; gripper: number } {
    const base = stateIndex(side, 0);
    return { q: this.command!.slice(base, base + 6), gripper: this.command![base + 6] };
  }

  private reachOf(side: ArmSide): ArmReach {
    return this.arms.find((a) => a.side === side)!;
  }

  private log1(timeS: number, line: string): void {
    if (!this.log[this.log.length - 1]?.endsWith(line)) this.log.push(`${timeS.toFixed(2)}s ${line}`);
  }

  private startNext(obs: Observation, scene: Scene): void {
    const { tote, sorter } = scene;
    if (!tote || !sorter) return this.idle(obs, 'the scene has no tote or no sorter');
    const tries = (p: PartView): boolean => (this.attempts.get(p.id) ?? 0) < this.opts.maxAttemptsPerPart;
    // The right arm first: parts waiting in the handover slot for a slot only it reaches.
    const waiting = scene.parts.filter(
      (p) => p.shape.category !== HANDOVER_SLOT && inSlot(sorter, HANDOVER_SLOT, p.gripPoint) && tries(p),
    );
    const why: string[] = [];
    const attempt = (side: ArmSide, p: PartView, slot: Vec3): boolean => {
      const r = this.tryPick(obs, scene, side, p, slot);
      if (r !== true) why.push(`${p.id}: ${r}`);
      return r === true;
    };
    for (const p of waiting) if (attempt('right', p, slotCentre(sorter, p.shape.category))) return;
    // Then the left arm: parts in the tote, topmost first, then larger.
    const inTheTote = scene.parts.filter((p) => inTote(tote, p.gripPoint) && tries(p));
    inTheTote.sort(
      (a, b) =>
        b.gripPoint[2] - a.gripPoint[2] ||
        b.shape.widthM * b.shape.lengthM - a.shape.widthM * a.shape.lengthM ||
        (a.id < b.id ? -1 : 1),
    );
    for (const p of inTheTote) {
      const own = slotCentre(sorter, p.shape.category);
      const direct = p.shape.category !== 'bearing-ring' && this.canDropAt('left', own);
      this.handoverY = slotCentre(sorter, HANDOVER_SLOT)[1];
      if (attempt('left', p, direct ? own : slotCentre(sorter, HANDOVER_SLOT))) return;
    }
    const left = scene.parts.filter((p) => inTote(tote, p.gripPoint));
    this.idle(
      obs,
      left.length === 0
        ? 'the tote is empty'
        : `left ${left.map((p) => p.id).join(', ')} (${why.join('; ') || 'no attempts left'})`,
    );
  }

  private idle(obs: Observation, reason: string): void {
    this.log1(obs.timeS, `idle: ${reason}`);
    this.idleUntilS = obs.timeS + IDLE_REPLAN_S;
    for (const side of ['left', 'right'] as const) {
      const cur = this.armState(side);
      if (maxAbsDiff(parkPose(side), cur.q) > AT_POSE_RAD) {
        this.plan = {
          side,
          motion: transit(new ArmMotion(cur, this.opts.motion), parkPose(side)),
          step: 0,
          checked: new Set(['park-only']),
        };
        return;
      }
    }
  }

  private canDropAt(side: ArmSide, slot: Vec3): boolean {
    const release = this.releasePose(side, slot);
    return release !== undefined && this.leaning(side, [slot[0], slot[1], CARRY_Z_M], release.q) !== undefined;
  }

  private releasePose(side: ArmSide, slot: Vec3): { q: Float64Array; target: ToolTarget } | undefined {
    return this.leaning(side, [slot[0], slot[1], RELEASE_Z_M], this.armState(side).q);
  }

  /**
   * The tool at `position`, pointing straight down where the arm reaches so, else leaning away
   * from the base by the first of APPROACH_TILTS_RAD that reaches (the YAM reaches far and high
   * only with the wrist leaning out).
   */
  private leaning(
    side: ArmSide,
    position: Vec3,
    seed: ArrayLike<number>,
    closing?: Vec3,
  ): { q: Float64Array; target: ToolTarget } | undefined {
    const reach = this.reachOf(side);
    const out = sub(position, reach.basePosition);
    const n = Math.hypot(out[0], out[1]) || 1;
    for (const tilt of APPROACH_TILTS_RAD) {
      const target: ToolTarget = {
        position,
        approach: [(out[0] / n) * Math.sin(tilt), (out[1] / n) * Math.sin(tilt), -Math.cos(tilt)],
        ...(closing ? { closing } : {}),
      };
      const q = reach.solve(target, seed);
      if (q) return { q, target };
    }
    return undefined;
  }

  /**
   * The grasp of `part`: straight down where the hand fits and the arm reaches, else leaning by
   * the first of APPROACH_TILTS_RAD (away from the arm's base, or away from one of the tote's
   * walls) that does. At each tilt the closing directions are tried from the roomiest: the one
   * whose fingers and palm keep farthest from the tote's walls and the other parts (a lying screw
   * or bolt is pinched across its shank, so only its one direction).
   */
  private graspPose(
    side: ArmSide,
    part: PartView,
    grip: Vec3,
    tipsZ: number,
    closing: Vec3 | undefined,
    open: number,
    scene: Scene,
    seed: Float64Array,
  ): { graspTarget: ToolTarget; qHover: Float64Array; qGrasp: Float64Array } | string {
    const reach = this.reachOf(side);
    const out = sub(grip, reach.basePosition);
    const outXY = Math.hypot(out[0], out[1]) || 1;
    const leans: Vec3[] = [[out[0] / outXY, out[1] / outXY, 0]];
    if (scene.tote)
      for (const d of [
        [1, 0, 0],
        [-1, 0, 0],
        [0, 1, 0],
        [0, -1, 0],
      ] as const)
        leans.push(quatRotate(scene.tote.quaternion, d));
    const closings: Vec3[] = closing
      ? [closing]
      : Array.from(
          { length: CLOSING_YAWS },
          (_, k) => [Math.cos((Math.PI * k) / CLOSING_YAWS), Math.sin((Math.PI * k) / CLOSING_YAWS), 0] as Vec3,
        );
    const clearanceScene = { tote: scene.tote, others: scene.parts.filter((p) => p.id !== part.id) };
    const halfOpeningM = (open * this.strokeM) / 2;
    let why = 'the hand does not fit beside it (tote wall or other parts)';
    for (const tilt of APPROACH_TILTS_RAD) {
      const options: { target: ToolTarget; clearance: number }[] = [];
      for (const lean of tilt === 0 ? leans.slice(0, 1) : leans) {
        const approach: Vec3 = [lean[0] * Math.sin(tilt), lean[1] * Math.sin(tilt), -Math.cos(tilt)];
        for (const c of closings) {
          const target: ToolTarget = {
            position: [grip[0], grip[1], tipsZ + TIPS_BELOW_TOOL_M * Math.cos(tilt)],
            approach,
            closing: c,
          };
          const clearance = handClearance(
            { tool: target.position, approach, closing: c, halfOpeningM },
            clearanceScene,
          );
          if (clearance >= MIN_HAND_CLEARANCE_M) options.push({ target, clearance });
        }
      }
      options.sort((a, b) => b.clearance - a.clearance);
      for (const { target } of options.slice(0, MAX_GRASP_TRIES_PER_TILT)) {
        const hoverTarget: ToolTarget = { ...target, position: add(target.position, [0, 0, HOVER_M]) };
        const qHover = reach.solve(hoverTarget, seed);
        if (!qHover) {
          why = 'no hover pose';
          continue;
        }
        const qGrasp = reach.solve(target, qHover);
        if (!qGrasp) {
          why = 'no grasp pose';
          continue;
        }
        return { graspTarget: target, qHover, qGrasp };
      }
    }
    return why;
  }

  /** Plans a pick of `part` with `side` and a drop at `slot`; true, or why the arm cannot. */
  private tryPick(obs: Observation, scene: Scene, side: ArmSide, part: PartView, slot: Vec3): true | string {
    const reach = this.reachOf(side);
    const other: ArmSide = side === 'left' ? 'right' : 'left';
    // Top-down; a lying screw or bolt is pinched across its shank, a round part across its diameter.
    const a = part.axis;
    const horiz = Math.hypot(a[0], a[1]);
    const closing: Vec3 | undefined = part.axisVertical || horiz < 1e-6 ? undefined : [-a[1] / horiz, a[0] / horiz, 0];
    let grip = part.gripPoint;
    if (this.opts.skill < 1 && this.skillRng() < MISS_PROBABILITY_AT_ZERO_SKILL * (1 - this.opts.skill)) {
      const ang = 2 * Math.PI * this.skillRng();
      grip = add(grip, [MISS_OFFSET_M * Math.cos(ang), MISS_OFFSET_M * Math.sin(ang), 0]);
      this.log.push(
        `${obs.timeS.toFixed(2)}s (skill ${this.opts.skill}) misses ${part.id} by ${(MISS_OFFSET_M * 1000).toFixed(0)} mm`,
      );
    }
    const bottom = part.axisVertical ? part.origin[2] : grip[2] - part.shape.widthM / 2;
    // The fingertips go down to just above what the part lies on: on a 3 mm screw there is nothing higher to pinch.
    const height = part.axisVertical ? part.shape.lengthM : part.shape.widthM;
    const tipsZ = bottom + Math.min(TIPS_ABOVE_FLOOR_M, 0.4 * height);
    const start = this.armState(side);
    const open = Math.min(1, (part.shape.widthM + OPEN_MARGIN_M) / this.strokeM);
    const chosen = this.graspPose(side, part, grip, tipsZ, closing, open, scene, start.q);
    if (typeof chosen === 'string') return chosen;
    const release = this.releasePose(side, slot);
    if (!release) return 'no release pose above the slot';
    const aboveSlot = this.leaning(side, [slot[0], slot[1], CARRY_Z_M], release.q);
    if (!aboveSlot) return 'no pose above the slot';
    const { q: qAbove, target: above } = aboveSlot;
    const { graspTarget, qHover, qGrasp } = chosen;
    // The other arm parks first (one arm moves at a time).
    const otherNow = this.armState(other);
    if (maxAbsDiff(parkPose(other), otherNow.q) > AT_POSE_RAD) {
      this.plan = {
        side: other,
        motion: transit(new ArmMotion(otherNow, this.opts.motion), parkPose(other)),
        step: 0,
        checked: new Set(['park-only']),
      };
      this.log.push(`${obs.timeS.toFixed(2)}s park ${other} arm`);
      return true;
    }
    const limits = this.opts.motion;
    const m = new ArmMotion(start, limits);
    transit(m, qHover, open);
    // Still at the hover, then at the grasp, for the tracking correction to take out the arm's sag.
    m.gripperTo(open, 0.1, SETTLE_S);
    m.mark('pre');
    if (!m.lineTo(reach, graspTarget, { speedMS: limits.lineSpeedMS * 1.5 })) m.moveTo(qGrasp, { fine: true });
    m.gripperTo(open, 0.1, SETTLE_S);
    m.gripperTo(GRIPPER_CLOSED, GRIPPER_MOVE_S, 0.25).mark('closed');
    const tool = reach.toolAt(m.endQ).position;
    const lift: ToolTarget = { ...graspTarget, position: [tool[0], tool[1], CARRY_Z_M] };
    if (!m.lineTo(reach, lift, { speedMS: 0.15 })) {
      const qLift = reach.solve(lift, m.endQ) ?? this.leaning(side, lift.position, m.endQ, graspTarget.closing)?.q;
      if (!qLift) return 'no pose to lift it to';
      m.moveTo(qLift, { fine: true });
    }
    m.mark('lifted');
    m.moveTo(qAbove, { carry: true });
    if (!m.lineTo(reach, release.target, { speedMS: limits.lineSpeedMS * 1.5 })) m.moveTo(release.q, { fine: true });
    m.gripperTo(open, GRIPPER_MOVE_S, 0.2).mark('released');
    m.lineTo(reach, above, { speedMS: limits.lineSpeedMS * 2 });
    this.plan = {
      side,
      motion: m,
      step: 0,
      partId: part.id,
      partAt: part.gripPoint,
      partWidthM: part.shape.widthM,
      checked: new Set(),
    };
    const handover =
      side === 'left' && part.shape.category !== HANDOVER_SLOT && Math.abs(slot[1] - this.handoverY) < 0.01;
    this.log.push(
      `${obs.timeS.toFixed(2)}s pick ${part.id} with the ${side} arm${handover ? ', set down in the bolt slot for the right arm' : ''}`,
    );
    return true;
  }

  private checkPlan(plan: ActivePlan, obs: Observation, scene: Scene): void {
    if (plan.checked.has('park-only') || !plan.partId) return;
    const tS = plan.step / this.controlHz;
    const part = scene.parts.find((p) => p.id === plan.partId);
    const passed = (name: string): boolean =>
      !plan.checked.has(name) && tS >= (plan.motion.marks.get(name) ?? Infinity);
    let failure: string | undefined;
    let attempt = false;
    if (!part) failure = `${plan.partId} is gone`;
    else if (
      !plan.checked.has('closed') &&
      plan.partAt &&
      norm(sub(part.gripPoint, plan.partAt)) > MOVED_TOLERANCE_M &&
      tS < (plan.motion.marks.get('pre') ?? 0)
    ) {
      failure = `${plan.partId} moved before the grasp`;
    } else if (passed('lifted')) {
      plan.checked.add('lifted');
      const q = obs.state.subarray(stateIndex(plan.side, 0), stateIndex(plan.side, 0) + 6);
      const tool = this.reachOf(plan.side).toolAt(q).position;
      // Not the gripper's opening: squeezed, the sim's fingers sink into a small part's colliders
      // and read as closed (≈ 0.002 on a held 17.8 mm nut), so only whether it rose with the hand tells.
      if (
        norm(sub(part.gripPoint, tool)) > IN_HAND_TOLERANCE_M ||
        part.gripPoint[2] < (plan.partAt?.[2] ?? 0) + LIFTED_BY_M
      ) {
        failure = `${plan.partId} is not in the ${plan.side} hand after the lift`;
        attempt = true;
      }
    }
    if (!failure) return;
    if (attempt) this.attempts.set(plan.partId, (this.attempts.get(plan.partId) ?? 0) + 1);
    this.log.push(`${obs.timeS.toFixed(2)}s replan: ${failure}`);
    const reach = this.reachOf(plan.side);
    const cur = this.armState(plan.side);
    const m = new ArmMotion(cur, this.opts.motion);
    const tool = reach.toolAt(cur.q);
    m.lineTo(reach, {
      position: [tool.position[0], tool.position[1], CARRY_Z_M],
      approach: tool.approach,
      closing: tool.closing,
    });
    this.plan = { side: plan.side, motion: m, step: 0, checked: new Set(['park-only']) };
  }
}

export function readSortScene(state: PrivilegedState): Scene {
  const parts: PartView[] = [];
  for (const o of state.objects) {
    const shape = partShape(o.kind);
    if (!shape)
      throw new Error(
        `${SORT_POLICY_NAME} handles screws, bolts, nuts and bearing rings only; object '${o.id}' is a '${o.kind}'.`,
      );
    // A part below the table top has fallen off it: no arm reaches it.
    if (o.position[2] < -0.02) continue;
    parts.push(viewPart(o, shape));
  }
  const find = (kind: string) => {
    const f = state.fixtures.find((x) => x.kind === kind);
    return f ? { position: f.position as Vec3, quaternion: f.quaternion } : undefined;
  };
  return { parts, tote: find('tote'), sorter: find('sorter') };
}
