/**
 * The follower tracking its leader: the command source the fixed-rate control loop calls every
 * cycle (src/rig/control-loop.ts), so every command passes the follower rig's safety supervisor.
 *
 * Latest value wins: each cycle reads the leader's newest sample (a buffer its replies overwrite
 * in place) and commands it; there is no queue, so a slow cycle never leaves a backlog to replay —
 * the vendor stack's followers once fell seconds behind that way.
 *
 * Sync has four states:
 *   released  the follower holds where it was when sync was released (commanded, so its watchdog stays fed)
 *   engaging  a minimum-jerk ramp from the follower's pose to the (moving) leader over rampS, never a jump
 *   synced    the follower commands the leader's newest sample
 *   lost      the leader stopped answering (or its samples cannot be trusted): the follower holds
 *             where it was; back within autoReengageS it re-engages by itself (ramp and distance
 *             check), after longer the operator engages again
 * Engaging refuses, with one sentence, when the two are further apart than maxEngageGapRad.
 * The follower's gravity feed-forward is the rig's own (src/rig/gravity.ts, sent with every
 * tracking command by the driver); bilateral feedback servoes the leader toward the follower.
 */
import {
  ARM_SIDES,
  DOF_PER_ARM,
  JOINTS_PER_ARM,
  STATE_DIM,
  type ArmSide,
  type RigCommand,
  type RigState,
} from '../rig/contract.js';
import type { CommandSource } from '../rig/control-loop.js';
import type { Leader, LeaderEvent } from '../rig/leader.js';

export type SyncState = 'released' | 'engaging' | 'synced' | 'lost';

export interface FollowEvent {
  readonly timeS: number;
  readonly kind: 'sync-engaging' | 'sync-engaged' | 'sync-released' | 'sync-refused' | 'leader-lost' | 'leader-back';
  readonly message: string;
}

export interface FollowOptions {
  readonly leader: Leader;
  /** Engaging ramps over this long. Default 3 s. */
  readonly rampS?: number;
  /** Joints further apart than this refuse to engage. Default 0.6 rad. */
  readonly maxEngageGapRad?: number;
  /**
   * A leader sample older than this is a lost leader. Default 0.25 s: above the event-loop stalls a
   * loaded 2-core host shows (0.1 s tripped on them), well inside the motors' 400 ms watchdog; until
   * then the follower keeps the last sample's pose, which is a hold.
   */
  readonly leaderTimeoutS?: number;
  /** A leader back within this long of being lost re-engages by itself (ramp and distance check). Default 2 s; 0: never. */
  readonly autoReengageS?: number;
  /** Bilateral feedback gain (× the leader joints' kp), 0.1–0.2 usual; undefined: off. */
  readonly bilateralGain?: number;
}

export const DEFAULT_RAMP_S = 3;
export const DEFAULT_MAX_ENGAGE_GAP_RAD = 0.6;
export const DEFAULT_LEADER_TIMEOUT_S = 0.25;
export const DEFAULT_AUTO_REENGAGE_S = 2;

/** Ages of the leader samples commanded (s), the last N, for the latency bench. */
const AGE_RING = 1 << 14;

function entryName(k: number): string {
  const side = k < DOF_PER_ARM ? 'left' : 'right';
  const j = k % DOF_PER_ARM;
  return j === JOINTS_PER_ARM ? `${side} gripper` : `${side} joint ${j + 1}`;
}

export class LeaderFollow {
  readonly leader: Leader;
  private readonly rampS: number;
  private readonly maxGapRad: number;
  private readonly timeoutS: number;
  private readonly bilateralGain: number | undefined;
  private current: SyncState = 'released';
  private engageRequested = false;
  private engageFrom: Float64Array | undefined;
  private releaseRequested = false;
  private rampStartS = 0;
  private readonly hold = new Float64Array(STATE_DIM);
  private holdValid = false;
  private readonly rampFrom = new Float64Array(STATE_DIM);
  private readonly target = new Float64Array(STATE_DIM);
  private readonly cmd: RigCommand = { position: this.target };
  private readonly followed: boolean[];
  private events: FollowEvent[] = [];
  private leaderEvents: LeaderEvent[] = [];
  private lostReported = false;
  private lostAtS = 0;
  private readonly autoReengageS: number;
  readonly sampleAgeS = new Float64Array(AGE_RING);
  ages = 0;
  /** Largest |follower measured − leader| over the joints, the last synced cycle (rad). */
  trackingErrorRad = 0;

  constructor(options: FollowOptions) {
    this.leader = options.leader;
    this.rampS = options.rampS ?? DEFAULT_RAMP_S;
    this.maxGapRad = options.maxEngageGapRad ?? DEFAULT_MAX_ENGAGE_GAP_RAD;
    this.timeoutS = options.leaderTimeoutS ?? DEFAULT_LEADER_TIMEOUT_S;
    this.bilateralGain = options.bilateralGain;
    this.autoReengageS = options.autoReengageS ?? DEFAULT_AUTO_REENGAGE_S;
    if (this.bilateralGain !== undefined && !(this.bilateralGain >= 0.05 && this.bilateralGain <= 0.3)) {
      throw new RangeError(
        `The bilateral feedback gain must be from 0.05 to 0.3 of the leader's kp (0.1–0.2 is usual), not ${this.bilateralGain}.`,
      );
    }
    this.followed = ARM_SIDES.map((s) => this.leader.arms.includes(s));
  }

  get state(): SyncState {
    return this.current;
  }

  /**
   * Engage (or re-engage) on the next cycle: ramps, or refuses with a 'sync-refused' event. The ramp
   * starts from `from` when given (where something else last commanded the follower: a policy
   * handing over), else from the follower's measured pose.
   */
  engage(from?: ArrayLike<number>): void {
    this.engageRequested = true;
    this.engageFrom = from ? Float64Array.from(from) : undefined;
  }

  release(): void {
    this.releaseRequested = true;
  }

  takeEvents(): FollowEvent[] {
    const e = this.events;
    this.events = [];
    return e;
  }

  /** The leader's buttons and notes seen by the loop since the last call. */
  takeLeaderEvents(): LeaderEvent[] {
    const e = this.leaderEvents;
    this.leaderEvents = [];
    return e;
  }

  /** The command source for the ControlLoop. */
  readonly source: CommandSource = (state, _cycle, nowS) => this.cycle(state, nowS);

  private emit(timeS: number, kind: FollowEvent['kind'], message: string): void {
    this.events.push({ timeS, kind, message });
  }

  private holdHere(state: RigState): void {
    this.hold.set(state.position);
    this.holdValid = true;
  }

  /** Why the leader cannot be followed now, or undefined. */
  private leaderProblem(nowS: number): string | undefined {
    const r = this.leader.latest();
    for (let a = 0; a < 2; a++) {
      if (!this.followed[a]) continue;
      const side: ArmSide = ARM_SIDES[a];
      const p = r.problem[a];
      if (p) return p;
      const age = nowS - r.sampleS[a];
      if (!(age <= this.timeoutS)) {
        return Number.isNaN(r.sampleS[a])
          ? `The ${side} leader has sent no sample yet; check that it is connected and powered.`
          : `The ${side} leader stopped answering (no sample for ${Math.round(age * 1000)} ms); the follower holds where it is. Check the leader's cable and power, then engage again.`;
      }
    }
    return undefined;
  }

  private cycle(state: RigState, nowS: number): RigCommand | undefined {
    const leader = this.leader;
    leader.poll(nowS);
    for (const e of leader.takeEvents()) this.leaderEvents.push(e);
    if (!this.holdValid) this.holdHere(state);
    const problem = this.leaderProblem(nowS);

    if (this.releaseRequested) {
      this.releaseRequested = false;
      this.engageRequested = false;
      if (this.current !== 'released') {
        this.holdHere(state);
        this.current = 'released';
        this.emit(nowS, 'sync-released', 'Sync released: the follower holds its pose.');
      }
    }
    if (problem !== undefined && (this.current === 'synced' || this.current === 'engaging')) {
      this.holdHere(state);
      this.current = 'lost';
      this.lostReported = true;
      this.lostAtS = nowS;
      this.emit(nowS, 'leader-lost', problem);
    } else if (problem === undefined && this.current === 'lost' && this.lostReported) {
      this.lostReported = false;
      // A short gap (a stalled host, a glitch on the cable) re-engages by itself, through the same
      // ramp and distance check; after a longer one the operator decides.
      const brief = nowS - this.lostAtS <= this.autoReengageS;
      if (brief) this.engageRequested = true;
      this.emit(
        nowS,
        'leader-back',
        brief
          ? 'The leader answers again; re-engaging (the follower ramps to it).'
          : 'The leader answers again; engage sync to follow it (the follower ramps to it).',
      );
    }
    if (this.engageRequested) {
      this.engageRequested = false;
      const from = this.engageFrom;
      this.engageFrom = undefined;
      if (problem !== undefined) {
        this.emit(nowS, 'sync-refused', `Not engaging: ${problem.charAt(0).toLowerCase()}${problem.slice(1)}`);
      } else if (this.current === 'released' || this.current === 'lost') {
        const gap = this.largestGap(state);
        if (gap.rad > this.maxGapRad) {
          this.emit(
            nowS,
            'sync-refused',
            `Not engaging: the leader's ${entryName(gap.k)} is ${gap.rad.toFixed(2)} rad from the follower's (more than ${this.maxGapRad.toFixed(2)} rad); move the leader to the follower's pose, then engage again.`,
          );
        } else {
          this.rampFrom.set(from ?? state.position);
          this.rampStartS = nowS;
          this.current = 'engaging';
          this.emit(nowS, 'sync-engaging', `Engaging sync: the follower ramps to the leader over ${this.rampS} s.`);
        }
      }
    }

    const r = leader.latest();
    const pos = this.target;
    if (this.current === 'engaging' || this.current === 'synced') {
      let alpha = 1;
      if (this.current === 'engaging') {
        const u = Math.min(1, (nowS - this.rampStartS) / this.rampS);
        alpha = u * u * u * (10 - 15 * u + 6 * u * u); // minimum jerk: zero velocity and acceleration at both ends
        if (u >= 1) {
          this.current = 'synced';
          this.emit(nowS, 'sync-engaged', 'Sync engaged: the follower tracks the leader.');
        }
      }
      let err = 0;
      for (let k = 0; k < STATE_DIM; k++) {
        const a = k < DOF_PER_ARM ? 0 : 1;
        const lk = r.position[k];
        if (!this.followed[a] || !Number.isFinite(lk)) {
          pos[k] = this.current === 'engaging' ? this.rampFrom[k] : this.hold[k];
          continue;
        }
        pos[k] = alpha === 1 ? lk : this.rampFrom[k] + alpha * (lk - this.rampFrom[k]);
        if (k % DOF_PER_ARM !== JOINTS_PER_ARM) {
          const e = Math.abs(state.position[k] - lk);
          if (e > err) err = e;
        }
      }
      this.trackingErrorRad = err;
      // How old the sample we command is: the leader-to-command part of the latency.
      let age = 0;
      for (let a = 0; a < 2; a++) if (this.followed[a]) age = Math.max(age, nowS - r.sampleS[a]);
      this.sampleAgeS[this.ages++ & (AGE_RING - 1)] = age;
      // Keep the hold pose current: a release or a lost leader holds where the follower is aimed now.
      if (this.current === 'synced' && this.bilateralGain !== undefined)
        leader.setFeedback(state.position, this.bilateralGain);
      return this.cmd;
    }
    leader.setFeedback(undefined, 0);
    pos.set(this.hold);
    return this.cmd;
  }

  private largestGap(state: RigState): { k: number; rad: number } {
    const r = this.leader.latest();
    let best = { k: 0, rad: 0 };
    for (let k = 0; k < STATE_DIM; k++) {
      const a = k < DOF_PER_ARM ? 0 : 1;
      if (!this.followed[a] || k % DOF_PER_ARM === JOINTS_PER_ARM) continue; // grippers ramp whatever their gap
      const d = Math.abs(r.position[k] - state.position[k]);
      if (!(d <= best.rad)) best = { k, rad: Number.isFinite(d) ? d : Infinity };
    }
    return best;
  }
}
