/**
 * The operator's takeover of a policy rollout with the leader arm: the rollout loop's takeover
 * input (src/rollout/operator-takeover.ts) over the teleop follower (LeaderFollow), so taking over
 * obeys the teleop engage rule — refused, in one sentence, while the leader is far from the
 * follower; otherwise a minimum-jerk ramp from the follower's pose to the leader — and a leader
 * that stops answering leaves the follower holding, as in teleop.
 *
 * The operator toggles it: the handle's top button (seen here, as the loop polls the leader), or a
 * key or the pedal through `toggle`. Taking over engages sync; giving back releases it and the
 * policy resumes.
 */
import type { RigCommand, RigState } from '../rig/contract.js';
import type { FollowEvent, LeaderFollow } from './follow.js';

export interface TakeoverNote {
  readonly timeS: number;
  readonly kind: string;
  readonly message: string;
}

/** How long a toggle waits at the start of a rollout for the leader's first answer. */
const WAIT_FOR_LEADER_S = 0.5;

export class LeaderTakeover {
  private toggles = 0;
  /** The leader's sample count and the time at the rollout's first step (-1: not yet). */
  private firstSamples = -1;
  private firstS = 0;
  private notes: TakeoverNote[] = [];
  private drove = false;
  private stretchCount = 0;

  constructor(
    readonly follow: LeaderFollow,
    private readonly o: { readonly log?: (line: string) => void } = {},
  ) {}

  /** Whether the operator drives now (sync engaging, engaged, or holding for a lost leader). */
  get driving(): boolean {
    return this.follow.state !== 'released';
  }

  /** Stretches the operator has driven so far (each take-over the engage rule let through). */
  get stretches(): number {
    return this.stretchCount;
  }

  /** Take over when the policy drives, give back when the operator does (on the next control step). */
  toggle(): void {
    this.toggles += 1;
  }

  command(state: RigState, nowS: number, lastCommand: ArrayLike<number>): RigCommand | undefined {
    // Nothing polls the leader between its activation and the rollout's first step (the rig comes up
    // meanwhile), so its sample is old then: a toggle waits until the leader answered a poll of this
    // rollout — or, silent for longer than it may be, is refused in the teleop engage rule's words.
    const r = this.follow.leader.latest();
    const samples = r.samples[0] + r.samples[1];
    if (this.firstSamples < 0) {
      this.firstSamples = samples;
      this.firstS = nowS;
    }
    const heard = samples > this.firstSamples || nowS - this.firstS > WAIT_FOR_LEADER_S;
    for (; heard && this.toggles > 0; this.toggles--) {
      // The ramp to the leader starts where the policy last aimed the arms, not where they lag behind it.
      if (this.follow.state === 'released') this.follow.engage(lastCommand);
      else this.follow.release();
    }
    const cmd = this.follow.source(state, 0, nowS);
    // Counted before the events are told: whoever hears "Taking over" reads the new count.
    const drives = this.follow.state !== 'released';
    if (drives && !this.drove) this.stretchCount += 1;
    this.drove = drives;
    for (const e of this.follow.takeEvents()) {
      this.notes.push(noteOf(e));
      this.o.log?.(takeoverWords(e));
    }
    // The handle's top button toggles too; its press takes effect on the next step.
    for (const e of this.follow.takeLeaderEvents())
      if (e.kind === 'button' && e.button === 0 && e.pressed) this.toggle();
    return this.follow.state === 'released' ? undefined : cmd;
  }

  takeNotes(): readonly TakeoverNote[] {
    const n = this.notes;
    this.notes = [];
    return n;
  }
}

/** The follower's sync events in a takeover's terms (the operator reads them in the terminal). */
function takeoverWords(e: FollowEvent): string {
  if (e.kind === 'sync-engaging')
    return `Taking over: the policy pauses; ${e.message.charAt(0).toLowerCase()}${e.message.slice(1)}`;
  if (e.kind === 'sync-engaged')
    return 'Taken over: the follower tracks the leader. Press E or the top button to give back.';
  if (e.kind === 'sync-released') return 'Given back: the policy resumes from here.';
  return e.message;
}

function noteOf(e: FollowEvent): TakeoverNote {
  return { timeS: e.timeS, kind: e.kind, message: e.message };
}
