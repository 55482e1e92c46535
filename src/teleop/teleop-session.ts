/**
 * A teleop recording session: N episodes of one task, each a take recorded while the follower
 * tracks the leader, with a reset period (and its countdown) between takes. One control loop runs
 * for the whole session, so the follower is commanded — tracking or holding — from the first cycle
 * to the last, through the rig's safety supervisor.
 *
 * The operator drives it with OperatorControls (keyboard, pedal, the leader's buttons); every take
 * is recorded through the caller's openTake (src/record's EpisodeRecorder, registered in the store),
 * with its events: sync engaged and released, the leader lost and back, safety interventions,
 * discards. Bad input ends in one sentence and a safe hold, and keeps every recorded byte:
 *   - the leader stops answering: the follower holds, the take goes on, marked, and is kept unless discarded;
 *   - the leader is too far from the follower at engage: refused, the operator moves it and engages again;
 *   - a camera is lost mid-take: the take ends there, marked and kept; the session stops (resume later);
 *   - the follower faults: the take ends, marked and kept; the session stops.
 */
import type { Clock, Rig, RigCommand, RigState, SafetyEvent } from '../rig/contract.js';
import type { Camera } from '../rig/camera.js';
import { ControlLoop, type LoopStats } from '../rig/control-loop.js';
import type { EpisodeRecorder, RecordingSummary } from '../record/episode-recorder.js';
import type { LeaderFollow } from './follow.js';
import type { OperatorAction, OperatorControls } from './operator-controls.js';

export interface TakeHandle {
  readonly recorder: EpisodeRecorder;
  readonly file: string;
  /** Closes the file and keeps the take, with its marks (problems during it). */
  finish(marks: readonly string[]): Promise<RecordingSummary>;
  /** After finish: the take is thrown away (its file moved aside, every byte kept). Returns where it went. */
  discard(reason: string): Promise<string>;
}

export interface TeleopSessionOptions {
  /** The follower, active (the caller activated it; the session's loop starts commanding it at once). */
  readonly rig: Rig;
  readonly clock: Clock;
  readonly follow: LeaderFollow;
  readonly controls: OperatorControls;
  /** Open cameras; losing one mid-take ends the take and the session. */
  readonly cameras?: readonly Camera[];
  /** Episodes the session should end with (0-based indices firstEpisode … episodes − 1 are recorded). */
  readonly episodes: number;
  readonly firstEpisode?: number;
  readonly episodeSeconds: number;
  readonly resetSeconds: number;
  readonly prompt: string;
  readonly rateHz?: number;
  openTake(episodeIndex: number): Promise<TakeHandle>;
  readonly log: (line: string) => void;
  /** Aborted: the take in flight ends (kept, marked) and the session stops, resumable. */
  readonly signal?: AbortSignal;
  /** Where the session is, for a UI: engaging sync, recording a take, or the reset between takes (with its seconds). */
  readonly onPhase?: (phase: TeleopPhase, episodeIndex: number, seconds?: number) => void;
}

export type TeleopPhase = 'engaging' | 'take' | 'reset';

export interface TakeReport {
  readonly episodeIndex: number;
  readonly file: string;
  readonly marks: readonly string[];
  readonly summary: RecordingSummary;
}

export type SessionEnd = 'done' | 'operator' | 'camera-lost' | 'follower-fault' | 'interrupted' | 'unattended';

export interface TeleopSessionResult {
  readonly kept: readonly TakeReport[];
  readonly discarded: readonly (TakeReport & { movedTo: string; reason: string })[];
  readonly end: SessionEnd;
  /** The sentence that ended the session early, if anything did. */
  readonly problem?: string;
  /** The next episode index to record (episodes when done). */
  readonly nextEpisode: number;
  readonly loop: LoopStats;
  readonly safetyEvents: number;
  /** Operator seconds: from the session's start to its end (takes, resets, engaging). */
  readonly operatorSeconds: number;
}

/** A Rig that hands every applied command to `onApplied` (the loop's writes pass through it). */
function observedRig(rig: Rig, onApplied: (applied: RigCommand) => void): Rig {
  return {
    get model() {
      return rig.model;
    },
    configure: () => rig.configure(),
    activate: () => rig.activate(),
    read: () => rig.read(),
    write(cmd) {
      const applied = rig.write(cmd);
      onApplied(applied);
      return applied;
    },
    tick: () => rig.tick(),
    hold: () => rig.hold(),
    estop: (reason) => rig.estop(reason),
    deactivate: () => rig.deactivate(),
    takeSafetyEvents: () => rig.takeSafetyEvents(),
  };
}

const POLL_MS = 50;

export async function runTeleopSession(o: TeleopSessionOptions): Promise<TeleopSessionResult> {
  const { clock, follow, controls, log } = o;
  // On virtual time every wait is on the rig's clock (it takes many waiters): a take then lasts
  // exactly its length however fast the machine is. Where time passes by itself it is the wall's,
  // whose clock serves one waiter, the control loop: a wall timer (cancelled when an action comes
  // first) is the same wait there.
  const after = (ms: number): number | Promise<void> =>
    clock.passesWhileAwaiting === false ? clock.waitUntil(clock.nowS() + ms / 1000) : ms;
  // Opening and finishing a take's file takes none of the rig's time where time can stand still
  // (virtual time): otherwise the disk's speed would decide where the next take starts.
  const still = <T>(work: Promise<T>): Promise<T> => clock.standStill?.(work) ?? work;
  const startedS = clock.nowS();
  let take: TakeHandle | undefined;
  let marks: string[] = [];
  let fatal: { end: SessionEnd; sentence: string } | undefined;
  let refusal: string | undefined;
  let safetyCount = 0;

  const recordSafety = (events: readonly SafetyEvent[]): void => {
    for (const e of events) {
      safetyCount++;
      take?.recorder.safetyEvent(e);
      if (e.kind === 'fault-hold' || e.kind === 'watchdog-damp' || e.kind === 'estop') {
        fatal ??= { end: 'follower-fault', sentence: `The follower stopped: ${e.message}` };
      }
    }
  };
  const rig = observedRig(o.rig, (applied) => take?.recorder.command(clock.nowS(), applied));
  const source = (state: RigState, cycle: number, nowS: number): RigCommand | undefined => {
    take?.recorder.jointState(state);
    const cmd = follow.source(state, cycle, nowS);
    for (const e of follow.takeEvents()) {
      take?.recorder.event(
        e.timeS,
        e.kind === 'leader-lost' || e.kind === 'leader-back' ? 'mark' : 'sync',
        'teleop',
        e.message,
        { teleop_kind: e.kind },
      );
      if (e.kind === 'leader-lost') {
        marks.push(e.message);
        log(`LEADER LOST: ${e.message}`);
      } else if (e.kind === 'sync-refused') {
        refusal = e.message;
      } else log(e.message);
    }
    controls.leaderEvents(follow.takeLeaderEvents());
    if (state.mode === 'fault' || state.mode === 'damped' || state.mode === 'estopped') {
      fatal ??= {
        end: 'follower-fault',
        sentence: `The follower is ${state.mode}${state.faults[0] ? `: ${state.faults[0].message}` : ''}; it holds or damps safely. Clear it, then continue with --resume.`,
      };
    }
    return cmd;
  };
  const loop = new ControlLoop({ rig, clock, rateHz: o.rateHz, source });
  // Safety events are drained right after each cycle's tick by wrapping tick.
  const tick = rig.tick;
  rig.tick = () => {
    tick();
    const ev = o.rig.takeSafetyEvents();
    if (ev.length > 0) recordSafety(ev);
  };

  const lostCleanups = (o.cameras ?? []).map((cam) =>
    cam.onLost((reason) => {
      fatal ??= {
        end: 'camera-lost',
        sentence: `Camera ${cam.info.name} was lost (${reason}); the take in flight was kept and marked, the follower holds. Fix the camera, then continue with --resume.`,
      };
      marks.push(`camera ${cam.info.name} lost: ${reason}`);
      controls.push('quit', 'camera lost'); // wakes the session
    }),
  );
  const onAbort = (): void => controls.push('quit', 'interrupt');
  o.signal?.addEventListener('abort', onAbort, { once: true });

  const kept: TakeReport[] = [];
  const discarded: (TakeReport & { movedTo: string; reason: string })[] = [];
  let quit = false;
  let episode = o.firstEpisode ?? 0;
  const loopRun = loop.run();
  let loopError: unknown;
  loopRun.catch((e: unknown) => {
    loopError = e;
    fatal ??= { end: 'follower-fault', sentence: `The control loop stopped: ${(e as Error).message}` };
    controls.push('quit', 'loop');
  });

  const toggleSync = (): void => {
    if (follow.state === 'synced' || follow.state === 'engaging') follow.release();
    else follow.engage();
  };

  /** Engages (or waits for the operator to fix what refused it). False: the operator quit or something failed. */
  const ensureSynced = async (): Promise<boolean> => {
    let asked = false;
    let retries = 0;
    for (;;) {
      if (fatal || quit) return false;
      if (follow.state === 'synced') return true;
      if (follow.state !== 'engaging' && !asked) {
        refusal = undefined;
        follow.engage();
        asked = true;
      }
      const a = await controls.next(after(POLL_MS));
      if (a?.action === 'quit') {
        quit = true;
        return false;
      }
      if (a?.action === 'sync') {
        asked = false;
        continue;
      }
      if (refusal !== undefined && /stopped answering|no sample/.test(refusal) && retries < 3) {
        // The leader was silent for a moment (a stalled host): try again by itself before asking.
        retries++;
        refusal = undefined;
        await controls.next(after(300));
        asked = false;
        continue;
      }
      if (refusal !== undefined) {
        log(`${refusal} Press E (or the handle's top button) to engage again, Q to stop.`);
        const refused = refusal;
        refusal = undefined;
        for (;;) {
          if (!controls.attended) {
            // Nobody can press E: waiting would hang a scripted run forever.
            fatal ??= {
              end: 'unattended',
              sentence: `${refused} Nobody can answer (the keyboard's input has ended and no pedal, hand-moved leader or station page is attached), so the session stops here; the takes so far are kept — continue with --resume.`,
            };
            return false;
          }
          const b = await controls.next(after(1000));
          if (fatal) return false;
          if (b?.action === 'quit') {
            quit = true;
            return false;
          }
          if (b?.action === 'sync') break;
        }
        asked = false;
      }
    }
  };

  /** Waits until untilS, handling sync toggles; returns the action that ended the wait early. */
  const waitUntil = async (
    untilS: number,
    countdown?: (leftS: number) => void,
  ): Promise<OperatorAction | undefined> => {
    let lastShown = Infinity;
    for (;;) {
      const left = untilS - clock.nowS();
      if (left <= 0) return undefined;
      if (countdown && Math.ceil(left) < lastShown) {
        lastShown = Math.ceil(left);
        countdown(lastShown);
      }
      const a = await controls.next(after(Math.min(left * 1000, POLL_MS * 4)));
      if (fatal) return 'quit';
      if (!a) continue;
      if (a.action === 'sync') {
        toggleSync();
        continue;
      }
      return a.action;
    }
  };

  try {
    while (episode < o.episodes && !quit && !fatal) {
      o.onPhase?.('engaging', episode);
      if (!(await ensureSynced())) break;
      take = await still(o.openTake(episode));
      o.onPhase?.('take', episode, o.episodeSeconds);
      marks = [];
      const t0 = clock.nowS();
      take.recorder.event(t0, 'phase', 'teleop', `Take of episode ${episode + 1} started.`, {
        phase: 'take',
        episode_index: episode,
        prompt: o.prompt,
      });
      log(
        `Episode ${episode + 1}/${o.episodes} — "${o.prompt}": recording ${o.episodeSeconds} s (Space/→ ends it early, ← or D discards it, Q stops).`,
      );
      const ended = await waitUntil(t0 + o.episodeSeconds);
      if (ended === 'quit') {
        quit = true;
        if (!fatal)
          marks.push(
            o.signal?.aborted ? 'interrupted before its end' : 'ended early by the operator (session stopped)',
          );
      }
      const current = take;
      const recorded = current.recorder;
      recorded.event(
        clock.nowS(),
        'phase',
        'teleop',
        ended === 'discard' ? 'Take discarded by the operator.' : 'Take ended.',
        { phase: 'end', episode_index: episode, discarded: ended === 'discard' },
      );
      take = undefined;
      const takeMarks = [...marks];
      const summary = await still(current.finish(takeMarks));
      const report: TakeReport = { episodeIndex: episode, file: current.file, marks: takeMarks, summary };
      let lastKept: (TakeReport & { handle: TakeHandle }) | undefined;
      if (ended === 'discard') {
        const movedTo = await still(current.discard('discarded by the operator during the take'));
        discarded.push({ ...report, movedTo, reason: 'discarded by the operator during the take' });
        log(`Discarded the take of episode ${episode + 1} (kept aside as ${movedTo}); recording it again.`);
      } else {
        kept.push(report);
        lastKept = { ...report, handle: current };
        log(
          `Kept episode ${episode + 1}: ${current.file}${takeMarks.length ? ` (marked: ${takeMarks.join('; ')})` : ''}.`,
        );
        episode++;
      }
      if (quit || fatal) break;
      if (episode >= o.episodes) break;
      // Reset period: the follower keeps tracking (the operator resets the scene with it), countdown on the terminal.
      o.onPhase?.('reset', episode, o.resetSeconds);
      log(
        `Reset the scene: next episode in ${o.resetSeconds} s (Space/→ starts it now${lastKept ? ', ← or D discards the last take' : ''}, Q stops).`,
      );
      const a = await waitUntil(clock.nowS() + o.resetSeconds, (left) => left <= 5 && log(`  ${left}…`));
      if (a === 'quit') quit = true;
      else if (a === 'discard' && lastKept) {
        const movedTo = await still(lastKept.handle.discard('discarded by the operator in the reset after it'));
        kept.pop();
        discarded.push({ ...lastKept, movedTo, reason: 'discarded by the operator in the reset after it' });
        episode--;
        log(`Discarded the take of episode ${episode + 1} (kept aside as ${movedTo}); recording it again.`);
      }
    }
  } finally {
    if (take) {
      // An error mid-take: its bytes are still finished into a readable file.
      const t = take;
      take = undefined;
      await t.finish([...marks, 'the session stopped with an error']).catch(() => undefined);
    }
    for (const c of lostCleanups) c();
    o.signal?.removeEventListener('abort', onAbort);
    // The follower holds where it is before the loop stops; the caller then deactivates it.
    follow.release();
    const settle = after(20);
    await (typeof settle === 'number' ? new Promise((r) => setTimeout(r, settle)) : settle);
    loop.stop();
    await loopRun.catch(() => undefined);
    try {
      o.rig.hold();
      o.rig.tick();
    } catch {
      // the loop's error (if any) is the one to report
    }
  }
  if (loopError && !fatal) throw loopError;
  if (fatal) log(fatal.sentence);
  const end: SessionEnd = fatal
    ? fatal.end
    : episode >= o.episodes
      ? 'done'
      : o.signal?.aborted
        ? 'interrupted'
        : 'operator';
  return {
    kept,
    discarded,
    end,
    ...(fatal ? { problem: fatal.sentence } : {}),
    nextEpisode: episode,
    loop: loop.stats(),
    safetyEvents: safetyCount,
    operatorSeconds: clock.nowS() - startedS,
  };
}
