/**
 * `tandem sim …`: run sim rollouts of a policy on hash-pinned layouts — one (`sim rollout`) or
 * every layout R times on worker threads (`sim sweep`). The work lives in src/sim and
 * src/rollout; this file reads files, opens the store and turns bad input into one sentence.
 */
import { EPISODE_CONTROL_HZ } from '../../rollout/run-episode.js';
import { mkdirSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { EpisodeWrites, recordSweepEpisode, sweepRolloutInput } from '../sweep-episodes.js';
import { progressLine, reportSweep, sweepRowOf } from '../sweep-report.js';
import {
  intOption,
  numberOption,
  requireString,
  UserError,
  type CliCommand,
  type CliIo,
  type ParsedCommandArgs,
} from '../command.js';
import type { Layout, TaskDefinition } from '../../tasks/types.js';
import type { LayoutSet } from '../../layouts/layout-set.js';
import { readLayoutSetFile, readUserFile } from './layouts.js';
import { layoutAt } from '../../layouts/layout-set.js';
import { LayoutSetError } from '../../layouts/errors.js';
import { getTask } from '../../tasks/registry.js';
import type { Policy } from '../../policy/contract.js';
import { PolicyUnavailableError } from '../../policy/contract.js';
import { PolicyLoadError } from '../../policy/errors.js';
import { knownPolicySpecs, openPolicy, PolicySpecError } from '../../rollout/policy-registry.js';
import type { Episode } from '../../rollout/episode.js';
import { runSimRollout, simRolloutCounts } from '../../sim/sim-rollout.js';
import { runSweep, SweepError, type SweepJob, type SweepRollout } from '../../sim/sweep.js';
import {
  drawLook,
  drawWorld,
  lookRecord,
  parseRandomizationSpec,
  RandomizationSpecError,
  RANDOMIZATION_KIND,
  type HashedRandomizationSpec,
  type RandomizedWorld,
} from '../../sim/randomization.js';
import {
  calibrationProblem,
  DEFAULT_SIM_CALIBRATION,
  engineNameProblem,
  SIM_CALIBRATION_KIND,
  simCalibrationHash,
  simCalibrationJson,
  withEngine,
  type SimCalibration,
  type SimEngine,
} from '../../sim/calibration.js';
import { CalibrationFileError, parseSimCalibration } from '../../sim/calibration-file.js';
import { withCommandStore } from '../station-store.js';
import { episodeFileName, openSimEpisodeRecorder, recordingLine } from '../episode-recording.js';
import type { Store } from '../../store/store.js';
import { EpisodeRecorder, RecordingError, type RecordingSummary } from '../../record/episode-recorder.js';

/** Opens a policy spec, or a UserError with one sentence. `warmUp`: see ThreadedPolicyOptions (wall-clock rigs). */
export async function openPolicyForCli(
  spec: string,
  io: Pick<CliIo, 'cwd'>,
  opts: { warmUp?: URL } = {},
): Promise<Policy> {
  try {
    return await openPolicy(spec, { cwd: io.cwd, warmUp: opts.warmUp });
  } catch (e) {
    if (e instanceof PolicySpecError || e instanceof PolicyLoadError || e instanceof PolicyUnavailableError)
      throw new UserError(e.message);
    throw e;
  }
}

/** --layouts FILE --layout I [--seconds S] of a one-rollout command (sim or rig): the layout, its task and the episode length. */
export function rolloutLayoutArgs(
  args: ParsedCommandArgs,
  io: CliIo,
): { set: LayoutSet; layout: Layout; task: TaskDefinition; seconds: number } {
  const { set } = readLayoutSetFile(io, requireString(args, 'layouts'));
  const index = intOption(args, 'layout', undefined, 0, 1_000_000);
  let layout;
  try {
    layout = layoutAt(set, index);
  } catch (e) {
    if (e instanceof LayoutSetError) throw new UserError(e.message);
    throw e;
  }
  const task = getTask(set.task);
  const seconds = numberOption(args, 'seconds', task.episodeSeconds, 0.02, 3600);
  return { set, layout, task, seconds };
}

/**
 * --calibration FILE: the sim calibration record to run on (default: the built-in one), then
 * --engine E (where the command takes it) as shorthand for that record's `engine` field.
 */
export function calibrationArg(args: ParsedCommandArgs, io: CliIo, option = 'calibration'): SimCalibration {
  const file = args.values[option];
  let cal = DEFAULT_SIM_CALIBRATION;
  if (file !== undefined) {
    if (typeof file !== 'string' || file.length === 0)
      throw new UserError(
        `--${option} needs a file name (save one with: tandem sim calibration > sim-calibration.json).`,
      );
    const { text } = readUserFile(io, file, 'sim calibration');
    try {
      cal = parseSimCalibration(text, file);
    } catch (e) {
      if (e instanceof CalibrationFileError) throw new UserError(e.message);
      throw e;
    }
  }
  const engine = args.values.engine;
  if (engine === undefined) return cal;
  const wrong = engineNameProblem(engine);
  if (wrong !== undefined) throw new UserError(`--${wrong}.`);
  const onEngine = withEngine(cal, engine as SimEngine);
  const problem = calibrationProblem(onEngine);
  if (problem !== undefined)
    throw new UserError(
      `With --engine ${String(engine)}, the sim calibration${file === undefined ? '' : ` ${String(file)}`}: ${problem}.`,
    );
  return onEngine;
}

/** --randomize FILE: a domain-randomization spec (src/sim/randomization.ts), or undefined without one. */
export function randomizeArg(args: ParsedCommandArgs, io: CliIo): HashedRandomizationSpec | undefined {
  const file = args.values.randomize;
  if (file === undefined) return undefined;
  if (typeof file !== 'string' || file.length === 0)
    throw new UserError(
      '--randomize needs a file name (a spec like {"format": "tandem.randomization/1", "seed": 1, "physics": {"objectMassScale": [0.8, 1.2]}}; docs/sim.md).',
    );
  const { path, text } = readUserFile(io, file, 'randomization spec');
  try {
    return parseRandomizationSpec(text, path);
  } catch (e) {
    if (e instanceof RandomizationSpecError) throw new UserError(e.message);
    throw e;
  }
}

/**
 * Where each rollout's world comes from: the base calibration, or one draw per (layout, repeat)
 * from a randomization spec. `calibrationsOf` stores what a rollout ran on (the drawn record and
 * the spec it came from, both hashed) and returns the ids to link to it.
 */
export interface SweepWorlds {
  readonly worldFor?: (job: SweepJob) => RandomizedWorld;
  calibrationsOf(layoutIndex: number, repeat: number): string[];
}

export function sweepWorlds(
  store: Store,
  base: SimCalibration,
  randomization: HashedRandomizationSpec | undefined,
): SweepWorlds {
  const baseSha = simCalibrationHash(base);
  if (!randomization) return { calibrationsOf: () => [baseSha] };
  store.putCalibration({
    sha256: randomization.sha256,
    kind: RANDOMIZATION_KIND,
    version: 1,
    canonicalJson: randomization.canonicalJson,
  });
  return {
    worldFor: (job) => drawWorld(base, randomization, job.layoutIndex, job.repeat),
    calibrationsOf: (layoutIndex, repeat) => {
      const drawn = drawWorld(base, randomization, layoutIndex, repeat).calibration;
      const sha = simCalibrationHash(drawn);
      store.putCalibration({
        sha256: sha,
        kind: SIM_CALIBRATION_KIND,
        version: drawn.version,
        canonicalJson: simCalibrationJson(drawn),
      });
      // The look its cameras drew with, as its own record: the pictures reproduce from the store too.
      const look = drawLook(randomization, layoutIndex, repeat);
      if (!look) return [sha, randomization.sha256];
      const lr = lookRecord(look);
      store.putCalibration(lr);
      return [sha, lr.sha256, randomization.sha256];
    },
  };
}

const RANDOMIZE_HELP = `  --randomize FILE    domain randomization: seeded [lo, hi] ranges for object mass and friction,
                      table and finger friction, gripper force, restitution, joint damping/friction/
                      armature, placement noise, and ("visual") camera pose, light and colours,
                      drawn once per rollout into its own sim calibration and look records
                      (stored and linked with the rollout; docs/sim.md)`;

const CALIBRATION_HELP = `  --calibration FILE  sim calibration record (JSON, the shape 'tandem sim calibration' prints);
                      default: the built-in record. Its hash is printed and stored with each rollout
  --engine E          rapier | mujoco: the physics engine (shorthand for the record's "engine" field;
                      rapier, the default, leaves the field out; mujoco is another record, another id)`;

/** The JSON line a rollout prints. */
export function episodeSummary(e: Episode): Record<string, unknown> {
  return {
    status: e.status,
    valid: e.status === 'valid',
    outcome: e.outcome,
    ...(e.reason ? { reason: e.reason } : {}),
    ...(e.error ? { error: e.error } : {}),
    progress: e.progress?.progress ?? null,
    counts: e.progress?.counts ?? {},
    summary: e.progress?.summary ?? null,
    task: e.taskId,
    layout: e.layoutIndex,
    tier: e.tier,
    seed: e.seed,
    policy: e.policyName,
    seconds: e.episodeSeconds,
    steps: e.trajectory.steps,
    // Chunks the policy answered and the episode used (chunk indices run 0, 1, … in step order).
    chunks: e.trajectory.steps > 0 ? e.trajectory.chunkIndex[e.trajectory.steps - 1] + 1 : 0,
    safetyEvents: e.safetyEvents.length,
    // Observations built for the policy (camera images are drawn only for these).
    observations: e.observations,
    finalStateHash: e.finalStateHash,
  };
}

const rollout: CliCommand = {
  path: ['sim', 'rollout'],
  summary: 'run one sim rollout of a policy on one layout and score it',
  help: `Usage: tandem sim rollout --layouts FILE --layout I --policy SPEC [--seconds S] [--seed K] [--calibration FILE] [--engine E] [--randomize FILE] [--record DIR] [--json]

Builds layout I of the (hash-verified) layout set in the sim (Rapier; MuJoCo with --engine mujoco),
runs the policy through the same rollout loop the real rig uses, and scores task progress from
the sim's end state.

  --layouts FILE   layout set written by 'tandem layouts sample'
  --layout I       layout index (0-based)
  --policy SPEC    ${knownPolicySpecs().join(' | ')}
  --seconds S      episode length (default: the task's, the same as on the real rig)
  --seed K         rollout seed: placement noise and the policy's seed (default 0)
${CALIBRATION_HELP}
${RANDOMIZE_HELP}
                      (here: the draw for this layout and --seed)
  --record DIR     write the episode file (the same MCAP format as rig rollouts; stamps are sim time
                   from the rollout's start; no camera topics) into DIR
  --json           print {"progress", "counts", "valid", "status", "outcome", "finalStateHash", "simCalibration", …};
                   counts are the task's plus "offTable", the objects that ended off the table, and per object
                   kind how each object ended ("objects:knocked-over:bottle-500ml", …; docs/report.md)

Exit codes: 0 ran its length, 1 invalid or aborted, or the policy's own error ended it (still scored).
Same layout, policy and seed → the same trajectory and finalStateHash, in any process.`,
  options: {
    layouts: { type: 'string' },
    layout: { type: 'string' },
    policy: { type: 'string' },
    seconds: { type: 'string' },
    seed: { type: 'string' },
    calibration: { type: 'string' },
    engine: { type: 'string' },
    randomize: { type: 'string' },
    record: { type: 'string' },
  },
  async run(args, io) {
    const { set, layout, task, seconds } = rolloutLayoutArgs(args, io);
    const seed = intOption(args, 'seed', 0, 0, 2 ** 31 - 1);
    const randomization = randomizeArg(args, io);
    const base = calibrationArg(args, io);
    const world = randomization ? drawWorld(base, randomization, layout.index, seed) : undefined;
    const calibration = world?.calibration ?? base;
    const spec = requireString(args, 'policy');
    const policy = await openPolicyForCli(spec, io);
    let recorder: EpisodeRecorder | undefined;
    let recorded: RecordingSummary | undefined;
    try {
      if (typeof args.values.record === 'string') {
        const dir = resolve(io.cwd, args.values.record);
        try {
          mkdirSync(dir, { recursive: true });
          recorder = await openSimEpisodeRecorder(
            join(
              dir,
              episodeFileName({ task: task.id, layoutIndex: layout.index, policyName: `sim-${policy.info.name}` }),
            ),
            {
              task,
              layoutSetSha256: set.sha256,
              layout,
              policySpec: spec,
              policy: policy.info,
              calibrationSha256: simCalibrationHash(calibration),
              controlHz: EPISODE_CONTROL_HZ,
              episodeSeconds: seconds,
              seed,
            },
          );
        } catch (e) {
          if (e instanceof RecordingError) throw new UserError(e.message);
          throw new UserError(`Cannot record into ${dir}: ${(e as Error).message}.`);
        }
      }
      let result;
      try {
        result = await runSimRollout({
          task,
          layout,
          policy,
          seed,
          episodeSeconds: seconds,
          calibration,
          placementSigma: world?.placement,
          look: world?.look,
          signal: io.signal,
          recording: recorder,
        });
      } finally {
        recorded = await recorder?.close({
          outcome: result?.episode.outcome ?? 'not-run',
          status: result?.episode.status ?? 'not-run',
        });
      }
      const e = result.episode;
      const counts = simRolloutCounts(e, task, layout);
      if (args.values.json) {
        io.out(
          `${JSON.stringify({ ...episodeSummary(e), counts: counts ?? {}, layoutSet: set.sha256, simCalibration: result.calibrationSha256, randomization: randomization?.sha256 ?? null, cameraFrames: result.cameraFrames, wallSeconds: result.wallMs / 1000, episodeFile: recorded?.file ?? null })}\n`,
        );
      } else {
        const head =
          e.status === 'valid' ? (e.progress?.summary ?? 'not scored') : `${e.status}: ${e.reason ?? e.error ?? ''}`;
        io.out(`layout ${e.layoutIndex} (tier ${e.tier}), ${policy.info.name}, seed ${seed}, ${seconds} s: ${head}\n`);
        if (counts && counts.offTable > 0)
          io.out(`${counts.offTable} object${counts.offTable === 1 ? '' : 's'} ended off the table.\n`);
        if (e.error) io.out(`policy error: ${e.error}\n`);
        io.out(
          `safety events ${e.safetyEvents.length}, real-time factor ${((seconds * 1000) / result.wallMs).toFixed(1)}×\nfinalStateHash ${e.finalStateHash}\n`,
        );
        io.out(`sim calibration ${calibration.name} v${calibration.version} ${result.calibrationSha256}\n`);
        if (randomization) io.out(`randomization ${randomization.sha256}\n`);
        io.out(recordingLine(recorded));
      }
      // A policy error is a valid, scored rollout, but the run did not go as asked: exit 1, as `rig rollout` does.
      return e.status === 'valid' && !e.error ? 0 : 1;
    } finally {
      await policy.close?.();
    }
  },
};

const sweep: CliCommand = {
  path: ['sim', 'sweep'],
  summary: 'run every layout of a set R times in the sim on worker threads; store and summarise',
  help: `Usage: tandem sim sweep --layouts FILE --policy SPEC [--repeats R] [--workers W | --queue redis://HOST:PORT[/DB]] [--seconds S] [--calibration FILE] [--engine E] [--randomize FILE] [--record DIR] [--data DIR] [--json]

Runs each layout of the (hash-verified) set R times (seed = repeat index: placement noise and the
policy's seed) on W worker threads, stores every rollout in the station store, and prints mean
task progress per tier with 95% bootstrap intervals over layouts, and how many objects ended
off the table (knocked or dropped off the edge; stored in each rollout's counts as "offTable").
A progress bar (done/total,
rollouts/s, ETA) runs on stderr. Ctrl-C stops cleanly: finished rollouts stay stored.
Invalid rollouts (a sim blow-up, a layout the sim cannot build) and aborted ones (a policy
outage) are stored with their reason and never scored; "policy errors" are rollouts the
policy's own bad actions ended early: valid, scored as they stood (see docs/rig-model.md).

  --layouts FILE   layout set written by 'tandem layouts sample'
  --policy SPEC    ${knownPolicySpecs().join(' | ')}
  --repeats R      rollouts per layout (default 1)
  --workers W      worker threads (default 1; one per core is the most that helps)
  --queue URL      run the rollouts on 'tandem sim worker' processes, on any machine, through a
                   BullMQ job queue on this Redis (docs/distributed-sweeps.md); this process
                   stores the results. Killed, the same command again resumes the sweep
  --attempts N     with --queue: tries per rollout before it is stored as invalid (default 3)
  --seconds S      episode length (default: the task's)
${CALIBRATION_HELP}
${RANDOMIZE_HELP}
  --record DIR     write each rollout's episode file into DIR (the rig rollouts' MCAP format; no camera
                   topics), registered in the store with its rollout. With --queue, workers send each
                   rollout's recording through Redis (by its SHA-256, checked; at most 256 MiB packed)
                   and this process writes the file; a recording that does not arrive intact leaves
                   its rollout stored without a file, and one sentence says why
  --json           print {"session", "rollouts", "stopped", "simCalibration", "tiers": [...]} instead of the table`,
  options: {
    layouts: { type: 'string' },
    policy: { type: 'string' },
    repeats: { type: 'string' },
    workers: { type: 'string' },
    seconds: { type: 'string' },
    calibration: { type: 'string' },
    engine: { type: 'string' },
    randomize: { type: 'string' },
    queue: { type: 'string' },
    attempts: { type: 'string' },
    record: { type: 'string' },
  },
  async run(args, io) {
    const { set } = readLayoutSetFile(io, requireString(args, 'layouts'));
    const queueUrl = args.values.queue;
    const recordDir = typeof args.values.record === 'string' ? resolve(io.cwd, args.values.record) : undefined;
    if (recordDir !== undefined) {
      // Before any rollout runs: a folder that cannot be made is one sentence, not a sweep of missing files.
      try {
        mkdirSync(recordDir, { recursive: true });
      } catch (e) {
        throw new UserError(`Cannot record into ${recordDir}: ${(e as Error).message}.`);
      }
    }
    if (queueUrl !== undefined && args.values.workers !== undefined)
      throw new UserError(
        "--workers is for a sweep on this machine's threads; with --queue, start 'tandem sim worker' processes instead.",
      );
    // The queue's module loads bullmq and ioredis (≈ 350 files): only a sweep with --queue pays for it.
    const queue = queueUrl === undefined ? undefined : await import('./sim-queue.js');
    const address = queue?.queueAddressArg(String(queueUrl));
    const task = getTask(set.task);
    const spec = requireString(args, 'policy');
    const repeats = intOption(args, 'repeats', 1, 1, 100_000);
    const workers = intOption(args, 'workers', 1, 1, 64);
    const seconds = numberOption(args, 'seconds', task.episodeSeconds, 0.02, 3600);
    const calibration = calibrationArg(args, io);
    const randomization = randomizeArg(args, io);
    // Open once here so a bad spec is one sentence before any worker starts.
    const probe = await openPolicyForCli(spec, io);
    const policyName = probe.info.name;
    const checkpoint = probe.info.checkpointSha256;
    await probe.close?.();
    const calibrationSha256 = simCalibrationHash(calibration);
    const attempts = intOption(args, 'attempts', 3, 1, 20);
    return withCommandStore(args.values, io, async (store) => {
      store.putLayoutSet(set);
      const policyRecord = store.upsertPolicy({ spec, name: policyName, checkpointSha256: checkpoint });
      store.putCalibration({
        sha256: calibrationSha256,
        kind: SIM_CALIBRATION_KIND,
        version: calibration.version,
        canonicalJson: simCalibrationJson(calibration),
      });
      const worlds = sweepWorlds(store, calibration, randomization);
      if (address && queue) {
        return queue.runQueuedSweepCommand(args, io, {
          store,
          set,
          spec,
          policyName,
          policyId: policyRecord.id,
          checkpointSha256: checkpoint ?? null,
          repeats,
          seconds,
          calibration,
          calibrationSha256,
          randomization,
          worlds,
          address,
          attempts,
          recordDir,
          task,
        });
      }
      const session = store.createSession({
        kind: 'sim-sweep',
        notes: `${spec} on ${set.task} v${set.version} (${set.sha256.slice(0, 12)}…), ${repeats} repeat(s), ${seconds} s`,
      });
      const startMs = Date.now();
      let lastDraw = 0;
      const draw = (done: number, total: number, force = false): void => {
        const now = Date.now();
        if (!force && now - lastDraw < 200) return;
        lastDraw = now;
        io.err(`\r${progressLine(done, total, (now - startMs) / 1000)}`);
      };
      const total = set.layouts.length * repeats;
      draw(0, total, true);
      let outcome;
      const writes = new EpisodeWrites(io);
      try {
        outcome = await runSweep({
          layoutSet: set,
          policySpec: spec,
          repeats,
          workers,
          seconds,
          calibration,
          worldFor: worlds.worldFor,
          cwd: io.cwd,
          signal: io.signal,
          record: recordDir !== undefined,
          onRollout: (r: SweepRollout) => {
            const episodeFile =
              recordDir && r.recorded
                ? recordSweepEpisode(store, recordDir, r, { set, spec, task, seconds }, writes)
                : undefined;
            const rolloutId = store.insertRollout({
              ...sweepRolloutInput(r, {
                policyId: policyRecord.id,
                layoutSetSha256: set.sha256,
                sessionId: session.id,
                calibrationSha256s: worlds.calibrationsOf(r.job.layoutIndex, r.job.repeat),
              }),
              episodeFile: episodeFile?.file ?? null,
            });
            episodeFile?.linkTo(rolloutId);
          },
          onProgress: (done, t) => draw(done, t),
        });
        await writes.done();
      } catch (e) {
        await writes.done();
        io.err('\n');
        store.endSession(session.id, { notes: `failed: ${(e as Error).message}` });
        if (e instanceof SweepError) throw new UserError(e.message);
        throw e;
      }
      draw(outcome.rollouts.length, total, true);
      io.err('\n');
      store.endSession(session.id);
      reportSweep(
        io,
        args.values.json === true,
        {
          sessionId: session.id,
          set,
          spec,
          policyName,
          total,
          stopped: outcome.stopped,
          calibrationSha256,
          wallMs: outcome.wallMs,
        },
        outcome.rollouts.map(sweepRowOf),
      );
      return outcome.stopped ? 130 : 0;
    });
  },
};

const calibrationCommand: CliCommand = {
  path: ['sim', 'calibration'],
  summary: 'print the sim calibration record as JSON (save, edit, pass back with --calibration)',
  help: `Usage: tandem sim calibration [--calibration FILE] [--engine E]

Prints the built-in sim calibration record (physics step, solver iterations, joint damping,
friction and armature, object scales, frictions, gripper force, restitution) as JSON on stdout,
and its id — the SHA-256 of its canonical JSON, what rollouts store — on stderr. Save it, edit
it, and pass it to 'tandem sim rollout' or 'tandem sim sweep' with --calibration FILE:

  tandem sim calibration > sim-calibration.json

  --calibration FILE  check FILE instead and print it (the same checks rollouts make) with its id
  --engine E          rapier | mujoco: the record on that physics engine (its "engine" field)`,
  options: { calibration: { type: 'string' }, engine: { type: 'string' } },
  run(args, io) {
    const calibration = calibrationArg(args, io);
    io.out(`${JSON.stringify(calibration, null, 2)}\n`);
    io.err(`sim calibration ${calibration.name} v${calibration.version}: ${simCalibrationHash(calibration)}\n`);
    return Promise.resolve(0);
  },
};

export const commands: CliCommand[] = [rollout, sweep, calibrationCommand];
