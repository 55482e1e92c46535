/**
 * Joint-space motion for one arm: smooth (minimum-jerk) moves between joint configurations,
 * straight tool-point lines through IK, and gripper changes, sampled at the control rate.
 * Every move's duration is chosen so no joint exceeds its speed budget.
 */
import type { ArmReach, ToolTarget } from './arm-reach.js';
import { add, norm, scale, sub } from './frames.js';

/** One arm's target at an instant: 6 joints and the gripper (0 closed … 1 open). */
export interface ArmTarget {
  readonly q: Float64Array;
  readonly gripper: number;
}

export interface MotionLimits {
  /** Peak joint speed of free moves, rad/s (well under the motors' limits). */
  readonly freeSpeedRadS: number;
  /** Peak joint speed near objects. */
  readonly fineSpeedRadS: number;
  /** Peak joint speed while carrying a grasped object clear of the others. */
  readonly carrySpeedRadS: number;
  /** Tool speed of straight-line moves, m/s. */
  readonly lineSpeedMS: number;
  /** Shortest move, seconds. */
  readonly minMoveS: number;
}

export const DEFAULT_MOTION_LIMITS: MotionLimits = {
  freeSpeedRadS: 1.6,
  fineSpeedRadS: 0.6,
  carrySpeedRadS: 0.7,
  lineSpeedMS: 0.1,
  minMoveS: 0.4,
};

/** Minimum-jerk progress 0 → 1; its peak rate is 1.875 / duration. */
function minJerk(s: number): number {
  const x = s <= 0 ? 0 : s >= 1 ? 1 : s;
  return x * x * x * (10 + x * (-15 + 6 * x));
}
const MIN_JERK_PEAK = 1.875;
/** Gripper speed budget, full strokes per second (the rig clamps at 3). */
const MAX_GRIPPER_STROKES_S = 2.7;

/** A piecewise-linear joint path with a minimum-jerk time law along its arc length. */
interface Segment {
  readonly durationS: number;
  readonly path: readonly Float64Array[];
  /** Cumulative joint-space arc length at each path point (max-norm). */
  readonly arc: readonly number[];
  readonly gripperFrom: number;
  readonly gripperTo: number;
  /** Gripper change uses the whole duration when true, else it switches at the start. */
  readonly gripperRamp: boolean;
}

/** Largest change of any of the 6 arm joints between two configurations. */
export function maxAbsDiff(a: ArrayLike<number>, b: ArrayLike<number>): number {
  let m = 0;
  for (let i = 0; i < 6; i++) m = Math.max(m, Math.abs(a[i] - b[i]));
  return m;
}

export class ArmMotion {
  private readonly segments: Segment[] = [];
  private q: Float64Array;
  private gripper: number;
  /** Named instants (seconds from the start) where the policy checks the world. */
  readonly marks = new Map<string, number>();

  constructor(
    start: ArmTarget,
    private readonly limits: MotionLimits = DEFAULT_MOTION_LIMITS,
  ) {
    this.q = Float64Array.from(start.q);
    this.gripper = start.gripper;
  }

  get durationS(): number {
    return this.segments.reduce((s, g) => s + g.durationS, 0);
  }
  get endQ(): Float64Array {
    return this.q;
  }

  private push(path: Float64Array[], durationS: number, gripperTo: number, gripperRamp: boolean): this {
    const arc = [0];
    for (let i = 1; i < path.length; i++) arc.push(arc[i - 1] + maxAbsDiff(path[i - 1], path[i]));
    this.segments.push({ durationS, path, arc, gripperFrom: this.gripper, gripperTo, gripperRamp });
    this.q = Float64Array.from(path[path.length - 1]);
    this.gripper = gripperTo;
    return this;
  }

  /** Joint-space move to q; `fine` uses the slower speed budget (close to objects), `carry` the carrying one. */
  moveTo(q: ArrayLike<number>, opts: { fine?: boolean; carry?: boolean; gripper?: number } = {}): this {
    const speed = opts.carry
      ? this.limits.carrySpeedRadS
      : opts.fine
        ? this.limits.fineSpeedRadS
        : this.limits.freeSpeedRadS;
    const d = maxAbsDiff(this.q, q);
    const gripper = opts.gripper ?? this.gripper;
    // A gripper change rides along with the move, over at least the gripper speed budget.
    const gripperS = (MIN_JERK_PEAK * Math.abs(gripper - this.gripper)) / MAX_GRIPPER_STROKES_S;
    const durationS = Math.max(this.limits.minMoveS, (MIN_JERK_PEAK * d) / speed, gripperS);
    return this.push([Float64Array.from(this.q), Float64Array.from(q)], durationS, gripper, gripper !== this.gripper);
  }

  /**
   * Straight tool-point line from the current configuration's tool point to `target`, solved
   * by IK every 1 cm (each solution seeds the next, so the arm keeps its branch). Returns false
   * (and adds nothing) when some point of the line is out of reach.
   */
  lineTo(reach: ArmReach, target: ToolTarget, opts: { gripper?: number; speedMS?: number } = {}): boolean {
    const from = reach.toolAt(this.q).position;
    const delta = sub(target.position, from);
    const length = norm(delta);
    const steps = Math.max(1, Math.ceil(length / 0.01));
    const path: Float64Array[] = [Float64Array.from(this.q)];
    let seed: ArrayLike<number> = this.q;
    for (let i = 1; i <= steps; i++) {
      const p = add(from, scale(delta, i / steps));
      const q = reach.solve({ ...target, position: p }, seed);
      if (!q || maxAbsDiff(q, seed) > 0.35) return false; // out of reach, or IK jumped branch
      path.push(q);
      seed = q;
    }
    const arcLen = path.reduce((s, q, i) => (i === 0 ? 0 : s + maxAbsDiff(path[i - 1], q)), 0);
    const durationS = Math.max(
      this.limits.minMoveS,
      (MIN_JERK_PEAK * length) / (opts.speedMS ?? this.limits.lineSpeedMS),
      (MIN_JERK_PEAK * arcLen) / this.limits.fineSpeedRadS,
    );
    this.push(path, durationS, opts.gripper ?? this.gripper, false);
    return true;
  }

  /** Open or close the gripper in place over `durationS`, then hold for `settleS`. */
  gripperTo(value: number, durationS: number, settleS = 0): this {
    durationS = Math.max(durationS, (MIN_JERK_PEAK * Math.abs(value - this.gripper)) / MAX_GRIPPER_STROKES_S);
    this.push([Float64Array.from(this.q), Float64Array.from(this.q)], durationS, value, true);
    if (settleS > 0) this.push([Float64Array.from(this.q), Float64Array.from(this.q)], settleS, value, false);
    return this;
  }

  /** Marks the current end of the motion under a name (checked by the policy when reached). */
  mark(name: string): this {
    this.marks.set(name, this.durationS);
    return this;
  }

  /** The target at time tS from the motion's start (held at the end afterwards). */
  sample(tS: number, qOut: Float64Array): number {
    let t = tS;
    for (const seg of this.segments) {
      if (t <= seg.durationS) return sampleSegment(seg, t, qOut);
      t -= seg.durationS;
    }
    qOut.set(this.q);
    return this.gripper;
  }
}

function sampleSegment(seg: Segment, t: number, qOut: Float64Array): number {
  const s = minJerk(t / seg.durationS);
  const total = seg.arc[seg.arc.length - 1];
  if (total <= 0 || seg.path.length === 1) {
    qOut.set(seg.path[seg.path.length - 1]);
  } else {
    const along = s * total;
    let k = 1;
    while (k < seg.arc.length - 1 && seg.arc[k] < along) k++;
    const span = seg.arc[k] - seg.arc[k - 1];
    const f = span > 0 ? (along - seg.arc[k - 1]) / span : 1;
    const a = seg.path[k - 1];
    const b = seg.path[k];
    for (let i = 0; i < 6; i++) qOut[i] = a[i] + (b[i] - a[i]) * f;
  }
  if (seg.gripperRamp) return seg.gripperFrom + (seg.gripperTo - seg.gripperFrom) * s;
  return seg.gripperTo;
}
