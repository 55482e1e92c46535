/**
 * `tandem rig rollout`: one rollout of a policy on the configured rig (default the embedded
 * emulated cell), through the same policy registry and rollout loop as `tandem sim rollout`,
 * on wall time, stored in the station store as a real rollout. The rig has no privileged end
 * state: the episode is left for the operator to score — on the emulated cell its scripted
 * operator can (--score-from-cell), and code policies may read the cell's object poses (a
 * rehearsal, marked by the rollout's emulated-cell record). The work lives in
 * src/rollout/rig-rollout.ts; this file reads files, brings the rig up, stores, and turns bad
 * input into one sentence.
 */
import { resolve } from 'node:path';
import { intOption, numberOption, requireString, UserError, type CliCommand } from '../command.js';
import { episodeSummary, openPolicyForCli, rolloutLayoutArgs } from './sim.js';
import { RigError, type Rig } from '../../rig/contract.js';
import { RealtimeClock } from '../../rig/clocks.js';
import { MAX_CONTROL_RATE_HZ } from '../../rig/control-loop.js';
import { PrivilegedStateRequiredError } from '../../policy/code/privileged.js';
import { isCodePolicySpec, knownPolicySpecs } from '../../rollout/policy-registry.js';
import { ThreadedPolicy } from '../../rollout/threaded-policy.js';
import type { CameraSource } from '../../rollout/run-episode.js';
import type { CameraName, PolicyInfo, RgbImage } from '../../policy/contract.js';
import type { Layout, ObjectEndState, TaskDefinition } from '../../tasks/types.js';
import type { LayoutSet } from '../../layouts/layout-set.js';
import type { Store } from '../../store/store.js';
import { blackImage } from '../../policy/image.js';
import { assertRunsOnRig, runRigRollout, type RigRolloutResult } from '../../rollout/rig-rollout.js';
import { DEFAULT_SIM_CONTROL_HZ } from '../../sim/sim-rollout.js';
import { readRigConfig } from '../station.js';
import { DEFAULT_RIG_CONFIG, stationRigRegistry } from '../rig-registry.js';
import { openCommandStore } from '../station-store.js';
import { resolveDataDir } from '../data-dir.js';
import { defaultEpisodesDir, episodeFileName, openStationRecording, rolloutMetadata, type StationRecording } from '../episode-recording.js';
import type { RecordingSummary } from '../../record/episode-recorder.js';
import { StoreError } from '../../store/store.js';
import { emulatedCellOf } from '../../emulated-cell/register.js';
import { cellMarker, EMULATED_CELL_KIND } from '../../emulated-cell/cell-truth.js';
import { SCRIPTED_OPERATOR } from '../../emulated-cell/scripted-operator.js';
import { cellCameras, type CellCameras } from '../../emulated-cell/cell-cameras.js';
import type { Episode } from '../../rollout/episode.js';

/** Exit code when the policy (server) timed out or went away mid-episode, as `tandem policy probe` uses. */
const EXIT_POLICY_UNAVAILABLE = 3;
const EXIT_INTERRUPTED = 130;
/** Below the safety supervisor's 2 s watchdog damp: a stalled policy aborts while the arm still holds. */
const DEFAULT_DEADLINE_MS = 1500;

function percentile(sorted: readonly number[], q: number): number {
  return sorted.length === 0 ? 0 : sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))];
}

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

const round = (x: number, digits = 2): number => Number(x.toFixed(digits));

function report(r: RigRolloutResult, rigType: string, rateHz: number, score: CellScore | undefined): Record<string, unknown> {
  const e = r.episode;
  const latency = r.chunks.map((c) => c.latencyMs).sort((a, b) => a - b);
  const waited = r.chunks.map((c) => c.waitedMs).sort((a, b) => a - b);
  return {
    ...episodeSummary(e),
    // No privileged end state on the rig: the operator (on the cell, its scripted one) scores.
    progress: score?.progress ?? null,
    scoring: e.status !== 'valid' ? 'not scored' : score ? `scored by the ${SCRIPTED_OPERATOR}` : 'awaiting operator score',
    ...(score ? { counts: score.counts, endStates: score.endStates } : {}),
    rig: rigType,
    finalMode: r.finalMode,
    rateHz,
    achievedHz: round(r.timing.achievedHz, 1),
    wakeLateP50Ms: round(r.timing.wakeLateP50Ms),
    wakeLateP99Ms: round(r.timing.wakeLateP99Ms),
    wakeLateMaxMs: round(r.timing.wakeLateMaxMs),
    lateSteps: r.timing.lateSteps,
    horizon: r.chunks[0]?.horizon ?? null,
    inferenceMs: { p50: round(percentile(latency, 0.5)), max: round(latency[latency.length - 1] ?? 0) },
    waitedMs: { p50: round(percentile(waited, 0.5)), max: round(waited[waited.length - 1] ?? 0) },
    safetyEventsByKind: r.safetyEventsByKind,
    wallSeconds: round(r.wallMs / 1000, 3),
  };
}

const rollout: CliCommand = {
  path: ['rig', 'rollout'],
  summary: 'run one rollout of a policy on the rig (default the embedded emulated YAM); left for the operator to score',
  help: `Usage: tandem rig rollout --policy SPEC --layouts FILE --layout I [--seconds S] [--rig-config FILE] [--rate HZ] [--timeout-ms N] [--seed K] [--score-from-cell] [--blank-cameras] [--json]

Brings the configured rig up, runs the policy through the same rollout loop and policy specs as
'tandem sim rollout' on the wall clock, then holds, damps and closes the rig, and stores the
rollout in the station store (--data) as a real rollout. The rig has no privileged end state, so
the rollout awaits the operator's score ('tandem score').
On the emulated cell (the default rig, type yam-cell) the layout is placed on its table as an
operator would, code policies (code:…) may read the cell's object poses — a rehearsal, not a
result — and --score-from-cell has the cell's scripted operator score the end state. On hardware
code policies are refused: they read object poses only a simulation has.

  --policy SPEC       ${knownPolicySpecs().join(' | ')}
  --layouts FILE      layout set written by 'tandem layouts sample' (the operator places layout I)
  --layout I          layout index (0-based)
  --seconds S         episode length (default: the task's, the same as in the sim)
  --rig-config FILE   rig config JSON (default ${JSON.stringify(DEFAULT_RIG_CONFIG)}: no hardware)
  --rate HZ           control rate (default ${DEFAULT_SIM_CONTROL_HZ}, the sim's)
  --timeout-ms N      per-inference deadline; past it the rig holds and the rollout is aborted (default ${DEFAULT_DEADLINE_MS})
  --seed K            the policy's seed (default 0)
  --score-from-cell   the emulated cell's scripted operator scores the end state (stored as an operator score)
  --blank-cameras     feed black 224×224 frames to a policy that reads cameras: rehearses a policy server's
                      connection and timing, not its behaviour (the emulated cell draws its own camera
                      images without it; hardware cameras are not in this build)
  --episodes DIR      where the episode file goes (default <data dir>/episodes); every rig rollout is
                      recorded: joint states at the control rate, applied commands, events, cameras
  --json              print {"status", "steps", "chunks", "achievedHz", "inferenceMs", "safetyEventsByKind", "episodeFile", …}

Prints steps, achieved control rate, chunk and inference timing, safety interventions and status.
Exit codes: 0 ran its length, 1 invalid (rig fault) or the policy failed (bad actions), 2 bad input, 3 policy timeout or disconnect,
130 stopped with Ctrl-C (the rig holds and damps first).`,
  options: {
    policy: { type: 'string' },
    layouts: { type: 'string' },
    layout: { type: 'string' },
    seconds: { type: 'string' },
    'rig-config': { type: 'string' },
    rate: { type: 'string' },
    'timeout-ms': { type: 'string' },
    seed: { type: 'string' },
    'score-from-cell': { type: 'boolean' },
    'blank-cameras': { type: 'boolean' },
    episodes: { type: 'string' },
  },
  async run(args, io) {
    const { set, layout, task, seconds } = rolloutLayoutArgs(args, io);
    const rateHz = numberOption(args, 'rate', DEFAULT_SIM_CONTROL_HZ, 1, MAX_CONTROL_RATE_HZ);
    const deadlineMs = intOption(args, 'timeout-ms', DEFAULT_DEADLINE_MS, 1, 600_000);
    const seed = intOption(args, 'seed', 0, 0, 2 ** 31 - 1);
    const configFile = typeof args.values['rig-config'] === 'string' ? resolve(io.cwd, args.values['rig-config']) : undefined;
    const rigConfig = await readRigConfig(configFile);
    const rigType = (rigConfig as { type?: unknown }).type;

    const spec = requireString(args, 'policy');
    const scoreFromCell = args.values['score-from-cell'] === true;
    let policy = await openPolicyForCli(spec, io);
    if (isCodePolicySpec(spec)) {
      // Code policies plan synchronously (up to ~0.1 s per chunk): in this thread that would starve
      // the rig's control loop, so they run in a worker (the spec was checked by opening it here).
      await policy.close?.();
      policy = await ThreadedPolicy.open(spec, { cwd: io.cwd });
    }
    // Opened before the rig: the episode file is registered in it before its first byte.
    const store = openCommandStore(args.values, io);
    const episodesDir = typeof args.values.episodes === 'string' ? resolve(io.cwd, args.values.episodes) : defaultEpisodesDir(resolveDataDir(typeof args.values.data === 'string' ? args.values.data : undefined, io.env, io.cwd));
    try {
      const blank = args.values['blank-cameras'] === true;
      const clock = new RealtimeClock();
      let rig: Rig;
      try {
        // The table is what the operator places; only the emulated cell builds anything from it.
        rig = await stationRigRegistry().create(rigConfig, { clock, signal: io.signal, table: { task, layout, placementSeed: seed } });
      } catch (e) {
        if (e instanceof RigError) throw new UserError(e.message);
        throw e;
      }
      let result: RigRolloutResult | undefined;
      let cameras: CameraSource | undefined = blank ? blankCameras() : undefined;
      let cellCams: CellCameras | undefined;
      let cellRecord: { readonly sha256: string; readonly json: string } | undefined;
      let recording: StationRecording | undefined;
      let recorded: RecordingSummary | undefined;
      let rolloutId: number | undefined;
      try {
        const cell = emulatedCellOf(rig);
        if (policy.info.cameras.length > 0 && !blank) {
          // The emulated cell has cameras of its own; hardware cameras are not in this build.
          if (!cell) {
            throw new UserError(
              `Policy ${policy.info.name} reads cameras (${policy.info.cameras.join(', ')}), and this build has no rig camera driver; run it in the sim with 'tandem sim rollout', on the emulated cell (rig type yam-cell), or rehearse with --blank-cameras (black frames).`,
            );
          }
          cellCams = cellCameras(cell.world);
          cameras = cellCams.source;
          // Start the browser and its page now, before the rig is powered: their start-up blocks
          // this thread for longer than the motors' own 400 ms watchdog.
          await cameras.capture(policy.info.cameras);
        }
        if (scoreFromCell && !cell) throw new UserError(`--score-from-cell needs the emulated cell (rig type yam-cell), not ${String(rigType)}; on a real rig the operator scores with 'tandem score'.`);
        if (!cell) {
          try {
            assertRunsOnRig(policy);
          } catch (e) {
            if (e instanceof PrivilegedStateRequiredError) throw new UserError(e.message);
            throw e;
          }
        } else {
          cellRecord = cellMarker(cell.truth);
        }
        recording = await openStationRecording({
          store,
          dir: episodesDir,
          kind: 'rollout',
          fileName: episodeFileName({ task: task.id, layoutIndex: layout.index, policyName: policy.info.name }),
          rigModel: rig.model,
          clock,
          metadata: rolloutMetadata({
            kind: 'real',
            task,
            layoutSetSha256: set.sha256,
            layout,
            policySpec: spec,
            policy: policy.info,
            rig: String(rigType),
            rigModel: rig.model.name,
            calibrations: cellRecord ? [`emulated-cell:${cellRecord.sha256}`] : [],
            operator: scoreFromCell ? SCRIPTED_OPERATOR : undefined,
            controlHz: rateHz,
            episodeSeconds: seconds,
            seed,
          }),
        });
        // What runs, and how to stop it (tests wait for this line before sending Ctrl-C).
        io.err(`Running ${policy.info.name} on ${String(rigType)} for ${seconds} s; Ctrl-C stops it (the rig holds, then damps).\n`);
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
            signal: io.signal,
            clock,
            privileged: cell && policy.info.needsPrivilegedState ? () => cell.world.privilegedState() : undefined,
            lookAtTable: scoreFromCell ? cell!.world : undefined,
            recording: recording.recorder,
          });
        } catch (e) {
          if (e instanceof RigError) throw new UserError(`The rig (${String(rigType)}) failed during the rollout: ${e.message}`, 1);
          throw e;
        }
        const ep = result.episode;
        const sc = result.tableEndStates ? scoreOf(task, layout, result.tableEndStates) : undefined;
        rolloutId = storeRigRollout(store, { spec, policy: policy.info, set, episode: ep, result, cellMarker: cellRecord, score: sc, episodeFile: recording.file });
      } finally {
        await cellCams?.close();
        await rig.close?.();
        // Whatever happened, the file is finished and its store row says how it ended.
        recorded = await recording?.finish(rolloutId, { outcome: result?.episode.outcome ?? 'not-run', status: result?.episode.status ?? 'not-run', steps: String(result?.episode.trajectory.steps ?? 0) });
      }
      const e = result.episode;
      const score = result.tableEndStates ? scoreOf(task, layout, result.tableEndStates) : undefined;
      const out: Record<string, unknown> = { ...report(result, String(rigType), rateHz, score), rolloutId, episodeFile: recording?.file ?? null, recording: recordingReport(recorded) };
      if (args.values.json) {
        io.out(`${JSON.stringify({ ...out, layoutSet: set.sha256 })}\n`);
      } else {
        const status = e.status !== 'valid' ? `${e.status}: ${e.reason ?? ''}` : score ? `valid, ${SCRIPTED_OPERATOR} scored ${score.progress.toFixed(2)} (${score.summary})` : 'valid, awaiting operator score';
        const kinds = Object.entries(result.safetyEventsByKind).map(([k, n]) => `${k} ${n}`);
        io.out(
          `layout ${e.layoutIndex} (tier ${e.tier}), ${policy.info.name} on ${String(rigType)}, ${seconds} s: ${status}\n` +
            (e.error ? `policy error: ${e.error}\n` : '') +
            `steps ${e.trajectory.steps} at ${out.achievedHz} Hz achieved (asked ${rateHz} Hz; wake late p50 ${out.wakeLateP50Ms} ms, p99 ${out.wakeLateP99Ms} ms, ${result.timing.lateSteps} late steps)\n` +
            `chunks ${String(out.chunks)} of ${String(out.horizon ?? '?')} rows; inference p50 ${(out.inferenceMs as { p50: number }).p50} ms, max ${(out.inferenceMs as { max: number }).max} ms; loop waited max ${(out.waitedMs as { max: number }).max} ms\n` +
            `safety events ${e.safetyEvents.length}${kinds.length ? ` (${kinds.join(', ')})` : ''}; rig ${result.finalMode} after the rollout\n` +
            `stored as rollout ${rolloutId}${cellRecord ? ' (emulated cell: a rehearsal, not a result)' : ''}\n` +
            recordingLine(recorded),
        );
      }
      if (e.status === 'valid') return e.error ? 1 : 0;
      if (io.signal.aborted && e.reason === 'stopped by the operator') return EXIT_INTERRUPTED;
      if (e.status === 'aborted') return EXIT_POLICY_UNAVAILABLE;
      return 1;
    } catch (e) {
      if (e instanceof StoreError) throw new UserError(e.message);
      throw e;
    } finally {
      store.close();
      await policy.close?.();
    }
  },
};

function recordingReport(r: RecordingSummary | undefined): Record<string, unknown> | null {
  if (!r) return null;
  return { status: r.status, failure: r.failure ?? null, messages: r.messages, bytes: r.bytes, closeMs: round(r.closeMs, 1), messagesByTopic: r.messagesByTopic };
}

function recordingLine(r: RecordingSummary | undefined): string {
  if (!r) return '';
  if (r.status !== 'finished') return `RECORDING PROBLEM: ${r.failure ?? 'the episode file is not finished'}\n`;
  return `recorded ${r.file} (${(r.bytes / 1048576).toFixed(1)} MiB, ${r.messages} messages, closed in ${r.closeMs.toFixed(0)} ms)\n`;
}

interface CellScore {
  readonly endStates: readonly ObjectEndState[];
  readonly progress: number;
  readonly counts: Readonly<Record<string, number>>;
  readonly summary: string;
}

function scoreOf(task: TaskDefinition, layout: Layout, endStates: readonly ObjectEndState[]): CellScore {
  const p = task.scoreProgress(layout, endStates);
  return { endStates, progress: p.progress, counts: p.counts, summary: p.summary };
}

/** One row for the rollout (and its operator score): everything the rig measured is kept, whatever the outcome. */
function storeRigRollout(
  store: Store,
  r: { spec: string; policy: PolicyInfo; set: LayoutSet; episode: Episode; result: RigRolloutResult; cellMarker?: { sha256: string; json: string }; score?: CellScore; episodeFile?: string },
): number {
  const e = r.episode;
  store.putLayoutSet(r.set);
  const policy = store.upsertPolicy({ spec: r.spec, name: r.policy.name, checkpointSha256: r.policy.checkpointSha256 });
  if (r.cellMarker) store.putCalibration({ sha256: r.cellMarker.sha256, kind: EMULATED_CELL_KIND, version: 1, canonicalJson: r.cellMarker.json });
  const id = store.insertRollout({
    kind: 'real',
    policyId: policy.id,
    layoutSetSha256: r.set.sha256,
    layoutIndex: e.layoutIndex,
    tier: e.tier,
    seed: e.seed,
    episodeSeconds: e.episodeSeconds,
    controlHz: e.controlHz,
    status: e.status,
    outcome: e.outcome,
    statusReason: e.reason ?? null,
    policyError: e.error ?? null,
    finalStateHash: e.finalStateHash || null,
    calibrationSha256s: r.cellMarker ? [r.cellMarker.sha256] : [],
    durationS: r.result.wallMs / 1000,
    episodeFile: r.episodeFile ?? null,
  });
  if (r.score && e.status === 'valid') {
    store.insertOperatorScore({ rolloutId: id, endStates: r.score.endStates, progress: r.score.progress, counts: r.score.counts, operator: SCRIPTED_OPERATOR });
  }
  return id;
}

export const commands: CliCommand[] = [rollout];
