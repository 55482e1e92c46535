/**
 * The operator's takeover across an eval session: for each session rollout the leader is brought up
 * on that rollout's clock and put away after it, exactly as `tandem rig rollout --leader` does
 * (openTakeoverLeader), and its takeover input goes to the one rollout loop. Between rollouts
 * nothing polls the leader, so it is not left powered while the operator places and scores.
 *
 * The rollout running now is the one the operator's toggles reach: the Session page's button and
 * E key, the terminal's `e` line, or the handle's top button (seen by the loop itself).
 */
import type { Clock } from '../rig/contract.js';
import type { LeaderHand } from '../rig/leader-registry.js';
import type { OperatorTakeover } from '../rollout/operator-takeover.js';
import { openTakeoverLeader, type TakeoverLeader } from './takeover-leader.js';

/** What the operator sees of the takeover while a rollout runs. */
export interface TakeoverNow {
  /** The leader, as its driver describes it. */
  readonly leader: string;
  /** The operator drives the arms (taking over, or holding for a lost leader); false: the policy does. */
  readonly driving: boolean;
  /** Stretches the operator has driven in this rollout. */
  readonly stretches: number;
}

export interface SessionTakeoverOptions {
  /** The leader as `--leader` spells it (a station config's leader through leaderSpecOf). */
  readonly spec: string;
  /** The ramp from the policy's last command to the leader. Default the teleop engage ramp. */
  readonly rampS?: number;
  /** The takeover's lines (taking over, refused, given back), for the operator. */
  readonly log: (line: string) => void;
  /** The hand an emulated leader plays (tests press its top button on cue). */
  readonly hand?: LeaderHand;
}

export class SessionTakeover {
  private current: TakeoverLeader | undefined;

  constructor(private readonly o: SessionTakeoverOptions) {}

  get spec(): string {
    return this.o.spec;
  }

  /** Opens the leader for one rollout on its clock, runs the rollout with its takeover input, and closes it after. */
  async during<T>(clock: Clock, rollout: (takeover: OperatorTakeover) => Promise<T>): Promise<T> {
    const opened = await openTakeoverLeader({
      spec: this.o.spec,
      clock,
      ...(this.o.rampS !== undefined ? { rampS: this.o.rampS } : {}),
      ...(this.o.hand ? { hand: this.o.hand } : {}),
      log: this.o.log,
    });
    this.current = opened;
    try {
      return await rollout(opened.takeover);
    } finally {
      this.current = undefined;
      await opened.close();
    }
  }

  /** Takes over from the policy, or gives back, on the running rollout's next step; false when no rollout runs. */
  toggle(): boolean {
    if (!this.current) return false;
    this.current.takeover.toggle();
    return true;
  }

  /** The running rollout's takeover, or null between rollouts. */
  now(): TakeoverNow | null {
    const c = this.current;
    if (!c) return null;
    return { leader: c.description, driving: c.takeover.driving, stretches: c.takeover.stretches };
  }
}
