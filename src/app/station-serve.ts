/**
 * `npm start`: the station stays up and serves its API and operator UI on loopback. This file
 * composes the concrete parts the server only knows by interface — the configured rig (with the
 * YamCanRig's motor reports and the emulated cell's numbers), rollouts through the same code as
 * `tandem rig rollout`, the store — and shuts them down in order: rig damped, store closed.
 */
import { EPISODE_CONTROL_HZ } from '../rollout/run-episode.js';
import type { Clock, Rig } from '../rig/contract.js';
import { RigError } from '../rig/contract.js';
import { layoutAt } from '../layouts/layout-set.js';
import { LayoutSetError } from '../layouts/errors.js';
import { getTask, isTaskId } from '../tasks/registry.js';
import { knownPolicySpecs } from '../rollout/policy-registry.js';
import type { Store } from '../store/store.js';
import {
  TELEOP_LEADERS,
  type TeleopChoices,
  type CalibrationInUse,
  type CellStatus,
  type MotorStatus,
  type RunRolloutRequest,
} from '../server/api-types.js';
import { RigHost, type RigParts } from '../server/rig-host.js';
import { ApiRefusal } from '../server/request-checks.js';
import { StationServer } from '../server/station-server.js';
import type { PreparedRollout, RolloutRunner } from '../server/single-rollouts.js';
import { buildUi } from '../server/ui-bundle.js';
import { YamCanRig } from '../../drivers/yam/yam-can-rig.js';
import { describeStatus, isFaultStatus, statusName } from '../../drivers/damiao/protocol.js';
import { EMULATED_CELL_KIND } from '../emulated-cell/cell-truth.js';
import { SCRIPTED_OPERATOR } from './session-operators.js';
import { UserError } from './command.js';
import { openStationStore } from './station-store.js';
import { clockForRigConfig } from './rig-registry.js';
import { createStationRig, rigKindOf } from './station-rig.js';
import type { RigServices } from './services/rig-services.js';
import { preflight } from './preflight.js';
import {
  cellIoSourceOf,
  leaderSpecOf,
  readRigConfig,
  rigConfigWithGrippers,
  stationConfigOfRig,
  type StationConfig,
} from './station-config.js';
import { openRigPolicy, rolloutOnRig } from './rollout-on-rig.js';
import { storeRolloutOnRig } from './store-rig-rollout.js';
import { defaultEpisodesDir, unfinishedRecordings } from './episode-recording.js';
import { SessionHost, type SessionParts } from '../server/session-host.js';
import { RigSessionRunner } from './session-runner.js';
import { SessionTakeover } from './session-takeover.js';
import { measuredCost } from './measured-rollout-cost.js';
import { sessionInterlocks } from './session-interlocks.js';
import { TeleopHost, type TeleopParts } from '../server/teleop-host.js';
import { recordTeleop, teleopCamerasOf } from './commands/teleop.js';
import { join, resolve } from 'node:path';
import { rmSync, writeFileSync } from 'node:fs';
import type { CellIo } from './cell-io.js';
import type { PlacementGate, SessionProjector } from '../session/ports.js';
import { DEFAULT_PLACEMENT_THRESHOLDS } from '../session/placement-gate.js';
import { stationPlacementGate } from './placement-check.js';
import { openStationProjector, type StationProjector } from './station-projector.js';
import { DEFAULT_SIM_CALIBRATION, SIM_CALIBRATION_KIND, simCalibrationHash } from '../sim/calibration.js';
import { cameraCalibrationSha256, DEFAULT_CAMERA_CALIBRATION } from '../sim/render/camera-calibration.js';
import { FoxgloveLiveError, FoxgloveLiveServer } from '../server/foxglove-live.js';
import type { FoxgloveListen } from './foxglove-options.js';

const num = (x: number): number | null => (Number.isFinite(x) ? x : null);

/** How often the Session view's interlock words are re-read (the rig's own stop does not wait for this). */
const SAFETY_REFRESH_MS = 250;

/** Per-motor reports of a YamCanRig (hardware or the emulated cell); other rigs report none. */
function motorReports(rig: Rig, nowS: number): MotorStatus[] {
  if (!(rig instanceof YamCanRig)) return [];
  const out: MotorStatus[] = [];
  for (const side of rig.arms) {
    const link = rig.link(side)!;
    link.motors.forEach((m, index) => {
      const heard = m.lastReplyS === m.lastReplyS;
      const f = m.feedback;
      out.push({
        name: m.name,
        arm: side,
        index,
        canId: m.id,
        model: m.model,
        positionRad: heard ? num(m.positionRad) : null,
        velocityRadS: heard ? num(f.velocityRadS) : null,
        torqueNm: heard ? num(f.torqueNm) : null,
        mosfetTempC: heard ? num(f.mosfetTempC) : null,
        rotorTempC: heard ? num(f.rotorTempC) : null,
        status: heard ? (isFaultStatus(f.status) ? describeStatus(f.status) : statusName(f.status)) : 'not heard yet',
        fault: heard && isFaultStatus(f.status),
        lastReplyAgeS: heard ? Math.max(0, nowS - m.lastReplyS) : null,
      });
    });
  }
  return out;
}

function cellStatus(services: RigServices): CellStatus | null {
  const w = services.world();
  if (!w) return null;
  return {
    task: w.task,
    tier: w.tier,
    objects: w.objects,
    busyFraction: w.busyFraction,
    marginX: num(w.marginX),
    maxLagMs: w.maxLagMs,
    behindEvents: w.behindEvents,
  };
}

/** The calibrations the station runs with now, for the Rig page (the store's own list is added by the server). */
function calibrationsInUse(
  host: RigHost<RigServices>,
  rigType: string,
  store: Store,
  projector: StationProjector,
): () => CalibrationInUse[] {
  const sim = DEFAULT_SIM_CALIBRATION;
  const simSha = simCalibrationHash(sim);
  const cameras = DEFAULT_CAMERA_CALIBRATION;
  const camerasSha = cameraCalibrationSha256(cameras);
  return () => {
    const model = host.model();
    const fitted = store.latestCalibration(SIM_CALIBRATION_KIND);
    return [
      {
        what: 'rig model',
        name: model?.name ?? 'not known until the rig is up',
        version: null,
        sha256: null,
        note: `the ${rigType} rig config's model: joint limits, gains, links`,
      },
      {
        what: 'sim twin physics',
        name: sim.name,
        version: sim.version,
        sha256: simSha,
        note:
          fitted && fitted.sha256 !== simSha
            ? `the default; the store's newest (v${fitted.version}, ${fitted.sha256.slice(0, 12)}…) runs where a sweep or report names it (--calibration)`
            : 'the default; a sweep or report may name another (--calibration)',
      },
      {
        what: 'sim cameras',
        name: cameras.name,
        version: cameras.version,
        sha256: camerasSha,
        note: 'intrinsics and mounts of cam_high and the wrist cameras',
      },
      projector.calibration
        ? {
            what: 'projector',
            name: 'projector homography',
            version: projector.calibration.version,
            sha256: projector.calibration.sha256,
            note: projector.feed.state().description,
          }
        : { what: 'projector', name: 'none', version: null, sha256: null, note: projector.feed.state().description },
    ];
  };
}

/** Counts the loop's waits: runEpisode waits once per control step, so this is its progress. */
class StepCountingClock implements Clock {
  readonly passesWhileAwaiting: boolean | undefined;
  private waits = 0;
  constructor(
    private readonly inner: Clock,
    private readonly onSteps: (steps: number) => void,
  ) {
    this.passesWhileAwaiting = inner.passesWhileAwaiting;
  }
  nowS(): number {
    return this.inner.nowS();
  }
  async waitUntil(tS: number): Promise<void> {
    await this.inner.waitUntil(tS);
    this.waits += 1;
    this.onSteps(this.waits);
  }
}

function rolloutRunner(
  store: Store,
  host: RigHost<RigServices>,
  station: StationConfig,
  cwd: string,
  episodesDir: string,
): RolloutRunner {
  return {
    async prepare(req: RunRolloutRequest): Promise<PreparedRollout> {
      const set = store.loadLayoutSet(req.layoutSet);
      if (!set)
        throw new ApiRefusal(
          400,
          `There is no layout set ${req.layoutSet.slice(0, 12)}… in the store; sample one on the Rollouts page or run one of its rollouts with 'tandem rig rollout'.`,
        );
      let layout;
      try {
        layout = layoutAt(set, req.layout);
      } catch (e) {
        if (e instanceof LayoutSetError) throw new ApiRefusal(400, e.message);
        throw e;
      }
      const task = getTask(set.task);
      const seconds = req.seconds ?? task.episodeSeconds;
      const seed = req.seed ?? 0;
      let policy;
      try {
        policy = await openRigPolicy(req.policy, { cwd });
      } catch (e) {
        if (e instanceof UserError) throw new ApiRefusal(400, e.message);
        throw e;
      }
      const rateHz = EPISODE_CONTROL_HZ;
      return {
        policy: req.policy,
        layoutSet: set.sha256,
        layout: req.layout,
        seconds,
        totalSteps: Math.round(seconds * rateHz),
        async run(onSteps, onPhase) {
          try {
            const run = await host.forRollout({ task, layout, placementSeed: seed }, (rig, clock, signal, services) => {
              onPhase(`The rig is up with layout ${req.layout} on its table; starting ${policy.info.name}.`);
              // Scored from the table where the rig's services can (the emulated cell), unless the request says otherwise.
              const scoreFromCell = req.scoreFromCell ?? services.endStateScorer.available;
              return rolloutOnRig({
                rig,
                services,
                rigType: host.type,
                station,
                policy,
                task,
                layout,
                seconds,
                rateHz,
                seed,
                scoreFromCell,
                blankCameras: false,
                signal,
                clock: new StepCountingClock(clock, onSteps),
                log: () => {},
                record: { store, dir: episodesDir, spec: req.policy, set },
              });
            });
            const e = run.result.episode;
            host.keepEvents(e.safetyEvents);
            const { rolloutId } = await storeRolloutOnRig(store, { spec: req.policy, policy: policy.info, set }, run);
            const score = e.status === 'valid' ? run.score : undefined;
            const what =
              e.status !== 'valid'
                ? `is ${e.status}: ${e.reason ?? ''}`
                : score
                  ? `scored ${score.progress.toFixed(2)} by the ${SCRIPTED_OPERATOR}: ${score.summary}`
                  : 'is valid and awaits an operator score.';
            return {
              rolloutId,
              status: e.status,
              progress: score?.progress ?? null,
              scoreSummary: score?.summary ?? null,
              message: `Rollout ${rolloutId} ${what}${e.error ? ` Policy error: ${e.error}` : ''}`,
            };
          } catch (e) {
            if (e instanceof RigError)
              throw new UserError(`The rig (${host.type}) failed during the rollout: ${e.message}`, 1);
            throw e;
          } finally {
            await policy.close?.();
          }
        },
      };
    },
  };
}

/** The cell's interlocks in the session's words: the PLC's reading now, or that there is no cell I/O. */
function interlockReading(cellIo: CellIo): { open: boolean; words: string } {
  const c = cellIo.plc.current();
  return c.open
    ? {
        open: true,
        words: `OPEN — ${(c.reason ?? 'an interlock of the cell is open').replace(/\.$/, '')}; nothing starts until it closes`,
      }
    : {
        open: false,
        words: `closed (cell PLC ${cellIo.config.endpointUrl}): e-stop circuit, door and light curtain report safe`,
      };
}

function interlockWords(cellIo: CellIo | undefined): () => string {
  if (!cellIo) return () => 'no cell I/O configured: the station E-STOP stops the arms';
  return () => interlockReading(cellIo).words;
}

/**
 * The Session view's parts: the plan's policies on the station's own rig (the rig host owns it,
 * shows it live, takes the E-stop), the cell's interlocks and tower light, the projector.
 */
function sessionParts(
  store: Store,
  host: RigHost<RigServices>,
  station: StationConfig,
  cwd: string,
  episodesDir: string,
  cellIo: CellIo | undefined,
  projector: SessionProjector | undefined,
  placement: PlacementGate,
): SessionParts {
  return {
    placement,
    interlocks: interlockWords(cellIo),
    ...(cellIo ? { blocked: sessionInterlocks(cellIo.plc).blocked } : {}),
    ...(projector ? { projector } : {}),
    cost: () => measuredCost(store),
    async openRunner(plan, set, log) {
      try {
        return await RigSessionRunner.open(
          {
            station,
            store,
            episodesDir,
            set,
            rateHz: EPISODE_CONTROL_HZ,
            lookAtTable: false,
            blankCameras: false,
            blind: plan.blind,
            ...(cellIo ? { cellIo } : {}),
            log,
            // The station config's leader takes over in every session rollout (the Session page's E and button).
            ...(station.leader ? { takeover: new SessionTakeover({ spec: leaderSpecOf(station.leader), log }) } : {}),
            withRig: (table, use) => host.forRollout(table, use),
          },
          plan.policies.map((p) => p.spec),
          { cwd },
        ).then(async (runner) => {
          try {
            await preflight({
              station,
              policies: plan.policies.map((p) => ({
                ...runner.policyInfo(p.spec)!,
                ...(plan.blind ? { name: p.label } : {}),
              })),
              blankCameras: false,
            });
          } catch (e) {
            await runner.close();
            throw e;
          }
          return runner;
        });
      } catch (e) {
        if (e instanceof UserError) throw new ApiRefusal(400, e.message);
        throw e;
      }
    },
  };
}

/**
 * What the Teleop page offers: the station config's leader when it names one, the script-moved
 * emulated leaders only on an emulated rig (nobody would hold them on real arms), and the config's
 * cameras when it names any (every take records those).
 */
function teleopChoices(station: StationConfig | undefined, rigType: string): TeleopChoices {
  const leaders: { value: TeleopChoices['leaders'][number]['value']; words: string }[] = [];
  const l = station?.leader;
  if (l) {
    const kind =
      l.kind === 'yam'
        ? 'YAM leader + teaching handle'
        : l.kind === 'gello'
          ? 'GELLO'
          : `${l.kind} (moves by a script)`;
    const ports = l.kind.startsWith('emulated-')
      ? ''
      : ` on ${l.ports.join(', ')}${l.kind === 'yam' ? ` (${l.transport === 'damiao' ? 'Damiao USB-CAN' : 'SLCAN'})` : ''}`;
    leaders.push({ value: 'station', words: `the station's ${kind}${ports}` });
  }
  if (!rigKindOf({ type: rigType }).realArms)
    leaders.push(
      { value: 'emulated-yam', words: 'emulated YAM leader + teaching handle' },
      { value: 'emulated-gello', words: 'emulated GELLO' },
    );
  const cameras = station && station.cameras.length > 0 ? station.cameras.map((c) => c.name).join(', ') : null;
  return { leaders, cameras };
}

/**
 * The Teleop view's recorder: `tandem teleop record`'s own flow (recordTeleop) with the station's
 * rig as the follower, takes in <data dir>/teleop, the UI's buttons in its controls queue; a
 * stored layout on the cell's table, and `--resume` of the newest stopped session there.
 */
function teleopParts(
  store: Store,
  host: RigHost<RigServices>,
  follower: string,
  dataDir: string,
  station: StationConfig | undefined,
): TeleopParts {
  const outDir = join(dataDir, 'teleop');
  // The station config's own leader, as the session row names it (its ports).
  const stationLeader = station?.leader ? leaderSpecOf(station.leader) : undefined;
  // How recordTeleop names this follower in the session row (a resumed session must be on the same one).
  const recordedFollower = follower === 'cell' ? 'cell seed:0' : follower;
  const layoutOf = (sha: string, index: number) => {
    const set = store.loadLayoutSet(sha);
    if (!set)
      throw new ApiRefusal(
        400,
        `There is no layout set ${sha.slice(0, 12)}… in the store; sample or upload one on the Rollouts page.`,
      );
    if (!Number.isInteger(index) || index < 0 || index >= set.layouts.length)
      throw new ApiRefusal(
        400,
        `Layout set ${sha.slice(0, 12)}… has layouts 0 to ${set.layouts.length - 1}; there is no layout ${index}.`,
      );
    return { set, index };
  };
  return {
    resumable() {
      const s = store.latestStoppedTeleopSession(outDir);
      if (!s) return null;
      const kept = store.listTeleopTakes(s.sessionId).filter((t) => t.state === 'kept').length;
      const cli = `carry it on with: tandem teleop record --resume --out ${outDir}`;
      let blocked: string | null = null;
      if (!(TELEOP_LEADERS as readonly string[]).includes(s.leader) && s.leader !== stationLeader)
        blocked = `Teleop session ${s.sessionId} was led by '${s.leader}', which is not this station's leader${stationLeader ? ` (${stationLeader})` : ''}; ${cli} --leader ${s.leader}.`;
      else if (!/^(none|cell|testsrc:[1-8])$/.test(s.cameras))
        blocked = `Teleop session ${s.sessionId} records cameras '${s.cameras}', which the station page does not open; ${cli} --cameras ${s.cameras}.`;
      else if (s.follower !== recordedFollower)
        blocked = `Teleop session ${s.sessionId} was recorded on follower '${s.follower}', not on this station's rig ('${recordedFollower}'); ${cli} --follower ….`;
      else if (s.layoutSetSha256 !== null && !store.loadLayoutSet(s.layoutSetSha256))
        blocked = `Teleop session ${s.sessionId} had layout set ${s.layoutSetSha256.slice(0, 12)}… on the table, which is not in the store; upload it on the Rollouts page first.`;
      return {
        sessionId: s.sessionId,
        task: s.task,
        prompt: s.prompt,
        kept,
        episodes: s.episodes,
        seconds: s.episodeSeconds,
        resetSeconds: s.resetSeconds,
        leader: s.leader,
        cameras: s.cameras,
        layoutSet: s.layoutSetSha256,
        layout: s.layoutIndex,
        startedAt: s.startedAt,
        blocked,
      };
    },
    async record(req, hooks, resume) {
      const layout =
        req.layoutSet !== undefined && req.layout !== undefined ? layoutOf(req.layoutSet, req.layout) : undefined;
      if (layout && isTaskId(req.task) && req.task !== layout.set.task)
        throw new ApiRefusal(
          400,
          `Layout set ${layout.set.sha256.slice(0, 12)}… is drawn for ${layout.set.task}, not ${req.task}; pick a ${req.task} set, or that task.`,
        );
      if (resume && store.latestStoppedTeleopSession(outDir)?.sessionId !== resume.sessionId)
        throw new ApiRefusal(
          409,
          `Teleop session ${resume.sessionId} is no longer the one to resume; reload the page.`,
        );
      if (req.leader === 'station' && stationLeader === undefined)
        throw new ApiRefusal(
          400,
          "This station's config names no leader; add 'leader' to the station config (docs/station-config.md) and restart the station.",
        );
      try {
        const r = await recordTeleop({
          store,
          outDir,
          leader: req.leader === 'station' ? stationLeader! : req.leader,
          follower,
          // A station config names the follower's rig and the cameras every take records.
          ...(station ? { station } : {}),
          cameras: teleopCamerasOf(station, req.cameras),
          cameraFps: 5,
          task: req.task,
          episodes: req.episodes,
          seconds: req.seconds,
          ...(req.resetSeconds !== undefined ? { resetSeconds: req.resetSeconds } : {}),
          ...(layout ? { layout } : {}),
          ...(resume ? { resume: true } : {}),
          log: hooks.log,
          signal: hooks.signal,
          onReady: ({ controls, sessionId }) => {
            controls.attend('the station UI');
            hooks.ready(sessionId, (action) => controls.push(action, 'the station UI'));
          },
          onPhase: hooks.phase,
          onTake: hooks.take,
          withRig: (table, use) => host.forRollout(table, use),
          realLeaderAdvice: stationLeader
            ? `pick the station's own leader (${stationLeader}) on this page.`
            : "name the real leader in the station config ('leader', docs/station-config.md), restart the station with --station-config FILE and pick it on this page.",
        });
        return {
          sessionId: r.sessionId,
          end: r.session.end,
          ...(r.session.problem ? { problem: r.session.problem } : {}),
        };
      } catch (e) {
        if (e instanceof UserError) throw new ApiRefusal(400, e.message);
        throw e;
      }
    },
  };
}

export interface ServeOptions {
  readonly dataDir: string;
  /** The station config (--station-config); without one, the rig config file (or the embedded default) alone. */
  readonly station?: StationConfig;
  readonly rigConfigFile?: string;
  readonly port: number;
  readonly cwd: string;
  readonly signal: AbortSignal;
  /** The one line with the URL, then nothing but problems. */
  log(line: string): void;
  /** Called once the station listens, with the URL to open (token included): the Electron shell opens its window on it. */
  onListening?(url: string): void;
  /** A calibration from 'tandem projector calibrate': sessions project each layout's footprints with it. */
  readonly projectorCalibrationFile?: string;
  /** HOST[:PORT] of a PJLink projector, AV-muted for every blank. */
  readonly pjlink?: string;
  /** The cell PLC's e-stop and interlocks over OPC UA (docs/cell-io.md): the rig stops when one opens. */
  readonly cellIoFile?: string;
  /** $TANDEM_PJLINK_PASSWORD. */
  readonly env?: NodeJS.ProcessEnv;
  /** Every projector frame as it goes out (the Electron shell's projector window); null is black. */
  onProjectorFrame?(png: Buffer | null): void;
  /** Serve the live rig state to Foxglove there too (off when absent: no port opened). */
  readonly foxglove?: FoxgloveListen;
}

/** TANDEM_REQUEST_TIMEOUT_MS: how long a request's headers and body may take to arrive (default 30 s). */
function requestTimeoutOf(env: NodeJS.ProcessEnv): { requestTimeoutMs?: number } {
  const text = env.TANDEM_REQUEST_TIMEOUT_MS;
  if (text === undefined || text === '') return {};
  const ms = Number(text);
  if (!Number.isInteger(ms) || ms < 100 || ms > 3_600_000)
    throw new UserError(`TANDEM_REQUEST_TIMEOUT_MS must be milliseconds from 100 to 3600000, not '${text}'.`);
  return { requestTimeoutMs: ms };
}

async function serveFoxglove(listen: FoxgloveListen, host: RigHost<RigServices>): Promise<FoxgloveLiveServer> {
  try {
    const live = new FoxgloveLiveServer({
      source: host,
      port: listen.port,
      host: listen.host,
      allowRemote: listen.allowRemote,
      allowedOrigins: listen.allowedOrigins,
      name: `tandem station (${host.type})`,
      metadata: { rigType: host.type },
    });
    await live.listen().catch(async (e: unknown) => {
      await live.close();
      throw e;
    });
    return live;
  } catch (e) {
    if (e instanceof FoxgloveLiveError) throw new UserError(e.message);
    const code = (e as NodeJS.ErrnoException).code;
    if (code === 'EADDRINUSE')
      throw new UserError(
        `The Foxglove port ${listen.port} is taken (a ROS foxglove_bridge?); pick another with --foxglove-port, or 0 for any.`,
      );
    if (code === 'EADDRNOTAVAIL')
      throw new UserError(
        `This machine has no address ${listen.host} to serve the Foxglove live view on; use 127.0.0.1.`,
      );
    throw e;
  }
}

/** How the embedded default (no config given) names itself; teleop records it as the cell follower. */
const DEFAULT_STATION_SOURCE = 'the embedded default (the emulated cell)';

/** Where a running station's address (with its launch token) is kept for the operator: the data folder, readable by its owner only. */
export const STATION_ADDRESS_FILE = 'station-address.txt';

function writeStationAddress(dataDir: string, url: string): string {
  const file = join(dataDir, STATION_ADDRESS_FILE);
  writeFileSync(file, `${url}\n`, { mode: 0o600 });
  return file;
}

/** Serves until the signal aborts, then damps the rig and closes the store. */
export async function serveStation(opts: ServeOptions): Promise<void> {
  const configured =
    opts.station ??
    stationConfigOfRig(await readRigConfig(opts.rigConfigFile), opts.rigConfigFile ?? DEFAULT_STATION_SOURCE);
  const store = openStationStore(opts.dataDir);
  let host: RigHost<RigServices> | undefined;
  let server: StationServer | undefined;
  let sessions: SessionHost | undefined;
  let placement: ReturnType<typeof stationPlacementGate> | undefined;
  let teleop: TeleopHost | undefined;
  let cellIo: CellIo | undefined;
  let safetyTimer: NodeJS.Timeout | undefined;
  let live: FoxgloveLiveServer | undefined;
  let addressFile: string | undefined;
  try {
    const station: StationConfig = { ...configured, rig: rigConfigWithGrippers(configured, store) };
    const rigConfig = station.rig;
    const cellIoFrom = cellIoSourceOf(
      station,
      opts.cellIoFile === undefined ? undefined : resolve(opts.cwd, opts.cellIoFile),
    );
    const projectorFile = opts.projectorCalibrationFile ?? station.projector?.calibration;
    const pjlink = opts.pjlink ?? station.projector?.pjlink;
    const env = opts.env ?? {};
    // node-opcua loads only when the station is asked for cell I/O (seconds of start-up otherwise).
    // Opened before the rig: its safety supervisor reads the interlock from the first cycle.
    if (cellIoFrom !== undefined)
      cellIo = await (await import('./cell-io.js')).openCellIo(cellIoFrom, {
        dataDir: opts.dataDir,
        controlHz: EPISODE_CONTROL_HZ,
        log: opts.log,
      });
    const projector = await openStationProjector({
      ...(projectorFile !== undefined ? { calibrationFile: projectorFile } : {}),
      ...(pjlink !== undefined ? { pjlink } : {}),
      cwd: opts.cwd,
      env,
      store,
      say: opts.log,
    });
    if (opts.onProjectorFrame) {
      const show = opts.onProjectorFrame;
      projector.feed.onChange((s) => show(s.showing === 'layout' ? projector.feed.frame() : null));
    }
    const interlock = cellIo?.plc;
    const parts: RigParts<RigServices> = {
      type: String(rigConfig.type),
      clock: () => clockForRigConfig(rigConfig),
      create: async (context) =>
        await createStationRig(rigConfig, { ...context, signal: opts.signal, ...(interlock ? { interlock } : {}) }),
      motors: motorReports,
      cell: cellStatus,
      ...(cellIo ? { interlock: () => interlockReading(cellIo!) } : {}),
      // Object and fixture poses where something tracks them (the emulated cell's world: a rehearsal view).
      bodies: (services) => services.bodies(),
    };
    host = new RigHost(parts);
    try {
      await host.start();
    } catch (e) {
      if (e instanceof RigError) throw new UserError(e.message);
      throw e;
    }
    const ui = await buildUi();
    // Code policies plan from object poses only a rig whose services see them has (the emulated
    // cell's world): on any other rig the rollout form neither suggests nor starts with one (it would be refused).
    const seesObjects = host.rigServices()?.objectPoses.available === true;
    const policySpecs = knownPolicySpecs().filter((s) => seesObjects || !s.startsWith('code:'));
    placement = stationPlacementGate(station, {
      thresholds: { ...DEFAULT_PLACEMENT_THRESHOLDS, ...station.placementCheck },
    });
    sessions = new SessionHost(
      store,
      sessionParts(
        store,
        host,
        station,
        opts.cwd,
        defaultEpisodesDir(opts.dataDir),
        cellIo,
        projector.session,
        placement.gate,
      ),
    );
    teleop = new TeleopHost(
      store,
      teleopParts(
        store,
        host,
        opts.rigConfigFile
          ? resolve(opts.cwd, opts.rigConfigFile)
          : opts.station && opts.station.source !== DEFAULT_STATION_SOURCE
            ? opts.station.source
            : 'cell',
        opts.dataDir,
        opts.station ? station : undefined,
      ),
    );
    server = new StationServer({
      ...(station.simDrift ? { simDrift: station.simDrift } : {}),
      sessions,
      teleop,
      projector: projector.feed,
      calibrationsInUse: calibrationsInUse(host, parts.type, store, projector),
      store,
      rig: host,
      rollouts: rolloutRunner(store, host, station, opts.cwd, defaultEpisodesDir(opts.dataDir)),
      ui,
      info: {
        dataDir: opts.dataDir,
        startedAt: new Date().toISOString(),
        policySpecs,
        defaultPolicy: seesObjects ? 'code:bottles-in-the-bin' : '',
        teleop: teleopChoices(opts.station ? station : undefined, parts.type),
      },
      views: {
        policy: (id) => store.getPolicy(id),
        taskOf: (sha) => store.getLayoutSet(sha)?.task ?? null,
        isCellMarker: (sha) => store.getCalibration(sha)?.kind === EMULATED_CELL_KIND,
        episodeSecondsOf: (task) => getTask(task).episodeSeconds,
      },
      port: opts.port,
      ...requestTimeoutOf(env),
      logError: (e) => opts.log(`station error: ${(e as Error).stack ?? String(e)}`),
    });
    let url: string;
    try {
      url = await server.listen();
    } catch (e) {
      const code = (e as NodeJS.ErrnoException).code;
      if (code === 'EADDRINUSE')
        throw new UserError(
          `Port ${opts.port} is taken (another station?); set PORT to a free one, or PORT=0 for any.`,
        );
      throw e;
    }
    // A page left open across a restart says to look here for the new address (its key changed).
    // Written before the line is printed: whoever sees the line finds the file already current.
    addressFile = writeStationAddress(opts.dataDir, url);
    opts.log(`tandem station (${parts.type}, data in ${opts.dataDir}) — open ${url}`);
    if (cellIo) {
      const s = sessions;
      safetyTimer = setInterval(() => s.refreshSafety(), SAFETY_REFRESH_MS);
    }
    if (opts.foxglove) {
      live = await serveFoxglove(opts.foxglove, host);
      opts.log(
        `Foxglove live view on ${live.url} (Foxglove: Open connection → Foxglove WebSocket; read only, no token)`,
      );
    }
    opts.onListening?.(url);
    // Episode files a crash cut off, or a failed write stopped: said once, with the command that recovers them.
    for (const r of unfinishedRecordings(store)) {
      opts.log(
        `Unfinished episode file ${r.file} (${r.state === 'failed' ? (r.problem ?? 'a write failed') : 'the station stopped while recording it'}); recover it with: tandem record recover ${r.file}`,
      );
    }
    if (!opts.signal.aborted)
      await new Promise<void>((resolve) => opts.signal.addEventListener('abort', () => resolve(), { once: true }));
  } finally {
    if (addressFile) rmSync(addressFile, { force: true });
    clearInterval(safetyTimer);
    // In order: no new requests, the rig damped (a rollout in flight is stopped first), the store closed.
    await live?.close();
    await server?.close();
    // The session first: its rollout stops and it stays resumable; then the rig is damped.
    await sessions?.close();
    await placement?.close();
    await teleop?.close();
    await host?.close();
    await server?.settled();
    cellIo?.board.update({ sessionId: '', rolloutPhase: 'idle' });
    await cellIo?.close();
    store.close();
  }
}
