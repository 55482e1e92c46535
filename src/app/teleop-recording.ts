/**
 * The `teleop record` flow, callable in-process (the CLI command and the station's Teleop page): a
 * leader drives the follower rig through the 250 Hz loop; one MCAP per kept take, one teleop
 * session in the store, a stopped session resumed at its next episode.
 */
import { mkdirSync, renameSync } from 'node:fs';
import { basename, join, resolve } from 'node:path';
import { UserError } from './command.js';
import { RigError, type Clock, type Rig } from '../rig/contract.js';
import type { Camera } from '../rig/camera.js';
import type { RigContext } from '../rig/registry.js';
import type { RecordingSummary } from '../record/episode-recorder.js';
import { getTask, isTaskId } from '../tasks/registry.js';
import type { Layout, TaskDefinition } from '../tasks/types.js';
import { layoutAt, type LayoutSet } from '../layouts/layout-set.js';
import { StoreError, type Store } from '../store/store.js';
import { readRigConfig } from './station-config.js';
import { clockForRigConfig } from './rig-registry.js';
import { rigCyclesOf } from '../rig/rig-cycle-ring.js';
import { loopStatsMetadata, pickMotorLoopStats } from '../rollout/rig-rollout.js';
import { openStationRecording } from './episode-recording.js';
import { defaultCellTable } from '../emulated-cell/register.js';
import { cellFollowerConfig, createStationRig, rigKindOf, type StationRig } from './station-rig.js';
import type { RigServices } from './services/rig-services.js';
import type { StationConfig } from './station-config.js';
import { openStationCameras } from './station-cameras.js';
import { createLeader, type LeaderSetup } from './leader-registry.js';
import {
  readTrajectoryFile,
  scriptedMotion,
  TrajectoryFileError,
  type HandMotion,
} from '../../drivers/leaders/emulators/operator-hand.js';
import { LeaderFollow } from '../teleop/follow.js';
import { OperatorControls } from '../teleop/operator-controls.js';
import {
  runTeleopSession,
  type TakeHandle,
  type TeleopSessionOptions,
  type TeleopSessionResult,
} from '../teleop/teleop-session.js';
import { openTeleopCameras } from './teleop-cameras.js';

export const DEFAULT_RESET_SECONDS = 10;

export interface TeleopRecordOptions {
  readonly store: Store;
  readonly outDir: string;
  readonly leader: string;
  /** 'cell' or the path of a rig config file (ignored with a station config). */
  readonly follower: string;
  /** The station config (--station-config): its rig is the follower and its cameras are recorded. */
  readonly station?: StationConfig;
  readonly gap?: string;
  readonly cameras: string;
  readonly cameraFps?: number;
  /** A task id (its prompt is used) or a free-text prompt. */
  readonly task: string;
  readonly episodes?: number;
  readonly seconds?: number;
  readonly resetSeconds?: number;
  readonly resume?: boolean;
  readonly layout?: { readonly set: LayoutSet; readonly index: number };
  /** Nothing on the emulated cell's table (system-identification takes: the arms' own motion, no contacts). */
  readonly emptyTable?: boolean;
  readonly rateHz?: number;
  readonly rampS?: number;
  readonly maxEngageGapRad?: number;
  readonly bilateralGain?: number;
  /** Replayed by an emulated leader instead of its scripted motion. */
  readonly trajectory?: string;
  /** How this caller's operator gets a real leader, ending the refusal of an emulated one on real arms (default: the command's flags). */
  readonly realLeaderAdvice?: string;
  /** Keys from here (the terminal in raw mode, or any byte stream). */
  readonly keyboard?: NodeJS.ReadableStream & { isTTY?: boolean; setRawMode?: (raw: boolean) => unknown };
  /** A foot pedal's evdev node. */
  readonly pedal?: string;
  readonly log: (line: string) => void;
  readonly signal?: AbortSignal;
  /** Called once everything is up (tests reach the emulators through it; the station UI pushes its buttons into `controls`). */
  readonly onReady?: (ctx: {
    leader: LeaderSetup;
    rig: Rig;
    cameras: readonly Camera[];
    controls: OperatorControls;
    sessionId: number;
  }) => void;
  /** Where the session is (engaging, a take, the reset), as runTeleopSession reports it. */
  readonly onPhase?: TeleopSessionOptions['onPhase'];
  /** Each take as it is kept or discarded, with its cameras' frame counters (the station's episode list). */
  readonly onTake?: (take: {
    readonly episodeIndex: number;
    readonly file: string;
    readonly state: 'kept' | 'discarded';
    readonly cameraCounters?: RecordingSummary['cameraCounters'];
  }) => void;
  /**
   * Where the follower comes from when something else owns it (the station's rig host, which
   * shows it live and takes the E-stop): `use` runs with that rig and its clock, and the owner
   * keeps it after. Default: a rig created from the follower's config, closed at the end.
   */
  readonly withRig?: <T>(
    table: NonNullable<RigContext['table']>,
    use: (rig: Rig, clock: Clock, signal: AbortSignal, services: RigServices) => Promise<T>,
  ) => Promise<T>;
}

export interface TeleopRecordResult {
  readonly sessionId: number;
  readonly session: TeleopSessionResult;
}

function takeFileName(task: string, episode: number, at = new Date()): string {
  const stamp = at.toISOString().replace(/[-:]/g, '');
  const slug =
    task
      .replace(/[^A-Za-z0-9._-]+/g, '-')
      .replace(/^-+|-+$/g, '')
      .slice(0, 40) || 'teleop';
  return `${stamp}-${slug}-ep${String(episode).padStart(3, '0')}.mcap`;
}

/** The whole `teleop record` flow, callable in-process. */
export async function recordTeleop(o: TeleopRecordOptions): Promise<TeleopRecordResult> {
  const { store, log } = o;
  const outDir = o.outDir;
  let taskId = 'teleop';
  let prompt = o.task;
  let taskDef: TaskDefinition | undefined;
  if (isTaskId(o.task)) {
    taskDef = getTask(o.task);
    taskId = taskDef.id;
    prompt = taskDef.prompt;
  }
  let table: { task: TaskDefinition; layout: Layout } | undefined;
  if (o.emptyTable && o.layout)
    throw new UserError('--empty-table and --layouts both say what is on the table; give one.');
  if (o.emptyTable) {
    table = {
      task: taskDef ?? getTask('bottles-in-the-bin'),
      layout: { index: 0, tier: 1, fixtures: [], objects: [] },
    };
  }
  if (o.layout) {
    try {
      table = { task: getTask(o.layout.set.task), layout: layoutAt(o.layout.set, o.layout.index) };
    } catch (e) {
      throw new UserError((e as Error).message);
    }
    if (!taskDef) {
      taskDef = table.task;
      taskId = taskDef.id;
    }
  }
  // Resume: the stopped session's settings, at its next episode.
  let sessionId = 0;
  let episodes: number;
  let seconds: number;
  let resetSeconds: number;
  let firstEpisode = 0;
  if (o.resume) {
    const s = store.latestStoppedTeleopSession(outDir);
    if (!s)
      throw new UserError(
        `There is no stopped teleop session recording into ${outDir} to resume; start one without --resume.`,
      );
    sessionId = s.sessionId;
    episodes = o.episodes ?? s.episodes;
    seconds = o.seconds ?? s.episodeSeconds;
    resetSeconds = o.resetSeconds ?? s.resetSeconds;
    prompt = s.prompt;
    taskId = s.task;
    firstEpisode = store.listTeleopTakes(sessionId).filter((t) => t.state === 'kept').length;
    if (firstEpisode >= episodes)
      throw new UserError(
        `Teleop session ${sessionId} in ${outDir} already has all ${episodes} episodes; raise --episodes to record more.`,
      );
    store.setTeleopSessionState(sessionId, 'recording');
    log(`Resuming teleop session ${sessionId} at episode ${firstEpisode + 1} of ${episodes}.`);
  } else {
    episodes = o.episodes ?? 10;
    seconds = o.seconds ?? taskDef?.episodeSeconds ?? 30;
    resetSeconds = o.resetSeconds ?? DEFAULT_RESET_SECONDS;
  }

  let hand: HandMotion | undefined;
  if (o.trajectory) {
    if (!o.leader.startsWith('emulated-'))
      throw new UserError(
        '--trajectory is replayed by an emulated leader (--leader emulated-yam or emulated-gello); a real leader moves by hand.',
      );
    try {
      hand = readTrajectoryFile(o.trajectory);
    } catch (e) {
      if (e instanceof TrajectoryFileError) throw new UserError(e.message);
      throw e;
    }
  } else hand = scriptedMotion();
  const rigConfig = o.station
    ? o.station.rig
    : o.follower === 'cell'
      ? cellFollowerConfig(o.gap ?? 'seed:0')
      : await readRigConfig(resolve(o.follower));
  const rigType = String((rigConfig as { type?: unknown }).type);
  // The cell's table is cleared by the emulator (--follower cell, or a yam-cell rig config, e.g. on virtual time).
  const kind = rigKindOf(rigConfig as { type?: unknown });
  if (o.emptyTable && !kind.ownWorld)
    throw new UserError(
      "--empty-table clears the emulated cell's table (--follower cell, or a yam-cell rig config); clear a real table by hand.",
    );
  // An emulated leader moves by a script: on real arms nobody would be holding the leader.
  if (o.leader.startsWith('emulated-') && kind.realArms) {
    throw new UserError(
      `The ${o.leader} leader moves by a script, and would drive the real arms of the ${rigType} rig with nobody at the leader; ${o.realLeaderAdvice ?? "use a real leader (--leader yam:PORT,PORT or gello:PORT,PORT, or the station config's leader)."}`,
    );
  }
  const onTable = table ?? defaultCellTable();
  const settings = { taskId, prompt, episodes, seconds, resetSeconds, firstEpisode, rigType };
  if (o.withRig) {
    return o.withRig(onTable, (rig, clock, ownerSignal, services) =>
      recordOnFollower(
        o,
        { rig, services },
        clock,
        o.signal ? AbortSignal.any([o.signal, ownerSignal]) : ownerSignal,
        hand,
        sessionId,
        settings,
        false,
      ),
    );
  }
  let follower: StationRig;
  let clock: Clock;
  try {
    clock = clockForRigConfig(rigConfig);
    follower = await createStationRig(rigConfig, { clock, signal: o.signal, table: onTable });
  } catch (e) {
    if (e instanceof RigError) throw new UserError(e.message);
    throw e;
  }
  return recordOnFollower(o, follower, clock, o.signal, hand, sessionId, settings, true);
}

/** The take loop on a follower that is up (created here, or lent by the station's rig host). */
async function recordOnFollower(
  o: TeleopRecordOptions,
  { rig, services }: StationRig,
  clock: Clock,
  signal: AbortSignal | undefined,
  hand: HandMotion,
  resumedSessionId: number,
  s: {
    taskId: string;
    prompt: string;
    episodes: number;
    seconds: number;
    resetSeconds: number;
    firstEpisode: number;
    rigType: string;
  },
  closeRig: boolean,
): Promise<TeleopRecordResult> {
  const { store, log, outDir } = o;
  const { taskId, prompt, episodes, seconds, resetSeconds, firstEpisode, rigType } = s;
  let sessionId = resumedSessionId;
  let leaderSetup: LeaderSetup;
  try {
    leaderSetup = createLeader(o.leader, clock, hand);
  } catch (e) {
    if (closeRig) await rig.close?.().catch(() => undefined);
    throw e;
  }
  if (!o.resume) {
    const created = store.createTeleopSession({
      task: taskId,
      prompt,
      leader: o.leader,
      follower: o.follower === 'cell' ? `cell ${o.gap ?? 'seed:0'}` : o.follower,
      cameras: o.cameras,
      episodes,
      episodeSeconds: seconds,
      resetSeconds,
      outDir,
      layoutSetSha256: o.layout?.set.sha256 ?? null,
      layoutIndex: o.layout?.index ?? null,
    });
    sessionId = created.sessionId;
  }
  const controls = new OperatorControls();
  let cams: { cameras: Camera[]; close(): Promise<void> } = { cameras: [], close: async () => {} };
  let result: TeleopSessionResult | undefined;
  let failure: unknown;
  try {
    // Cameras first: they can take seconds to start, and the emulated cell's world runs on the wall
    // clock from the rig's first word to its motors — configure and activate follow each other.
    // A station config that names cameras records those; one made from a rig config alone names
    // none, and the operator's --cameras (or the page's choice) applies.
    if (o.station && o.station.cameras.length > 0) {
      const opened = await openStationCameras(o.station.cameras, {
        renderer: services.cameraRenderer,
        clock,
        source: o.station.source,
      });
      cams = { cameras: [...opened.list], close: () => opened.close() };
    } else cams = await openTeleopCameras(o.cameras, services, clock, o.cameraFps ?? 10);
    if (o.keyboard && !controls.attachKeyboard(o.keyboard))
      log('The terminal cannot be put in raw mode; keys work after Enter.');
    if (o.pedal) controls.attachPedal(o.pedal, (s) => log(s));
    // A hand-moved leader has a person at its buttons; an emulated one has nobody.
    if (!leaderSetup.emulated) controls.attend("the leader's buttons");
    try {
      await leaderSetup.leader.configure();
      await rig.configure();
      // The emulated cell's world may fall behind real time while a busy machine starts up; its
      // fault says to activate again once it caught up (it holds the fault 1 s): up to three tries.
      for (let attempt = 1; ; attempt++) {
        try {
          await rig.activate();
          break;
        } catch (e) {
          if (!(e instanceof RigError && e.fault.kind === 'emulation-behind') || attempt >= 3) throw e;
          log(
            "The emulated cell's world fell behind real time while starting (this machine is busy); activating again once it caught up.",
          );
          await new Promise((r) => setTimeout(r, 1500));
        }
      }
      await leaderSetup.leader.activate();
    } catch (e) {
      throw new UserError((e as Error).message);
    }
    leaderSetup.emulated?.startHand();
    o.onReady?.({ leader: leaderSetup, rig, cameras: cams.cameras, controls, sessionId });
    log(
      `${leaderSetup.leader.description} → ${rigType}; ${cams.cameras.length} camera${cams.cameras.length === 1 ? '' : 's'}; session ${sessionId}, episodes ${firstEpisode + 1}–${episodes} of ${seconds} s, reset ${resetSeconds} s.`,
    );
    const follow = new LeaderFollow({
      leader: leaderSetup.leader,
      rampS: o.rampS,
      maxEngageGapRad: o.maxEngageGapRad,
      bilateralGain: o.bilateralGain,
    });
    const rateHz = o.rateHz ?? 250;
    result = await runTeleopSession({
      rig,
      clock,
      follow,
      controls,
      cameras: cams.cameras,
      episodes,
      firstEpisode,
      episodeSeconds: seconds,
      resetSeconds,
      prompt,
      rateHz,
      log,
      signal,
      ...(o.onPhase ? { onPhase: o.onPhase } : {}),
      openTake: async (episodeIndex): Promise<TakeHandle> => {
        const rigCycles = rigCyclesOf(rig);
        const rec = await openStationRecording({
          store,
          dir: outDir,
          kind: 'teleop',
          fileName: takeFileName(taskId, episodeIndex),
          rigModel: rig.model,
          clock,
          cameras: cams.cameras,
          // A rig thread's every motor cycle goes in the take too, drained off the motors' path.
          ...(rigCycles ? { rigCycles } : {}),
          metadata: {
            kind: 'teleop',
            task: taskId,
            prompt,
            session_id: String(sessionId),
            episode_index: String(episodeIndex),
            leader: o.leader,
            rig: rigType,
            rig_model: rig.model.name,
            layout_set_sha256: o.layout?.set.sha256 ?? '',
            layout_index: o.layout ? String(o.layout.index) : '',
            // What stood on the table: sysid replays only takes whose table was empty.
            table: o.emptyTable ? 'empty' : o.layout ? 'layout' : o.follower === 'cell' ? 'cell-default' : 'unknown',
            control_hz: String(rateHz),
            episode_seconds: String(seconds),
          },
        });
        const takeId = store.startTeleopTake({ sessionId, episodeIndex, recordingId: rec.id, file: rec.file });
        // Where the rig is a world of its own (the emulated cell), how far it fell behind real time
        // during this take: a take recorded on a machine too busy to keep it in real time is not a
        // robot's timing (sysid leaves it out).
        const lagPeakMs = services.lagPeakSinceLastMs;
        lagPeakMs?.();
        let file = rec.file;
        let counters: RecordingSummary['cameraCounters'] | undefined;
        return {
          recorder: rec.recorder,
          get file() {
            return file;
          },
          async finish(marks) {
            const lag: Record<string, string> = lagPeakMs ? { emulation_max_lag_ms: lagPeakMs().toFixed(1) } : {};
            // A rig thread's own motor loop (since the rig was activated) goes with the take.
            const motorLoop = await rig.loopStats?.().catch(() => undefined);
            const loop = motorLoop
              ? loopStatsMetadata({ ...pickMotorLoopStats(motorLoop), measuredBy: 'rig thread' })
              : {};
            const summary = await rec.finish(undefined, {
              outcome: 'kept',
              marks: JSON.stringify(marks),
              ...lag,
              ...loop,
            });
            store.endTeleopTake(takeId, { state: 'kept', marks });
            counters = summary.cameraCounters;
            o.onTake?.({ episodeIndex, file, state: 'kept', cameraCounters: counters });
            return summary;
          },
          async discard(reason) {
            // Every byte kept: the file moves aside, the store says where and why.
            const dir = join(outDir, 'discarded');
            mkdirSync(dir, { recursive: true });
            const to = join(dir, basename(file));
            renameSync(file, to);
            file = to;
            store.endTeleopTake(takeId, { state: 'discarded', discardReason: reason, file: to });
            o.onTake?.({
              episodeIndex,
              file: to,
              state: 'discarded',
              ...(counters ? { cameraCounters: counters } : {}),
            });
            return to;
          },
        };
      },
    });
  } catch (e) {
    failure = e;
  } finally {
    controls.close();
    try {
      rig.hold();
      await rig.deactivate();
    } catch {
      // deactivate on a rig that never activated
    }
    await leaderSetup.leader.deactivate().catch(() => undefined);
    await cams.close().catch(() => undefined);
    await leaderSetup.leader.close().catch(() => undefined);
    if (closeRig) await rig.close?.().catch(() => undefined);
  }
  const done = result?.end === 'done';
  const problem = result?.problem ?? (failure ? (failure as Error).message : null);
  store.setTeleopSessionState(sessionId, done ? 'finished' : 'stopped', problem);
  if (failure) throw failure instanceof StoreError ? new UserError(failure.message) : failure;
  return { sessionId: sessionId, session: result! };
}
