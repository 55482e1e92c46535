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
import { EPISODE_CONTROL_HZ } from '../../rollout/run-episode.js';
import { resolve } from 'node:path';
import {
  intOption,
  numberOption,
  requireString,
  UserError,
  type CliCommand,
  type ParsedCommandArgs,
} from '../command.js';
import { episodeSummary, rolloutLayoutArgs } from './sim.js';
import { RigError, type Clock, type Rig } from '../../rig/contract.js';
import { MAX_CONTROL_RATE_HZ } from '../../rig/control-loop.js';
import { knownPolicySpecs } from '../../rollout/policy-registry.js';
import {
  DEFAULT_DEADLINE_MS,
  loopStatsMetadata,
  STANDSTILL_DEADLINE_MS,
  type RigRolloutResult,
} from '../../rollout/rig-rollout.js';
import { DEFAULT_RIG_CONFIG, clockForRigConfig } from '../rig-registry.js';
import { openCommandStore } from '../station-store.js';
import { resolveDataDir } from '../data-dir.js';
import { defaultEpisodesDir, recordingLine } from '../episode-recording.js';
import type { RecordingSummary } from '../../record/episode-recorder.js';
import { StoreError } from '../../store/store.js';
import { createStationRig } from '../station-rig.js';
import type { RigServices } from '../services/rig-services.js';
import { SCRIPTED_OPERATOR } from '../session-operators.js';
import { DEFAULT_CELL_CAMERA_FPS } from '../../emulated-cell/cell-cameras.js';
import {
  cellIoSourceOf,
  rigConfigWithGrippers,
  STATION_CONFIG_HELP,
  STATION_CONFIG_OPTIONS,
  stationConfigFromArgs,
} from '../station-config.js';
import type { CellIo } from '../cell-io.js';
import { DEFAULT_RAMP_S } from '../../teleop/follow.js';
import { openTakeoverLeader, type TakeoverLeader } from '../takeover-leader.js';
import { openRigPolicy, rolloutOnRig, type CellScore, type RolloutOnRig } from '../rollout-on-rig.js';
import { storeRolloutOnRig } from '../store-rig-rollout.js';

/** Exit code when the policy (server) timed out or went away mid-episode, as `tandem policy probe` uses. */
const EXIT_POLICY_UNAVAILABLE = 3;
const EXIT_INTERRUPTED = 130;

/** `--timeout-ms N`, or undefined: the rollout's clock decides (policyDeadlineMs). */
export function timeoutOption(args: ParsedCommandArgs): number | undefined {
  return args.values['timeout-ms'] === undefined
    ? undefined
    : intOption(args, 'timeout-ms', DEFAULT_DEADLINE_MS, 1, 600_000);
}

function percentile(sorted: readonly number[], q: number): number {
  return sorted.length === 0 ? 0 : sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))];
}

const round = (x: number, digits = 2): number => Number(x.toFixed(digits));

function report(
  r: RigRolloutResult,
  rigType: string,
  rateHz: number,
  score: CellScore | undefined,
): Record<string, unknown> {
  const e = r.episode;
  const latency = r.chunks.map((c) => c.latencyMs).sort((a, b) => a - b);
  const waited = r.chunks.map((c) => c.waitedMs).sort((a, b) => a - b);
  return {
    ...episodeSummary(e),
    // No privileged end state on the rig: the operator (on the cell, its scripted one) scores.
    progress: score?.progress ?? null,
    scoring:
      e.status !== 'valid' ? 'not scored' : score ? `scored by the ${SCRIPTED_OPERATOR}` : 'awaiting operator score',
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
    // The stretches the operator drove: an assisted rollout.
    takeovers: e.takeovers.map((t) => ({
      startS: round(t.startS, 3),
      endS: round(t.endS, 3),
      steps: t.steps,
      open: t.open,
    })),
    motorLoop: JSON.parse(loopStatsMetadata(r.loop).loop_stats) as unknown,
    wallSeconds: round(r.wallMs / 1000, 3),
  };
}

const rollout: CliCommand = {
  path: ['rig', 'rollout'],
  summary: 'run one rollout of a policy on the rig (default the embedded emulated YAM); left for the operator to score',
  help: `Usage: tandem rig rollout --policy SPEC --layouts FILE --layout I [--seconds S] [--station-config FILE | --rig-config FILE] [--rate HZ] [--timeout-ms N] [--seed K] [--score-from-cell] [--camera-fps F] [--blank-cameras] [--cell-io FILE] [--leader SPEC [--ramp-s S]] [--json]

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
${STATION_CONFIG_HELP}
                      (default ${JSON.stringify(DEFAULT_RIG_CONFIG)}: no hardware)
  --rate HZ           control rate (default ${EPISODE_CONTROL_HZ}, the sim's too)
  --timeout-ms N      per-inference deadline; past it the rig holds and the rollout is aborted (default ${DEFAULT_DEADLINE_MS}; ${STANDSTILL_DEADLINE_MS} on the virtual-time cell, where no arm waits on the policy)
  --seed K            the policy's seed (default 0)
  --score-from-cell   the emulated cell's scripted operator scores the end state (stored as an operator score)
  --camera-fps F      frame rate of the emulated cell's cameras with --rig-config (default ${DEFAULT_CELL_CAMERA_FPS}); a
                      station config sets each camera's own fps. Each observation gets the newest frame of
                      each camera the policy reads; the episode file records every configured camera
  --blank-cameras     feed black 224×224 frames to a policy that reads cameras: rehearses a policy server's
                      connection and timing, not its behaviour (the station config's cameras are still recorded)
  --cell-io FILE      cell I/O config (docs/cell-io.md): the cell PLC's interlocks (e-stop circuit, door, light
                      curtain, heartbeat) over OPC UA stop the arms within one control cycle when they open or
                      the PLC goes silent (the episode ends as a safety stop); the tower light shows the state
  --episodes DIR      where the episode file goes (default <data dir>/episodes); every rig rollout is
                      recorded: joint states at the control rate, applied commands, events, cameras
  --leader SPEC       a leader arm to take over with (as 'teleop record --leader': emulated-yam, yam:[damiao:]PORT[,PORT],
                      gello:PORT[,PORT]): E on the keyboard or the handle's top button takes over from the policy
                      (it pauses; the follower ramps to the leader, refused while they are far apart) and gives back
                      (the policy resumes from a fresh observation, blended in over 1 s); each stretch is recorded
  --ramp-s S          the ramp from the policy's last command to the leader when taking over (default ${DEFAULT_RAMP_S})
  --json              print {"status", "steps", "chunks", "achievedHz", "inferenceMs", "safetyEventsByKind", "episodeFile", …}

Prints steps, achieved control rate, chunk and inference timing, safety interventions and status.
Exit codes: 0 ran its length, 1 invalid (rig fault), a safety stop (an interlock opened) or the policy failed (bad actions), 2 bad input, 3 policy timeout or disconnect,
130 stopped with Ctrl-C (the rig holds and damps first).`,
  options: {
    policy: { type: 'string' },
    layouts: { type: 'string' },
    layout: { type: 'string' },
    seconds: { type: 'string' },
    ...STATION_CONFIG_OPTIONS,
    rate: { type: 'string' },
    'timeout-ms': { type: 'string' },
    seed: { type: 'string' },
    'score-from-cell': { type: 'boolean' },
    'blank-cameras': { type: 'boolean' },
    'camera-fps': { type: 'string' },
    episodes: { type: 'string' },
    'cell-io': { type: 'string' },
    leader: { type: 'string' },
    'ramp-s': { type: 'string' },
  },
  async run(args, io) {
    const { set, layout, task, seconds } = rolloutLayoutArgs(args, io);
    const rateHz = numberOption(args, 'rate', EPISODE_CONTROL_HZ, 1, MAX_CONTROL_RATE_HZ);
    const deadlineMs = timeoutOption(args);
    const seed = intOption(args, 'seed', 0, 0, 2 ** 31 - 1);
    const cameraFps = numberOption(args, 'camera-fps', DEFAULT_CELL_CAMERA_FPS, 1, 60);
    const station = await stationConfigFromArgs(args.values, io.cwd);
    const rigType = station.rig.type;
    const cellIoFrom = cellIoSourceOf(
      station,
      typeof args.values['cell-io'] === 'string' ? resolve(io.cwd, args.values['cell-io']) : undefined,
    );

    const leaderSpec = typeof args.values.leader === 'string' ? args.values.leader : undefined;
    const rampS = numberOption(args, 'ramp-s', DEFAULT_RAMP_S, 0.1, 10);
    const spec = requireString(args, 'policy');
    const scoreFromCell = args.values['score-from-cell'] === true;
    const policy = await openRigPolicy(spec, io);
    // Opened before the rig: the episode file is registered in it before its first byte.
    const store = openCommandStore(args.values, io);
    const dataDir = resolveDataDir(typeof args.values.data === 'string' ? args.values.data : undefined, io.env, io.cwd);
    const episodesDir =
      typeof args.values.episodes === 'string' ? resolve(io.cwd, args.values.episodes) : defaultEpisodesDir(dataDir);
    let cellIo: CellIo | undefined;
    let takeoverLeader: TakeoverLeader | undefined;
    try {
      // Before the rig: its safety supervisor reads the interlock from the first cycle.
      // node-opcua takes seconds to load: only a rollout with cell I/O loads it.
      if (cellIoFrom !== undefined)
        cellIo = await (await import('../cell-io.js')).openCellIo(cellIoFrom, {
          dataDir,
          controlHz: rateHz,
          log: (line) => io.err(`${line}\n`),
        });
      const rigConfig = rigConfigWithGrippers(station, store);
      const blank = args.values['blank-cameras'] === true;
      let rig: Rig;
      let services: RigServices;
      let clock: Clock;
      try {
        clock = clockForRigConfig(rigConfig);
        // The table is what the operator places; only the emulated cell builds anything from it.
        ({ rig, services } = await createStationRig(rigConfig, {
          clock,
          signal: io.signal,
          table: { task, layout, placementSeed: seed },
          ...(cellIo ? { interlock: cellIo.plc } : {}),
        }));
      } catch (e) {
        if (e instanceof RigError) throw new UserError(e.message);
        throw e;
      }
      let run: RolloutOnRig | undefined;
      try {
        if (leaderSpec !== undefined) {
          takeoverLeader = await openTakeoverLeader({
            spec: leaderSpec,
            clock,
            rampS,
            keyboard: process.stdin,
            log: (line) => io.err(`${line}\n`),
          });
          io.err(
            `${takeoverLeader.description}: press E (or the handle's top button) to take over from the policy, and again to give back.\n`,
          );
        }
      } catch (e) {
        await rig.close?.();
        throw e;
      }
      cellIo?.board.update({ rolloutPhase: 'running', rigStatus: 'active', faults: [] });
      try {
        run = await rolloutOnRig({
          rig,
          services,
          rigType: String(rigType),
          station,
          policy,
          task,
          layout,
          seconds,
          rateHz,
          deadlineMs,
          seed,
          scoreFromCell,
          blankCameras: blank,
          cameraFps,
          signal: io.signal,
          clock,
          log: (line) => io.err(`${line}\n`),
          record: { store, dir: episodesDir, spec, set },
          ...(takeoverLeader ? { takeover: takeoverLeader.takeover } : {}),
        });
      } finally {
        await takeoverLeader?.close();
        cellIo?.board.rolloutEnded(rig.read().mode, run?.result.episode);
        await rig.close?.();
      }
      const { result, score, recording } = run;
      const e = result.episode;
      const { rolloutId, recorded } = await storeRolloutOnRig(store, { spec, policy: policy.info, set }, run);
      const out: Record<string, unknown> = {
        ...report(result, String(rigType), rateHz, score),
        rolloutId,
        rehearsal: run.rehearsal ?? null,
        episodeFile: recording?.file ?? null,
        recording: recordingReport(recorded),
      };
      if (args.values.json) {
        io.out(`${JSON.stringify({ ...out, layoutSet: set.sha256 })}\n`);
      } else {
        const status =
          e.status !== 'valid'
            ? `${e.status}: ${e.reason ?? ''}`
            : score
              ? `valid, ${SCRIPTED_OPERATOR} scored ${score.progress.toFixed(2)} (${score.summary})`
              : 'valid, awaiting operator score';
        const kinds = Object.entries(result.safetyEventsByKind).map(([k, n]) => `${k} ${n}`);
        io.out(
          `layout ${e.layoutIndex} (tier ${e.tier}), ${policy.info.name} on ${String(rigType)}, ${seconds} s: ${status}\n` +
            (e.error ? `policy error: ${e.error}\n` : '') +
            `steps ${e.trajectory.steps} at ${out.achievedHz} Hz achieved (asked ${rateHz} Hz; wake late p50 ${out.wakeLateP50Ms} ms, p99 ${out.wakeLateP99Ms} ms, ${result.timing.lateSteps} late steps)\n` +
            `chunks ${String(out.chunks)} of ${String(out.horizon ?? '?')} rows; inference p50 ${(out.inferenceMs as { p50: number }).p50} ms, max ${(out.inferenceMs as { max: number }).max} ms; loop waited max ${(out.waitedMs as { max: number }).max} ms\n` +
            `${loopLine(result.loop)}\n` +
            (e.takeovers.length
              ? `assisted: the operator took over ${e.takeovers.length} time${e.takeovers.length === 1 ? '' : 's'} (${e.takeovers.map((t) => `${t.startS.toFixed(2)}–${t.endS.toFixed(2)} s`).join(', ')})\n`
              : '') +
            `safety events ${e.safetyEvents.length}${kinds.length ? ` (${kinds.join(', ')})` : ''}; rig ${result.finalMode} after the rollout\n` +
            `stored as rollout ${rolloutId}${run.rehearsal ? ` (${run.rehearsal})` : ''}\n` +
            recordingLine(recorded),
        );
      }
      if (e.status === 'valid') return e.error ? 1 : 0;
      if (io.signal.aborted && e.reason === 'stopped by the operator') return EXIT_INTERRUPTED;
      if (e.outcome === 'safety-stop') return 1;
      if (e.status === 'aborted') return EXIT_POLICY_UNAVAILABLE;
      return 1;
    } catch (e) {
      if (e instanceof StoreError) throw new UserError(e.message);
      throw e;
    } finally {
      store.close();
      await policy.close?.();
      await cellIo?.close();
    }
  },
};

/** The motor loop's statistics in one line (the rig thread's, or the rollout's own steps). */
export function loopLine(l: RigRolloutResult['loop']): string {
  return (
    `motor loop (${l.measuredBy}): ${l.achievedHz.toFixed(1)} Hz achieved of ${l.rateHz}; jitter p50 ${l.jitterP50Ms.toFixed(2)} ms, p99 ${l.jitterP99Ms.toFixed(2)} ms, max ${l.jitterMaxMs.toFixed(2)} ms; ` +
    `${l.lateCycles} late cycles, ${l.overruns} overruns, ${l.watchdogHolds} watchdog holds; longest command age ${l.longestCommandAgeMs.toFixed(0)} ms`
  );
}

function recordingReport(r: RecordingSummary | undefined): Record<string, unknown> | null {
  if (!r) return null;
  return {
    status: r.status,
    failure: r.failure ?? null,
    messages: r.messages,
    bytes: r.bytes,
    closeMs: round(r.closeMs, 1),
    messagesByTopic: r.messagesByTopic,
    rigCycles: r.rigCycles ?? null,
    problems: r.problems,
  };
}

export const commands: CliCommand[] = [rollout];
