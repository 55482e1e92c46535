/**
 * Recording from a sweep's worker thread: the worker keeps every call the rollout loop makes on
 * its EpisodeRecording (copies: the sim rig reuses its arrays), and hands the list back with the
 * rollout's result; the main thread replays it into an episode file. The sim room writes no files
 * itself (src/record is the station's), and a sim episode's messages fit in memory many times over.
 */
import type { RigCommand, RigState, SafetyEvent } from '../rig/contract.js';
import type { EpisodeRecording, LoopEventKind, StepTiming } from '../rollout/run-episode.js';

export type RecordedCall =
  | { readonly k: 'state'; readonly state: RigState }
  | { readonly k: 'command'; readonly timeS: number; readonly applied: RigCommand }
  | { readonly k: 'safety'; readonly event: SafetyEvent }
  | {
      readonly k: 'event';
      readonly timeS: number;
      readonly kind: LoopEventKind;
      readonly source: string;
      readonly message: string;
      readonly detail?: Record<string, unknown>;
    }
  | { readonly k: 'timing'; readonly timeS: number; readonly timing: StepTiming };

const copy = (a: Float64Array | undefined): Float64Array | undefined => (a ? Float64Array.from(a) : undefined);

export class RecordingRelay implements EpisodeRecording {
  readonly calls: RecordedCall[] = [];

  jointState(state: RigState): void {
    this.calls.push({
      k: 'state',
      state: {
        timeS: state.timeS,
        mode: state.mode,
        position: Float64Array.from(state.position),
        velocity: Float64Array.from(state.velocity),
        effort: Float64Array.from(state.effort),
        faults: [...state.faults],
      },
    });
  }

  command(timeS: number, applied: RigCommand): void {
    this.calls.push({
      k: 'command',
      timeS,
      applied: {
        position: Float64Array.from(applied.position),
        velocity: copy(applied.velocity),
        torqueNm: copy(applied.torqueNm),
      },
    });
  }

  safetyEvent(event: SafetyEvent): void {
    this.calls.push({ k: 'safety', event: { ...event } });
  }

  event(timeS: number, kind: LoopEventKind, source: string, message: string, detail?: Record<string, unknown>): void {
    this.calls.push({ k: 'event', timeS, kind, source, message, detail });
  }

  stepTiming(timeS: number, timing: StepTiming): void {
    this.calls.push({ k: 'timing', timeS, timing });
  }
}

/** Plays recorded calls into a recording, in the order they were made. */
export function replayRecording(calls: readonly RecordedCall[], to: EpisodeRecording): void {
  for (const c of calls) {
    if (c.k === 'state') to.jointState(c.state);
    else if (c.k === 'command') to.command(c.timeS, c.applied);
    else if (c.k === 'safety') to.safetyEvent(c.event);
    else if (c.k === 'timing') to.stepTiming(c.timeS, c.timing);
    else to.event(c.timeS, c.kind, c.source, c.message, c.detail);
  }
}
