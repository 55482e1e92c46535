/**
 * tandem teleop record — record teleoperated episodes: a leader (YAM + teaching handle, GELLO, or
 * their emulators) drives the follower rig (default: the emulated cell) through the 250 Hz loop;
 * one MCAP per kept episode, one teleop session in the store, --resume continues a stopped one.
 */
import { mkdirSync, renameSync } from 'node:fs';
import { basename, join, resolve } from 'node:path';
import { intOption, numberOption, requireString, UserError, type CliCommand, type CliIo } from '../command.js';
import { RigError, type Clock, type Rig } from '../../rig/contract.js';
import type { Camera } from '../../rig/camera.js';
import type { RigContext } from '../../rig/registry.js';
import type { RecordingSummary } from '../../record/episode-recorder.js';
import { MAX_CONTROL_RATE_HZ } from '../../rig/control-loop.js';
import { CAMERA_NAMES } from '../../policy/contract.js';
import { getTask, isTaskId } from '../../tasks/registry.js';
import type { Layout, TaskDefinition } from '../../tasks/types.js';
import { layoutAt, type LayoutSet } from '../../layouts/layout-set.js';
import { StoreError, type Store } from '../../store/store.js';
import { readRigConfig } from '../station-config.js';
import { clockForRigConfig } from '../rig-registry.js';
import { openCommandStore } from '../station-store.js';
import { rigCyclesOf } from '../../rig/rig-cycle-ring.js';
import { loopStatsMetadata, pickMotorLoopStats } from '../../rollout/rig-rollout.js';
import { openStationRecording } from '../episode-recording.js';
import { readLayoutSetFile } from './layouts.js';
import { defaultCellTable } from '../../emulated-cell/register.js';
import type { CellCameras } from '../../emulated-cell/cell-cameras.js';
import { createStationRig, rigKindOf, type StationRig } from '../station-rig.js';
import type { RigServices } from '../services/rig-services.js';
import { FfmpegCamera } from '../../../drivers/cameras/ffmpeg-camera.js';
import { cameraSourceOf } from '../../../drivers/cameras/camera-config.js';
import { leaderSpecOf, rigConfigWithGrippers, stationConfigFromArgs, type StationConfig } from '../station-config.js';
import { openStationCameras } from '../station-cameras.js';
import { createLeader, type LeaderSetup } from '../leader-registry.js';
import {
  readTrajectoryFile,
  scriptedMotion,
  TrajectoryFileError,
  type HandMotion,
} from '../../../drivers/leaders/emulators/operator-hand.js';
import { LeaderFollow, DEFAULT_MAX_ENGAGE_GAP_RAD, DEFAULT_RAMP_S } from '../../teleop/follow.js';
import { OperatorControls } from '../../teleop/operator-controls.js';
import {
  runTeleopSession,
  type TakeHandle,
  type TeleopSessionOptions,
  type TeleopSessionResult,
} from '../../teleop/teleop-session.js';

export const DEFAULT_RESET_SECONDS = 10;

/** --cameras none | cell | testsrc:N | v4l2:/dev/videoN,… */
export async function openTeleopCameras(
  spec: string,
  services: RigServices,
  clock: Clock,
  fps: number,
): Promise<{ cameras: Camera[]; close(): Promise<void> }> {
  if (spec === 'none') return { cameras: [], close: async () => {} };
  const nowS = (): number => clock.nowS();
  if (spec === 'cell') {
    const renderer = services.cameraRenderer;
    if (!renderer.available)
      throw new UserError(
        '--cameras cell needs the emulated cell as the follower (--follower cell); use testsrc:N or v4l2:/dev/videoN with other rigs.',
      );
    const cams: CellCameras = renderer.render({ fps, nowS, clock });
    const list = CAMERA_NAMES.map((n) => cams.cameras[n]);
    try {
      await Promise.all(list.map((c) => c.open()));
    } catch (e) {
      await cams.close();
      throw new UserError(`The cell's cameras did not start: ${(e as Error).message}`);
    }
    return { cameras: list, close: () => cams.close() };
  }
  let cameras: FfmpegCamera[];
  const t = /^testsrc:(\d+)$/.exec(spec);
  if (t) {
    const n = Number(t[1]);
    if (n < 1 || n > 8) throw new UserError(`--cameras testsrc:N takes 1 to 8 cameras, not ${n}.`);
    cameras = Array.from(
      { length: n },
      (_, i) =>
        new FfmpegCamera(
          { name: CAMERA_NAMES[i] ?? `cam_${i}`, kind: 'testsrc', width: 320, height: 240, fps },
          { nowS },
        ),
    );
  } else if (spec.startsWith('v4l2:')) {
    const devices = spec.slice(5).split(',');
    if (devices.some((d) => !d.startsWith('/dev/')))
      throw new UserError(
        `--cameras v4l2: needs devices under /dev, comma separated (e.g. v4l2:/dev/video0,/dev/video2), not '${spec}'.`,
      );
    cameras = devices.map(
      (device, i) =>
        new FfmpegCamera(
          { name: CAMERA_NAMES[i] ?? `cam_${i}`, kind: 'v4l2', device, width: 640, height: 480, fps },
          { nowS },
        ),
    );
  } else {
    throw new UserError(`--cameras must be none, cell, testsrc:N or v4l2:/dev/videoN[,…], not '${spec}'.`);
  }
  const opened: FfmpegCamera[] = [];
  try {
    for (const c of cameras) {
      await c.open();
      opened.push(c);
    }
  } catch (e) {
    await Promise.all(opened.map((c) => c.close()));
    throw new UserError((e as Error).message);
  }
  return { cameras, close: async () => void (await Promise.all(cameras.map((c) => c.close()))) };
}

/**
 * The cameras a teleop session records, as its session row names them: a station config's own
 * cameras when it names any, else the operator's choice (`--cameras`, or the station page's).
 */
export function teleopCamerasOf(station: StationConfig | undefined, chosen: string): string {
  return station && station.cameras.length > 0
    ? station.cameras.map((c) => `${c.name}=${cameraSourceOf(c)}`).join(',')
    : chosen;
}

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
      ? { type: 'yam-cell', transport: 'slcan', gap: o.gap ?? 'seed:0', replyDeadlineMs: 350 }
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

const HELP = `Usage: tandem teleop record --leader LEADER --task TASK --out DIR [options]

A leader drives the follower through the 250 Hz control loop and its safety supervisor; each take
is one MCAP episode file in DIR (a discarded take is moved to DIR/discarded, never deleted), and
the session is one teleop session in the store. Sync engages at the start (the follower ramps to
the leader over 3 s, or refuses if they are too far apart); between takes a reset period counts down.
Keys (the terminal in raw mode, so it works over SSH): Space/Enter/→ start now or end early,
←/D discard and re-record, E engage/release sync, Q/Esc stop (resume with --resume). Handle
buttons: top = sync, second = next, second held ≥ 0.8 s = discard. A foot pedal (--pedal) sends
the same as keys: A/← discard, B/→/Space next, C sync.
  --leader L          emulated-yam | emulated-gello | yam:PORT[,PORT] (SLCAN adapters; yam:damiao:PORT[,PORT] for
                      Damiao USB-CAN) | gello:PORT[,PORT] (one port per arm, left first; 'tandem leader emulate'
                      serves an emulated one on ptys)
  --follower F        cell (the emulated cell, default) or a rig config file (JSON, e.g. {"type": "yam-can", …})
  --station-config FILE  the station config (docs/station-config.md): its rig is the follower, its cameras
                      are recorded, its leader is the default --leader; an emulated leader is refused
                      on real arms
  --gap seed:N|none   the emulated cell's hidden reality gap (default seed:0)
  --cameras C         none | cell (the emulated cell's three) | testsrc:N | v4l2:/dev/videoN,… (default none)
  --camera-fps F      camera frame rate (default 10)
  --task TASK         a task id (its prompt is recorded) or the prompt itself, e.g. "put the cup on the plate"
  --episodes N        episodes to keep (default 10)
  --seconds S         take length (default the task's, else 30)
  --reset S           reset period between takes (default ${DEFAULT_RESET_SECONDS})
  --out DIR           where the episode files go
  --layouts FILE --layout I   put this layout on the emulated cell's table (and record which it was;
                      \`tandem sysid fit --layouts FILE\` replays it and fits the objects' mass on the takes)
  --empty-table       nothing on the emulated cell's table (takes for \`tandem sysid fit\`)
  --resume            continue the stopped session recording into DIR at its next episode
  --bilateral G       bilateral feedback: the leader pulled toward the follower with kp × G (0.1–0.2)
  --ramp-s S          engage ramp (default ${DEFAULT_RAMP_S}); --max-gap-rad R refuses beyond (default ${DEFAULT_MAX_ENGAGE_GAP_RAD})
  --trajectory FILE   an emulated leader replays this joint trajectory (JSON) instead of its scripted motion
  --pedal PATH        a foot pedal's evdev node (/dev/input/eventN, or /dev/input/by-id/…-event-kbd)
  --rate HZ           control rate (default 250)
  --json              print the summary as JSON`;

export const teleopRecordCommand: CliCommand = {
  path: ['teleop', 'record'],
  summary:
    'record teleoperated episodes: a leader arm drives the follower, one MCAP per kept take, a teleop session in the store',
  help: HELP,
  options: {
    leader: { type: 'string' },
    follower: { type: 'string' },
    'station-config': { type: 'string' },
    gap: { type: 'string' },
    cameras: { type: 'string' },
    'camera-fps': { type: 'string' },
    task: { type: 'string' },
    episodes: { type: 'string' },
    seconds: { type: 'string' },
    reset: { type: 'string' },
    out: { type: 'string', short: 'o' },
    layouts: { type: 'string' },
    layout: { type: 'string' },
    'empty-table': { type: 'boolean' },
    resume: { type: 'boolean' },
    bilateral: { type: 'string' },
    'ramp-s': { type: 'string' },
    'max-gap-rad': { type: 'string' },
    trajectory: { type: 'string' },
    pedal: { type: 'string' },
    rate: { type: 'string' },
    json: { type: 'boolean' },
  },
  async run(args, io: CliIo) {
    const str = (name: string): string | undefined =>
      typeof args.values[name] === 'string' ? (args.values[name] as string) : undefined;
    const station =
      typeof args.values['station-config'] === 'string' ? await stationConfigFromArgs(args.values, io.cwd) : undefined;
    if (station && (str('follower') !== undefined || str('cameras') !== undefined))
      throw new UserError('--station-config names the follower and the cameras; leave out --follower and --cameras.');
    const leader = str('leader') ?? (station?.leader ? leaderSpecOf(station.leader) : requireString(args, 'leader'));
    const outDir = resolve(io.cwd, requireString(args, 'out'));
    const resume = args.values.resume === true;
    const task = resume ? (str('task') ?? '') : requireString(args, 'task');
    let layout: TeleopRecordOptions['layout'];
    if (str('layouts') !== undefined)
      layout = {
        set: readLayoutSetFile(io, str('layouts')!).set,
        index: intOption(args, 'layout', undefined, 0, 1_000_000),
      };
    const opt = (name: string, lo: number, hi: number): number | undefined =>
      args.values[name] === undefined ? undefined : numberOption(args, name, undefined, lo, hi);
    const store = openCommandStore(args.values, io);
    const stdin = process.stdin;
    try {
      const { sessionId, session } = await recordTeleop({
        store,
        outDir,
        leader,
        follower: station
          ? station.source
          : str('follower') === undefined || str('follower') === 'cell'
            ? 'cell'
            : resolve(io.cwd, str('follower')!),
        ...(station ? { station: { ...station, rig: rigConfigWithGrippers(station, store) } } : {}),
        gap: str('gap'),
        cameras: teleopCamerasOf(station, str('cameras') ?? 'none'),
        cameraFps: opt('camera-fps', 1, 60),
        task,
        episodes: args.values.episodes === undefined ? undefined : intOption(args, 'episodes', undefined, 1, 100_000),
        seconds: opt('seconds', 0.5, 3600),
        resetSeconds: opt('reset', 0, 3600),
        resume,
        layout,
        emptyTable: args.values['empty-table'] === true,
        rateHz: opt('rate', 10, MAX_CONTROL_RATE_HZ),
        rampS: opt('ramp-s', 0.5, 30),
        maxEngageGapRad: opt('max-gap-rad', 0.05, 2),
        bilateralGain: opt('bilateral', 0.05, 0.3),
        trajectory: str('trajectory') ? resolve(io.cwd, str('trajectory')!) : undefined,
        keyboard: stdin,
        pedal: str('pedal'),
        log: (line) => io.err(`${line}\n`),
        signal: io.signal,
      });
      const summary = {
        sessionId,
        end: session.end,
        problem: session.problem ?? null,
        kept: session.kept.map((k) => ({
          episode: k.episodeIndex,
          file: k.file,
          marks: k.marks,
          messages: k.summary.messages,
        })),
        discarded: session.discarded.map((d) => ({ episode: d.episodeIndex, file: d.movedTo, reason: d.reason })),
        nextEpisode: session.nextEpisode,
        loopHz: Math.round(session.loop.achievedHz),
        safetyEvents: session.safetyEvents,
      };
      if (args.values.json) io.out(`${JSON.stringify(summary)}\n`);
      else {
        io.out(
          `Teleop session ${sessionId}: ${session.kept.length} episode${session.kept.length === 1 ? '' : 's'} kept, ${session.discarded.length} discarded` +
            (session.end === 'done'
              ? '; done.\n'
              : `; stopped at episode ${session.nextEpisode + 1} — continue with --resume.\n`) +
            session.kept
              .map((k) => `  ${k.file}${k.marks.length ? `  (marked: ${k.marks.join('; ')})` : ''}\n`)
              .join('') +
            (session.problem ? `${session.problem}\n` : ''),
        );
      }
      return session.end === 'done' ? 0 : session.end === 'interrupted' || session.end === 'operator' ? 130 : 1;
    } finally {
      if (stdin.isTTY) stdin.setRawMode?.(false);
      stdin.pause();
      store.close();
    }
  },
};

export const commands: readonly CliCommand[] = [teleopRecordCommand];
