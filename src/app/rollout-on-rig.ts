/**
 * One policy rollout on a rig the caller created: every configured camera opened and recorded, the
 * newest frame of each camera the policy reads fed to it (or black frames), the hardware refusal
 * of code policies, the one rollout loop, and the emulated cell's scripted operator's score. The
 * one path of `tandem rig rollout`, the session runner and the station's single rollouts.
 */
import { UserError, type CliIo } from './command.js';
import { openPolicyForCli } from './commands/sim.js';
import { RigError, type Clock, type Rig } from '../rig/contract.js';
import { watchTable } from '../rollout/table-watch.js';
import { PrivilegedStateRequiredError } from '../policy/code/privileged.js';
import type { CameraSource } from '../rollout/run-episode.js';
import type { CameraName, Policy, RgbImage } from '../policy/contract.js';
import type { Layout, ObjectEndState, TaskDefinition } from '../tasks/types.js';
import type { LayoutSet } from '../layouts/layout-set.js';
import type { Store } from '../store/store.js';
import { blackImage } from '../policy/image.js';
import { assertRunsOnRig, runRigRollout, type RigRolloutResult } from '../rollout/rig-rollout.js';
import { POLICY_WARM_UP } from '../sim/policy-warm-up.js';
import { episodeFileName, openStationRecording, rolloutMetadata, type StationRecording } from './episode-recording.js';
import type { RigServices } from './services/rig-services.js';
import { DEFAULT_CELL_CAMERA_FPS } from '../emulated-cell/cell-cameras.js';
import { streamCameraSource } from '../rollout/stream-camera-source.js';
import { missingPolicyCameras, rolloutCameras, type StationConfig } from './station-config.js';
import { openStationCameras, type StationCameras } from './station-cameras.js';
import type { OperatorTakeover } from '../rollout/operator-takeover.js';
import { rigCyclesOf } from '../rig/rig-cycle-ring.js';

/** How old the emulated cell's newest frame may be at an observation (its cameras are lost after 5 s without one). */
const CELL_MAX_FRAME_AGE_S = 5;

/** Black 224×224 frames (openpi's image size) for every camera asked: rehearses the image path's cost, not what a camera sees. */
function blankCameras(): CameraSource {
  const frame = blackImage(224, 224);
  return {
    capture: (names: readonly CameraName[]) => {
      const out: Partial<Record<CameraName, RgbImage>> = {};
      for (const n of names) out[n] = frame;
      return Promise.resolve(out);
    },
  };
}

/** What rolloutOnRig needs: a rig created (with the layout's table) but not yet brought up, and an open policy. */
export interface RolloutOnRigOptions {
  readonly rig: Rig;
  /** What the rig's type brings besides the rig (createStationRig): renderer, table tracker, scorer. */
  readonly services: RigServices;
  readonly rigType: string;
  /** The station config the rig came from: its cameras are opened, fed to the policy and recorded. */
  readonly station: StationConfig;
  readonly policy: Policy;
  readonly task: TaskDefinition;
  readonly layout: Layout;
  readonly seconds: number;
  readonly rateHz: number;
  /** Default: policyDeadlineMs(clock). */
  readonly deadlineMs?: number;
  readonly seed: number;
  /** The emulated cell's scripted operator scores the end state (UserError on any other rig). */
  readonly scoreFromCell: boolean;
  /** Black frames for a camera policy (rehearses timing, not behaviour). */
  readonly blankCameras: boolean;
  readonly signal: AbortSignal;
  /** The clock the rig reads. */
  readonly clock: Clock;
  /** Frame rate of the emulated cell's cameras when the station config is a rig config alone (--rig-config). Default DEFAULT_CELL_CAMERA_FPS. */
  readonly cameraFps?: number;
  /** Records the episode: the file is registered in `store` and opened in `dir` once the rollout is sure to run. */
  /**
   * Records the episode. `fileLabel` names the file in place of the policy: a blind session's files
   * say their slot, so a path shown or exported mid-session names no policy.
   */
  readonly record?: {
    readonly store: Store;
    readonly dir: string;
    readonly spec: string;
    readonly set: LayoutSet;
    readonly fileLabel?: string;
  };
  /** Says what runs and how to stop it, once the rollout starts. */
  log(line: string): void;
  /** The operator's takeover with a leader arm (src/rollout/operator-takeover.ts). */
  readonly takeover?: OperatorTakeover;
}

export interface RolloutOnRig {
  readonly result: RigRolloutResult;
  readonly score?: CellScore;
  /** The rig's hashed record the rollout names among its calibrations (the emulated cell's hidden physics). */
  readonly rigMarker?: { readonly kind: string; readonly sha256: string; readonly json: string };
  /** The episode file, still open for its rollout id: the caller stores the rollout, then finish()es it. */
  readonly recording?: StationRecording;
  /** Why this rollout is a rehearsal, not a result (black frames, the emulated cell); absent for a result. */
  readonly rehearsal?: string;
}

/**
 * One rollout on a rig the caller created and will close: every configured camera opened and
 * recorded, the newest frame of each camera the policy reads fed to it (or black frames), the
 * hardware refusal of code policies, the loop, and the scripted operator's score on the cell.
 * Shared by \`tandem rig rollout\`, sessions and the station API. The rig ends damped (runRigRollout).
 */
export async function rolloutOnRig(o: RolloutOnRigOptions): Promise<RolloutOnRig> {
  const { rig, rigType, policy, task, layout, seconds, rateHz, deadlineMs, seed, scoreFromCell, clock } = o;
  const blank = o.blankCameras;
  let result: RigRolloutResult;
  let cameras: CameraSource | undefined = blank ? blankCameras() : undefined;
  let opened: StationCameras | undefined;
  let rigMarker: { readonly kind: string; readonly sha256: string; readonly json: string } | undefined;
  let recording: StationRecording | undefined;
  let rehearsal: string | undefined;
  try {
    const configured = rolloutCameras(o.station, policy.info, o.cameraFps ?? DEFAULT_CELL_CAMERA_FPS);
    // Before anything opens or moves: a policy reading a camera the station does not have.
    if (policy.info.cameras.length > 0 && !blank) {
      const missing = missingPolicyCameras({ ...o.station, cameras: configured }, policy.info);
      if (missing) throw new UserError(missing);
    }
    const { services } = o;
    const scorer = services.endStateScorer;
    if (scoreFromCell && !scorer.available)
      throw new UserError(
        `--score-from-cell needs the emulated cell (rig type yam-cell), not ${String(rigType)}; on a real rig the operator scores with 'tandem score'.`,
      );
    const poses = services.objectPoses;
    const tracker = services.tableTracker;
    if (!poses.available) {
      try {
        assertRunsOnRig(policy);
      } catch (e) {
        if (e instanceof PrivilegedStateRequiredError) throw new UserError(e.message);
        throw e;
      }
    }
    rigMarker = services.marker;
    rehearsal = rehearsalOf(blank && policy.info.cameras.length > 0, services.rehearsal);
    // Every configured camera streams (and is recorded), before the rig is powered: a camera's
    // start-up (ffmpeg, a USB device, the cell's browser) outlasts the motors' own 400 ms watchdog.
    opened = await openStationCameras(configured, {
      renderer: services.cameraRenderer,
      clock,
      source: o.station.source,
    });
    if (!blank && policy.info.cameras.length > 0) {
      const streams = Object.fromEntries(policy.info.cameras.map((n) => [n, opened!.byName[n]]));
      // The cell's renderer shares this machine's cores and may stall a frame for a second, as its
      // cameras' own 5 s stall watchdog allows; a hardware camera's frame is stale after 4 periods.
      const cellCameras = new Set(configured.filter((c) => c.kind === 'cell').map((c) => c.name));
      cameras = streamCameraSource(streams, {
        nowS: () => clock.nowS(),
        maxFrameAgeS: (n) => (cellCameras.has(n) ? CELL_MAX_FRAME_AGE_S : undefined),
      });
    }
    if (o.record) {
      // A rig thread's every motor cycle goes in the file too, drained off the motors' path.
      const rigCycles = rigCyclesOf(rig);
      recording = await openStationRecording({
        store: o.record.store,
        dir: o.record.dir,
        kind: 'rollout',
        fileName: episodeFileName({
          task: task.id,
          layoutIndex: layout.index,
          policyName: o.record.fileLabel ?? policy.info.name,
        }),
        rigModel: rig.model,
        clock,
        cameras: opened.list,
        ...(rigCycles ? { rigCycles } : {}),
        metadata: rolloutMetadata({
          kind: 'real',
          task,
          layoutSetSha256: o.record.set.sha256,
          layout,
          policySpec: o.record.spec,
          policy: policy.info,
          rig: rigType,
          rigModel: rig.model.name,
          calibrations: services.marker ? [`${services.marker.kind}:${services.marker.sha256}`] : [],
          operator: scoreFromCell && scorer.available ? scorer.operator : undefined,
          controlHz: rateHz,
          episodeSeconds: seconds,
          seed,
          rehearsal,
        }),
      });
    }
    // What runs, and how to stop it (tests wait for this line before sending Ctrl-C).
    o.log(
      `Running ${policy.info.name} on ${String(rigType)} for ${seconds} s; Ctrl-C stops it (the rig holds, then damps).`,
    );
    try {
      result = await runRigRollout({
        rig,
        policy,
        cameras,
        task,
        layout,
        episodeSeconds: seconds,
        controlHz: rateHz,
        seed,
        deadlineMs,
        signal: o.signal,
        clock,
        privileged: poses.available && policy.info.needsPrivilegedState ? () => poses.read() : undefined,
        lookAtTable: scoreFromCell && scorer.available ? scorer : undefined,
        recording: recording?.recorder,
        // The table watched by the station's tracker (the cell's world); a real rig has no tracker yet.
        taskEvents: tracker.available ? watchTable(task, layout, () => tracker.sightings()) : undefined,
        takeover: o.takeover,
      });
    } catch (e) {
      if (e instanceof RigError)
        throw new UserError(`The rig (${String(rigType)}) failed during the rollout: ${e.message}`, 1);
      throw e;
    }
  } catch (e) {
    // No rollout to store: the file is finished as it is, its row says why.
    await recording?.finish(undefined, { outcome: 'not-run', reason: e instanceof Error ? e.message : String(e) });
    throw e;
  } finally {
    await opened?.close();
  }
  const score = result.tableEndStates ? scoreOf(task, layout, result.tableEndStates) : undefined;
  return {
    result,
    ...(score ? { score } : {}),
    ...(rigMarker ? { rigMarker } : {}),
    ...(recording ? { recording } : {}),
    ...(rehearsal ? { rehearsal } : {}),
  };
}

/** Why a rollout is a rehearsal (its policy saw black frames, or its rig's services say why: the emulated cell), or undefined for a result. */
function rehearsalOf(blankFrames: boolean, rigRehearsal: string | undefined): string | undefined {
  const why = [blankFrames ? 'the policy saw black frames (--blank-cameras)' : '', rigRehearsal ?? ''].filter(Boolean);
  return why.length ? `a rehearsal, not a result: ${why.join(' and ')}` : undefined;
}

/**
 * Opens a policy for a rig rollout: the same registry and worker thread as the sim, so a code
 * policy never plans on the thread of the rig's control loop. Its worker is warmed up first
 * (POLICY_WARM_UP): a cold first plan outlasts the supervisor's 100 ms watchdog on the wall clock,
 * and on virtual time the chunk deadline (wall clock on purpose: a hung server hangs in real time)
 * still bounds a cold plan on a starved machine.
 */
export async function openRigPolicy(spec: string, io: Pick<CliIo, 'cwd'>): Promise<Policy> {
  return openPolicyForCli(spec, io, { warmUp: POLICY_WARM_UP });
}

export interface CellScore {
  readonly endStates: readonly ObjectEndState[];
  readonly progress: number;
  readonly counts: Readonly<Record<string, number>>;
  readonly summary: string;
}

export function scoreOf(task: TaskDefinition, layout: Layout, endStates: readonly ObjectEndState[]): CellScore {
  const p = task.scoreProgress(layout, endStates);
  return { endStates, progress: p.progress, counts: p.counts, summary: p.summary };
}
